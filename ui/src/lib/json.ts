// Defensive readers for the JSON objects the server sends as JsonValue (tasks, cron
// jobs, rules, plugins): their fields are not typed by the protocol, so every read
// checks the type and falls back.

import type { JsonValue } from "../protocol";

export type JsonObject = { [key: string]: JsonValue | undefined };

export function asObject(v: JsonValue | undefined): JsonObject | null {
  return v && typeof v === "object" && !Array.isArray(v) ? (v as JsonObject) : null;
}

export function str(o: JsonObject | null, ...keys: string[]): string | null {
  if (!o) return null;
  for (const k of keys) {
    const v = o[k];
    if (typeof v === "string") return v;
    if (typeof v === "number" || typeof v === "boolean") return String(v);
  }
  return null;
}

export function num(o: JsonObject | null, ...keys: string[]): number | null {
  if (!o) return null;
  for (const k of keys) {
    const v = o[k];
    if (typeof v === "number" && Number.isFinite(v)) return v;
  }
  return null;
}

export function bool(o: JsonObject | null, key: string): boolean | null {
  const v = o?.[key];
  return typeof v === "boolean" ? v : null;
}

/** A short description of a status that may be a string or an object like {state, detail}. */
export function statusText(v: JsonValue | undefined): string {
  if (v == null) return "unknown";
  if (typeof v === "string") return v;
  if (typeof v !== "object" || Array.isArray(v)) return String(v);
  const o = v as JsonObject;
  const main = str(o, "state", "status", "kind");
  const detail = str(o, "detail", "error", "message", "reason");
  if (main && detail) return `${main}: ${detail}`;
  if (main) return main;
  const keys = Object.keys(o);
  if (keys.length === 1) {
    const inner = o[keys[0]!];
    const d = typeof inner === "string" ? inner : inner == null ? "" : JSON.stringify(inner);
    return d ? `${keys[0]}: ${d}` : keys[0]!;
  }
  return JSON.stringify(v);
}

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
