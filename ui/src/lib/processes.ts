// A chat's background processes (docs/processes.md): how a row says where one is, in
// which order they are listed, and its output as a terminal would have shown it.

import type { ProcessInfo } from "../protocol";

/** How a process's dot and words look: running, ended well, ended badly, stopped. */
export type ProcessTone = "running" | "ok" | "failed" | "stopped";

export function processTone(p: ProcessInfo): ProcessTone {
  if (p.status === "running") return "running";
  if (p.status === "stopped") return "stopped";
  return /^exit code 0\b/.test(p.ended ?? "") ? "ok" : "failed";
}

/** A running time: "4 s", "2 min 5 s", "1 h 3 min". */
export function elapsedText(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${s % 60} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

/** What the row says after the command: how long it has run, or how it ended. */
export function stateText(p: ProcessInfo, now: number): string {
  switch (p.status) {
    case "running":
      return `running · ${elapsedText(now - p.started_at)}`;
    case "stopped":
      return "stopped";
    case "exited": {
      const first = (p.ended ?? "").split("\n")[0]!.trim();
      return first || "exited";
    }
  }
}

/** Running ones first (in the order they started), then ended ones, the latest first. */
export function sortProcesses(list: ProcessInfo[]): ProcessInfo[] {
  const running = list.filter((p) => p.status === "running").sort((a, b) => a.id - b.id);
  const ended = list.filter((p) => p.status !== "running").sort((a, b) => b.id - a.id);
  return [...running, ...ended];
}

/**
 * Of two reports of one process, the later: an ended one over a running one, else the one
 * that had seen more output (a process only goes on, never back).
 */
export function newer(a: ProcessInfo, b: ProcessInfo): ProcessInfo {
  const endedA = a.status !== "running";
  const endedB = b.status !== "running";
  if (endedA !== endedB) return endedA ? a : b;
  return b.output_bytes >= a.output_bytes ? b : a;
}

/** Whether two reports of a process would show the same. */
export function sameInfo(a: ProcessInfo, b: ProcessInfo): boolean {
  return a.status === b.status && a.ended === b.ended && a.output_bytes === b.output_bytes;
}

// Escape sequences: CSI (colours, cursor moves, erasing), OSC (titles, links; ended by BEL
// or ST) and the two-character ones.
const ANSI = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|\u001b[@-Z\\-_]/g;

/**
 * Output as a terminal shows it: colours and other escape sequences dropped, and a line
 * rewritten with carriage returns (a progress bar) shown as it was last written. Controls
 * left are escaped when it is rendered.
 */
export function terminalText(output: string): string {
  return output
    .replace(ANSI, "")
    .replace(/\r+\n/g, "\n")
    .split("\n")
    .map((line) => {
      if (!line.includes("\r")) return line;
      // Each return goes back to the line's start and writes over what was there.
      let shown = "";
      for (const part of line.split("\r")) shown = part + shown.slice(part.length);
      return shown;
    })
    .join("\n");
}
