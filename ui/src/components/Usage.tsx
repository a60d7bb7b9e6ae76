// What a chat's model calls used and cost (docs/models.md "Cost"), in its header: the
// tokens ("1.2k in · 340 out") and the cost ("$0.0123 · today $0.40", a tooltip breaking it
// down). Read with `usage` when the chat opens and after each turn, and followed live: a
// turn's `turn_usage` (just before its `done`) gives its cost, the chat's and today's, and
// any chat's or task's turn moves today's.

import { useEffect, useState } from "react";
import { useEvents, useTransport } from "../app/context";
import { compactCount, costLabel, costTitle, type ChatUsage } from "../lib/cost";

export function UsageChips({ sessionId, running }: { sessionId: number; running: boolean }) {
  const t = useTransport();
  const [usage, setUsage] = useState<ChatUsage | null>(null);
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
          })),
      )
      .catch(() => live && setUsage(null));
    return () => {
      live = false;
    };
  }, [t, sessionId, running]);
  useEvents((_sid, e) => {
    if (e.type !== "turn_usage") return;
    setUsage((prev) => {
      if (e.session_id !== sessionId) return prev && { ...prev, today: e.today_cost_usd };
      const base = prev ?? { requests: 0, input: 0, output: 0, cost: 0, unpriced: 0, today: 0 };
      return {
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
  return (
    <>
      {usage.requests > 0 && (
        <span className="muted small usage" data-testid="token-usage" title={`${usage.requests} model calls: ${usage.input} tokens in, ${usage.output} out`}>
          {compactCount(usage.input)} in · {compactCount(usage.output)} out
        </span>
      )}
      {(usage.requests > 0 || usage.today > 0) && (
        <span
          className={usage.unpriced > 0 ? "small usage cost-usage unpriced" : "small usage cost-usage"}
          data-testid="cost-usage"
          data-unpriced={usage.unpriced}
          title={costTitle(usage)}
        >
          {costLabel(usage)}
        </span>
      )}
    </>
  );
}

/**
 * What every model call since local midnight cost, for Settings: `usage` of any chat says
 * it (`sessionId`: one the list has; none, nothing is read), then each `turn_usage`.
 */
export function useTodayCost(sessionId: number | null): number | null {
  const t = useTransport();
  const [today, setToday] = useState<number | null>(null);
  useEffect(() => {
    if (sessionId == null) return;
    let live = true;
    t.call({ cmd: "usage", session_id: sessionId }).then(
      (u) => live && u.today_cost_usd != null && setToday(u.today_cost_usd),
      () => {},
    );
    return () => {
      live = false;
    };
  }, [t, sessionId]);
  useEvents((_sid, e) => {
    if (e.type === "turn_usage") setToday(e.today_cost_usd);
  });
  return today;
}
