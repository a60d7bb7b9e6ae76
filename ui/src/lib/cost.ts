// What model calls cost, in words (docs/models.md "Cost and limits"): the chat header's
// usage chips and Settings' "spent today", against the daily budget when one is set.
// Dollars are the engine's (the prices known when each call was made); a call of a model
// with no known price is not in them, and the words say so.

import type { RateLimitInfo } from "../protocol";
import { rateLimitLine } from "./limits";

/** A chat's calls so far, and every call since local midnight. */
export interface ChatUsage {
  requests: number;
  input: number;
  output: number;
  /** What the chat's priced calls cost, in US dollars. */
  cost: number;
  /** Calls of models with no known price (not in `cost`). */
  unpriced: number;
  /** Every call since midnight (local time), of any chat or task. */
  today: number;
  /** The chat's last turn, as its `turn_usage` said (none until a turn ends here). */
  last?: { requests: number; input: number; output: number; cost: number; unpriced: number };
  /** The daily budget in US dollars, when one is set. */
  budget?: number;
  /** The rate limits the provider of the chat's model last stated, when it states any. */
  limits?: RateLimitInfo;
}

/** How far today is into the daily budget: past 80% warns, at or past it is over. */
export type BudgetLevel = "ok" | "warn" | "over";

export function budgetLevel(today: number, budget: number): BudgetLevel {
  if (today >= budget) return "over";
  return today > budget * 0.8 ? "warn" : "ok";
}

/** "$0.42 of $5.00 today". */
export const budgetLabel = (today: number, budget: number) => `${formatUsd(today)} of ${formatUsd(budget)} today`;

/** What part of the budget today spent, in whole percents ("8%", "112%"). */
export const budgetPercent = (today: number, budget: number) => `${Math.round((today / budget) * 100)}%`;

/** "$0.0123", "$0.40", "$12.50", "<$0.0001"; small sums with four decimals. */
export function formatUsd(x: number): string {
  if (!Number.isFinite(x) || x <= 0) return "$0.00";
  if (x < 0.0001) return "<$0.0001";
  if (x < 0.1) return `$${x.toFixed(4)}`;
  if (x < 10_000) return `$${x.toFixed(2)}`;
  return `$${Math.round(x).toLocaleString("en-US")}`;
}

/** Token counts as the header shows them: 950, 1.2k, 34k. */
export const compactCount = (n: number) => (n >= 10_000 ? `${Math.round(n / 1000)}k` : n >= 1000 ? `${(n / 1000).toFixed(1)}k` : String(n));

const calls = (n: number) => `${n.toLocaleString("en-US")} model call${n === 1 ? "" : "s"}`;

/**
 * The header's cost: "$0.0123 · today $0.40"; "+" after a sum that leaves unpriced calls
 * out; "no price · today $0.40" when none of the chat's calls had a price; "today $0.40"
 * before the chat made any; "today $0.40 of $5.00" with a daily budget.
 */
export function costLabel(u: ChatUsage): string {
  const today = `today ${formatUsd(u.today)}${u.budget != null ? ` of ${formatUsd(u.budget)}` : ""}`;
  if (u.requests === 0) return today;
  if (u.unpriced >= u.requests) return `no price · ${today}`;
  return `${formatUsd(u.cost)}${u.unpriced > 0 ? "+" : ""} · ${today}`;
}

/**
 * The cost chip's tooltip: the chat's tokens and cost, the last turn's, today's (against
 * the daily budget), what is left out, and the provider's rate limits (resets from `now`).
 */
export function costTitle(u: ChatUsage, now = Date.now()): string {
  const lines = [`This chat: ${calls(u.requests)}, ${u.input.toLocaleString("en-US")} tokens in, ${u.output.toLocaleString("en-US")} out — ${formatUsd(u.cost)}`];
  if (u.last) {
    lines.push(
      `Last turn: ${calls(u.last.requests)}, ${u.last.input.toLocaleString("en-US")} tokens in, ${u.last.output.toLocaleString("en-US")} out — ${formatUsd(u.last.cost)}${u.last.unpriced > 0 ? ` (${u.last.unpriced} unpriced)` : ""}`,
    );
  }
  lines.push(`Today, every chat and task: ${formatUsd(u.today)}`);
  if (u.budget != null) {
    const level = budgetLevel(u.today, u.budget);
    lines.push(
      `Daily budget: ${formatUsd(u.budget)}, ${budgetPercent(u.today, u.budget)} spent — ${
        level === "over" ? "passed: the next turn asks first" : "a turn that would pass it asks first"
      }`,
    );
  }
  if (u.unpriced > 0) {
    lines.push(
      `${calls(u.unpriced)} of models with no known price ${u.unpriced === 1 ? "is" : "are"} not counted: set their price in config.toml's [models.prices].`,
    );
  }
  lines.push("At the prices known when each call was made.");
  if (u.limits) lines.push(`Rate limits, ${rateLimitLine(u.limits, now)}`);
  return lines.join("\n");
}
