// The providers' rate limits in words (docs/models.md "Cost and limits"): what their last
// response said is left of the requests and tokens of the current window, and when it is
// whole again, for the chat header's cost tooltip and Settings → Cost and limits.

import type { LimitInfo, RateLimitInfo } from "../protocol";

/** A wait as people read it: "45s", "2m 10s", "6m", "1h 5m", "2d 3h" (seconds rounded up). */
export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.ceil(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return s % 60 ? `${m}m ${s % 60}s` : `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 24) return m % 60 ? `${h}h ${m % 60}m` : `${h}h`;
  const d = Math.floor(h / 24);
  return h % 24 ? `${d}d ${h % 24}h` : `${d}d`;
}

/** A limit's count: 41, 1.2k, 28.5k, 30k, 2M. */
export function limitCount(n: number): string {
  const short = (x: number, unit: string) => `${x.toFixed(1).replace(/\.0$/, "")}${unit}`;
  if (n >= 1_000_000) return short(n / 1_000_000, "M");
  if (n >= 1000) return short(n / 1000, "k");
  return String(n);
}

/** "41/50 requests", "41 requests" (no size stated), "?/50 requests"; null when it says nothing. */
function part(l: LimitInfo | undefined, noun: string): string | null {
  if (!l || (l.remaining == null && l.limit == null)) return null;
  const left = l.remaining == null ? "?" : limitCount(l.remaining);
  return `${left}${l.limit != null ? `/${limitCount(l.limit)}` : ""} ${noun}`;
}

/** When the window is whole again: "resets in 6m", "requests reset in 6m, tokens in 12s". */
function resets(r: RateLimitInfo, now: number): string | null {
  const when = (at: number) => (at > now ? `in ${formatDuration(at - now)}` : "by now");
  const req = r.requests?.resets_at;
  const tok = r.tokens?.resets_at;
  if (req != null && tok != null && Math.abs(req - tok) >= 1000) return `requests reset ${when(req)}, tokens ${when(tok)}`;
  const at = req ?? tok;
  if (at == null) return null;
  return at > now ? `resets in ${formatDuration(at - now)}` : "reset by now";
}

/** What is left and when it resets: "41/50 requests, 28.5k/30k tokens left; resets in 6m". */
export function rateLimitText(r: RateLimitInfo, now: number): string {
  const parts = [part(r.requests, "requests"), part(r.tokens, "tokens")].filter((p): p is string => p != null);
  const left = parts.length ? `${parts.join(", ")} left` : "no limits stated";
  const reset = resets(r, now);
  return reset ? `${left}; ${reset}` : left;
}

/** The same, after the provider: "openai: 41/50 requests, 28.5k/30k tokens left; resets in 6m". */
export function rateLimitLine(r: RateLimitInfo, now: number): string {
  return `${r.provider}: ${rateLimitText(r, now)}`;
}

/** Whether what is left is low (a tenth or less of either window): the line is marked. */
export function rateLimitLow(r: RateLimitInfo): boolean {
  const low = (l?: LimitInfo) => l?.remaining != null && l.limit != null && l.limit > 0 && l.remaining <= l.limit / 10;
  return low(r.requests) || low(r.tokens);
}

/** A provider's latest limits in a list kept by provider (a newer statement replaces the older). */
export function withLimits(list: RateLimitInfo[], r: RateLimitInfo): RateLimitInfo[] {
  const i = list.findIndex((x) => x.provider === r.provider);
  if (i < 0) return [...list, r].sort((a, b) => a.provider.localeCompare(b.provider));
  if (list[i]!.seen_at > r.seen_at) return list;
  return list.map((x, j) => (j === i ? r : x));
}
