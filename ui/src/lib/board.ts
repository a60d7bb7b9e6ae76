// The board of agents in words (docs/board.md): each agent's state, where it works, how
// long it has worked, what it used and cost, what it changed, and which agents a filter
// shows. Pure, so the wording and the rules are unit-tested.

import type { AgentState, BoardAgent } from "../protocol";
import { formatUsd } from "./cost";

/** What each state is called, and what it means (the badge's tooltip). */
export const STATE_INFO: Record<AgentState, { label: string; meaning: string }> = {
  queued: { label: "queued", meaning: "Its turn waits for a free place: as many agents as Settings → Agents allows already run." },
  working: { label: "working", meaning: "Its turn is running." },
  waiting: { label: "waiting", meaning: "An approval or a question of it waits for you in the Inbox." },
  done: { label: "done", meaning: "Its last turn answered." },
  failed: { label: "failed", meaning: "Its last turn failed: the model could not be reached, refused, or the step budget ran out." },
  stopped: { label: "stopped", meaning: "Its last turn was stopped." },
  interrupted: { label: "interrupted", meaning: "The process running it ended mid-turn (a crash, a kill); reopening the app picks it up." },
  idle: { label: "idle", meaning: "No turn yet." },
};

/** The board's filters: every agent, those at work or waiting, those whose turn ended. */
export type BoardFilter = "all" | "active" | "finished";

const ACTIVE: ReadonlySet<AgentState> = new Set(["queued", "working", "waiting"]);
const FINISHED: ReadonlySet<AgentState> = new Set(["done", "failed", "stopped", "interrupted"]);

export function inFilter(a: BoardAgent, filter: BoardFilter): boolean {
  if (filter === "active") return ACTIVE.has(a.state);
  if (filter === "finished") return FINISHED.has(a.state);
  return true;
}

export function filterAgents(agents: readonly BoardAgent[], filter: BoardFilter): BoardAgent[] {
  return agents.filter((a) => inFilter(a, filter));
}

/** The badge's text: the state, and for `waiting` how many items wait ("waiting · 2"). */
export function stateText(a: BoardAgent): string {
  return a.state === "waiting" && a.waiting > 0 ? `waiting · ${a.waiting}` : STATE_INFO[a.state].label;
}

/** Whether its time worked grows while the board is shown (its turn runs). */
export function isTicking(a: BoardAgent): boolean {
  return a.state === "working" || (a.state === "waiting" && a.turn_started_at != null);
}

/**
 * How long it has worked at `now`: `active_ms` as the engine counted it when the board was
 * read (`fetchedAt`, its running turn included), plus the time since for a running turn.
 */
export function workedMs(a: BoardAgent, fetchedAt: number, now: number): number {
  return a.active_ms + (isTicking(a) ? Math.max(0, now - fetchedAt) : 0);
}

/** "–" (never worked), "45s", "3m 12s", "1h 05m", "2d 4h". */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 1000) return ms > 0 ? "0s" : "–";
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, "0")}s`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h}h ${String(m % 60).padStart(2, "0")}m`;
  return `${Math.floor(h / 24)}d ${h % 24}h`;
}

/** Token counts: 950, 41.2k, 1.3M. */
export function formatTokens(n: number): string {
  if (!Number.isFinite(n) || n <= 0) return "0";
  if (n < 1000) return String(Math.round(n));
  const short = (x: number) => x.toFixed(1).replace(/\.0$/, "");
  if (n < 999_950) return `${short(n / 1000)}k`;
  return `${short(n / 1_000_000)}M`;
}

/** Its tokens in and out together ("–" before any model call). */
export function tokensText(a: BoardAgent): string {
  const n = a.input_tokens + a.output_tokens;
  return n > 0 ? formatTokens(n) : "–";
}

/** Its cost: "$0.0123", "$0.40+" (some calls had no known price), "no price", "–" (no calls). */
export function costText(a: BoardAgent): string {
  if (a.cost_usd > 0) return `${formatUsd(a.cost_usd)}${a.unpriced > 0 ? "+" : ""}`;
  if (a.unpriced > 0) return "no price";
  return a.input_tokens + a.output_tokens > 0 ? formatUsd(0) : "–";
}

export function costTitle(a: BoardAgent): string {
  const tokens = `${a.input_tokens.toLocaleString("en-US")} tokens in, ${a.output_tokens.toLocaleString("en-US")} out`;
  const priced = `${formatUsd(a.cost_usd)} at the prices known when each call was made`;
  const left =
    a.unpriced > 0 ? `; ${a.unpriced} ${a.unpriced === 1 ? "call" : "calls"} of models with no known price not counted (config.toml's [models.prices] sets them)` : "";
  return `${tokens} — ${priced}${left}`;
}

/** What it changed: "3 files +41 −7", "–" when nothing. */
export function changesText(a: BoardAgent): string {
  const c = a.changes;
  if (c.files === 0) return "–";
  return `${c.files} ${c.files === 1 ? "file" : "files"} +${c.added} −${c.removed}`;
}

export function changesTitle(a: BoardAgent): string {
  const c = a.changes;
  if (c.files === 0) return "No files changed";
  const how = a.worktree ? "in its worktree, since the worktree was made" : "from before its first change to after its last";
  return `${c.files} ${c.files === 1 ? "file" : "files"} changed ${how}: ${c.added} ${c.added === 1 ? "line" : "lines"} added, ${c.removed} removed`;
}

/** Where it works: its folder, or for a worktree the person's folder and the worktree's name. */
export function whereText(a: BoardAgent): string {
  if (a.worktree) return `${a.source ?? a.folder ?? "?"} · worktree ${a.worktree}`;
  return a.folder ?? "the server's folder";
}

/** The board's title for an agent, "Untitled" when it has none. */
export const agentTitle = (a: BoardAgent) => a.title.trim() || "Untitled";

/** Its last message on one line (newlines and runs of spaces as one space). */
export function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/** How many agents each filter shows. */
export function filterCounts(agents: readonly BoardAgent[]): Record<BoardFilter, number> {
  return {
    all: agents.length,
    active: agents.filter((a) => ACTIVE.has(a.state)).length,
    finished: agents.filter((a) => FINISHED.has(a.state)).length,
  };
}
