// Settings → Cost and limits (docs/models.md "Cost and limits"): what today's model calls
// cost (the `settings` reply's, then each turn's `turn_usage`), the daily budget
// (`set_daily_budget`) with today against it, the context threshold at which older turns
// are summarised (`set_compact_at`), and the providers' rate limits (RateLimits.tsx).

import { useEffect, useRef, useState } from "react";
import { useEvents, useTransport, type Loadable } from "../../app/context";
import { budgetLabel, budgetLevel, formatUsd } from "../../lib/cost";
import { errorText } from "../../lib/format";
import { Load, Section, type SettingsReply } from "./Section";
import { RateLimits } from "./RateLimits";

export function Limits({ data, reload }: { data: Loadable<SettingsReply>; reload: () => void }) {
  return (
    <Section title="Cost and limits" id="s-limits">
      <Load data={data} retry={reload}>
        {(s) => <LimitsBody settings={s} />}
      </Load>
    </Section>
  );
}

function LimitsBody({ settings: s }: { settings: SettingsReply }) {
  const [today, setToday] = useState(s.today_cost_usd);
  useEffect(() => setToday(s.today_cost_usd), [s.today_cost_usd]);
  useEvents((_sid, e) => {
    if (e.type === "turn_usage") setToday(e.today_cost_usd);
  });
  const [budget, setBudget] = useState<number | null>(s.daily_budget_usd ?? null);
  useEffect(() => setBudget(s.daily_budget_usd ?? null), [s.daily_budget_usd]);
  return (
    <>
      <div className="small today-cost" data-testid="today-cost">
        Spent today: <strong>{formatUsd(today)}</strong>{" "}
        <span className="muted">
          — every model call since midnight, of any chat or task, at the prices known when it was made; calls of models with no known price are not
          counted (config.toml's <code>[models.prices]</code> sets them).
        </span>
      </div>
      <BudgetField budget={budget} onSaved={setBudget} />
      {budget != null && <BudgetBar today={today} budget={budget} />}
      <CompactAt initial={s.compact_at} />
      <RateLimits initial={s.rate_limits ?? []} />
    </>
  );
}

/** What the field says: a number of dollars, none (empty), or not an amount at all. */
function parseUsd(text: string): { usd: number | null } | null {
  const t = text.trim().replace(/^\$\s*/, "");
  if (t === "") return { usd: null };
  const usd = Number(t);
  return Number.isFinite(usd) ? { usd } : null;
}

/** The daily budget, saved on Enter, on leaving the field, or with Save; the engine's refusal shown below it. */
function BudgetField({ budget, onSaved }: { budget: number | null; onSaved: (usd: number | null) => void }) {
  const t = useTransport();
  const [text, setText] = useState(budget == null ? "" : String(budget));
  useEffect(() => setText(budget == null ? "" : String(budget)), [budget]);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  // Enter and then leaving the field save once.
  const saving = useRef(false);
  const save = async () => {
    if (saving.current) return;
    const parsed = parseUsd(text);
    if (!parsed) {
      setError(`"${text.trim()}" is not an amount: write US dollars, like 5 or 12.50, or leave it empty for no budget.`);
      return;
    }
    if (parsed.usd === budget) {
      setError(null);
      return;
    }
    saving.current = true;
    setBusy(true);
    setError(null);
    try {
      const r = await t.call({ cmd: "set_daily_budget", ...(parsed.usd != null ? { usd: parsed.usd } : {}) });
      onSaved(r.usd ?? null);
    } catch (e) {
      setError(errorText(e));
    } finally {
      saving.current = false;
      setBusy(false);
    }
  };
  return (
    <>
      <form
        className="row budget-form"
        onSubmit={(e) => {
          e.preventDefault();
          void save();
        }}
      >
        <label className="field inline">
          <span>Daily budget</span>
          <span className="money-input">
            <span aria-hidden="true">$</span>
            <input
              data-testid="daily-budget"
              inputMode="decimal"
              placeholder="none"
              aria-describedby="daily-budget-hint"
              aria-invalid={error != null}
              value={text}
              onChange={(e) => setText(e.target.value)}
              onBlur={() => void save()}
            />
          </span>
        </label>
        <button type="submit" className="btn" data-testid="daily-budget-save" disabled={busy}>
          {busy ? "Saving…" : "Save"}
        </button>
      </form>
      <div className="muted small" id="daily-budget-hint">
        US dollars a day, from local midnight; empty: no budget. A turn that would pass it asks you first, in its chat and the Inbox.
      </div>
      {error && (
        <div className="error-text small" role="alert" data-testid="daily-budget-error">
          {error}
        </div>
      )}
    </>
  );
}

/** "$0.42 of $5.00 today" with a bar, marked past 80% of the budget. */
function BudgetBar({ today, budget }: { today: number; budget: number }) {
  const level = budgetLevel(today, budget);
  const label = budgetLabel(today, budget);
  return (
    <div className={`budget-spent small budget-${level}`} data-testid="budget-spent" data-level={level}>
      <span className="budget-bar" role="meter" aria-label="Spent today, of the daily budget" aria-valuemin={0} aria-valuemax={budget} aria-valuenow={today} aria-valuetext={label}>
        <span className="budget-bar-fill" style={{ width: `${Math.min(100, Math.round((today / budget) * 1000) / 10)}%` }} />
      </span>
      <span>{label}</span>
    </div>
  );
}

const PERCENTS = [50, 55, 60, 65, 70, 75, 80, 85, 90, 95];

/** The context threshold: a percent of the model's window, or only when asked (0). */
function CompactAt({ initial }: { initial: number }) {
  const t = useTransport();
  const [value, setValue] = useState(initial);
  useEffect(() => setValue(initial), [initial]);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  // A value config.toml has that the list lacks (72, 100) is offered too.
  const options = value === 0 || PERCENTS.includes(value) ? PERCENTS : [...PERCENTS, value].sort((a, b) => a - b);
  const change = async (percent: number) => {
    const before = value;
    setValue(percent);
    setBusy(true);
    setError(null);
    try {
      const r = await t.call({ cmd: "set_compact_at", percent });
      setValue(r.percent);
    } catch (e) {
      setValue(before);
      setError(errorText(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <label className="field inline compact-at">
        <span>Summarise older turns at</span>
        <select data-testid="compact-at" aria-describedby="compact-at-hint" value={value} disabled={busy} onChange={(e) => void change(Number(e.target.value))}>
          {options.map((p) => (
            <option key={p} value={p}>
              {p}% of the context window
            </option>
          ))}
          <option value={0}>Only when asked</option>
        </select>
      </label>
      <div className="muted small" id="compact-at-hint">
        When a chat's next request would fill this much of its model's window, its older turns are folded into a summary (undone from the chat
        header's context meter, which also compacts on request).
      </div>
      {error && (
        <div className="error-text small" role="alert" data-testid="compact-at-error">
          {error}
        </div>
      )}
    </>
  );
}
