// Small formatting helpers shared by the screens: timestamps, errors, and JSON shown as
// text (tool arguments, plugin configuration).

import type { JsonValue } from "../protocol";

/** Timestamps from the store are milliseconds; tolerate seconds too. */
export function formatTime(t: number | null | undefined): string {
  if (t == null || !Number.isFinite(t) || t <= 0) return "—";
  const ms = t < 1e11 ? t * 1000 : t;
  const d = new Date(ms);
  const now = new Date();
  const sameDay = d.toDateString() === now.toDateString();
  return sameDay
    ? d.toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" })
    : d.toLocaleString(undefined, { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
}

export function pretty(v: JsonValue | undefined): string {
  if (v === undefined) return "";
  if (typeof v === "string") return v;
  try {
    return JSON.stringify(v, null, 2);
  } catch {
    return String(v);
  }
}

export function errorText(e: unknown): string {
  if (e instanceof Error) return e.message;
  return String(e);
}
