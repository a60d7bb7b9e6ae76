// What fills a chat's context, in words (docs/agent-loop.md "Long conversations"): the
// chat header's context meter and its popover. The numbers are the engine's
// (`context_usage`): the next request's estimate, part by part, over the model's window.

import type { ContextPart, Reply } from "../protocol";

export type ContextUsage = Omit<Extract<Reply, { cmd: "context_usage" }>, "cmd">;

/** The parts in the order the popover lists them, with their names for a person. */
export const PART_LABELS: Record<string, string> = {
  system: "System prompt",
  instructions: "AGENTS.md & skills",
  tools: "Tool definitions",
  summary: "Summary",
  messages: "Messages",
  tool_results: "Tool results",
};

/** The parts to list: the known ones in their order (a summary only when there is one), then any new. */
export function partsShown(parts: ContextPart[]): { what: string; label: string; tokens: number }[] {
  const order = Object.keys(PART_LABELS);
  return [...parts]
    .filter((p) => p.what !== "summary" || p.tokens > 0)
    .sort((a, b) => rank(order, a.what) - rank(order, b.what))
    .map((p) => ({ what: p.what, label: PART_LABELS[p.what] ?? p.what.replace(/_/g, " "), tokens: p.tokens }));
}

function rank(order: string[], what: string) {
  const i = order.indexOf(what);
  return i < 0 ? order.length : i;
}

/** Token counts as the meter shows them: 950, 3k, 12.3k, 128k, 1.2M. */
export function tokenCount(n: number): string {
  if (n < 1000) return String(Math.max(0, Math.round(n)));
  if (n < 100_000) return `${trim((n / 1000).toFixed(1))}k`;
  if (n < 1_000_000) return `${Math.round(n / 1000)}k`;
  return `${trim((n / 1_000_000).toFixed(1))}M`;
}

const trim = (s: string) => s.replace(/\.0$/, "");

/** How full the window is, in percent (rounded down, so 100 means full). */
export function percentOf(tokens: number, window: number): number {
  if (window <= 0) return 0;
  return Math.floor((100 * tokens) / window);
}

/**
 * How near the context is to being summarised: "ok", "near" (past four fifths of the
 * threshold) or "over" (at or past it). With no threshold (0: only when asked), the
 * window itself is the limit.
 */
export function meterLevel(u: Pick<ContextUsage, "tokens" | "window" | "compact_at">): "ok" | "near" | "over" {
  const limit = (u.window * (u.compact_at > 0 ? u.compact_at : 100)) / 100;
  if (limit <= 0) return "ok";
  const r = u.tokens / limit;
  return r >= 1 ? "over" : r >= 0.8 ? "near" : "ok";
}

/** "Summarises at 80%", or "Only when asked" when the chat is never summarised unasked. */
export function thresholdText(compactAt: number): string {
  return compactAt > 0 ? `Summarises at ${compactAt}%` : "Only when asked";
}

/** The meter's tooltip: the numbers whole, the percent and the threshold. */
export function meterTitle(u: ContextUsage): string {
  const n = (x: number) => x.toLocaleString("en-US");
  const when = u.compact_at > 0 ? `summarised at ${u.compact_at}%` : "summarised only when asked";
  return `Context: ${n(u.tokens)} of ${n(u.window)} tokens (${percentOf(u.tokens, u.window)}%), ${when}`;
}
