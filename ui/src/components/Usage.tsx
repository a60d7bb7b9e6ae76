// What a chat's model calls used and cost (docs/models.md "Cost and limits"), in its header:
// the tokens ("1.2k in · 340 out") and the cost ("$0.0123 · today $0.40", against the daily
// budget when one is set: "today $0.40 of $5.00", marked past 80% of it), a tooltip
// breaking it down with the provider's rate limits. Read with `usage` when the chat opens
// and after each turn, and followed live: a turn's `turn_usage` (just before its `done`)
// gives its cost, the chat's and today's, any chat's or task's turn moves today's, and a
// `rate_limits` event (this chat's, or another's of the same provider) the limits.

import { useEffect, useState } from "react";
import { useEvents, useTransport } from "../app/context";
import { budgetLevel, compactCount, costLabel, costTitle, type ChatUsage } from "../lib/cost";

export function UsageChips({ sessionId, running }: { sessionId: number; running: boolean }) {
  const t = useTransport();
  const [usage, setUsage] = useState<ChatUsage | null>(null);
  // The tooltip's "resets in …" counts from when the pointer came over the chip.
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (running) return;
    let live = true;
    t.call({ cmd: "usage", session_id: sessionId })
      .then(
        (u) =>
          live &&
          setUsage((prev) => ({
            requests: u.requests,
            input: u.input_tokens,
            output: u.output_tokens,
            // An older server says nothing of cost: none shown.
            cost: u.cost_usd ?? 0,
            unpriced: u.unpriced ?? u.requests,
            today: u.today_cost_usd ?? 0,
            ...(prev?.last ? { last: prev.last } : {}),
            ...(u.daily_budget_usd != null ? { budget: u.daily_budget_usd } : {}),
            ...(u.rate_limits ? { limits: u.rate_limits } : {}),
          })),
      )
      .catch(() => live && setUsage(null));
    return () => {
      live = false;
    };
  }, [t, sessionId, running]);
  useEvents((_sid, e) => {
    if (e.type === "rate_limits") {
      setUsage((prev) =>
        prev && (e.session_id === sessionId || prev.limits?.provider === e.limits.provider) && !(prev.limits && prev.limits.seen_at > e.limits.seen_at)
          ? { ...prev, limits: e.limits }
          : prev,
      );
      return;
    }
    if (e.type !== "turn_usage") return;
    setUsage((prev) => {
      if (e.session_id !== sessionId) return prev && { ...prev, today: e.today_cost_usd };
      const base: ChatUsage = prev ?? { requests: 0, input: 0, output: 0, cost: 0, unpriced: 0, today: 0 };
      return {
        ...base,
        requests: base.requests + e.requests,
        input: base.input + e.input_tokens,
        output: base.output + e.output_tokens,
        cost: e.chat_cost_usd,
        unpriced: base.unpriced + e.unpriced,
        today: e.today_cost_usd,
        last: { requests: e.requests, input: e.input_tokens, output: e.output_tokens, cost: e.cost_usd, unpriced: e.unpriced },
      };
    });
  });
  if (!usage) return null;
  const level = usage.budget != null ? budgetLevel(usage.today, usage.budget) : null;
  const classes = ["small usage cost-usage", usage.unpriced > 0 && "unpriced", level && level !== "ok" && `budget-${level}`].filter(Boolean).join(" ");
  return (
    <>
      {usage.requests > 0 && (
        <span className="muted small usage" data-testid="token-usage" title={`${usage.requests} model calls: ${usage.input} tokens in, ${usage.output} out`}>
          {compactCount(usage.input)} in · {compactCount(usage.output)} out
        </span>
      )}
      {(usage.requests > 0 || usage.today > 0 || usage.budget != null) && (
        <span
          className={classes}
          data-testid="cost-usage"
          data-unpriced={usage.unpriced}
          {...(level ? { "data-budget": level } : {})}
          {...(usage.limits ? { "data-rate-limits": usage.limits.provider } : {})}
          title={costTitle(usage, now)}
          onMouseEnter={() => setNow(Date.now())}
        >
          {costLabel(usage)}
        </span>
      )}
    </>
  );
}
