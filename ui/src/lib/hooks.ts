// Hooks in the chat (docs/hooks.md): the words a hook's run is shown with — its script's
// name, what it said, how long it took — and the error a blocked message comes back as.
// Pure, so the wording is unit-tested. A command and its message come from config.toml
// or a project's `.skald/hooks.json`: they are only ever rendered as text.

import type { HookRun } from "../protocol";

/** The `error` event's words when a UserPromptSubmit hook blocked the message sent. */
export const BLOCKED_PROMPT = "A UserPromptSubmit hook blocked this message: ";

/** The hook's reason when `message` says a message was blocked, else null. */
export function blockedPromptReason(message: string): string | null {
  return message.startsWith(BLOCKED_PROMPT) ? message.slice(BLOCKED_PROMPT.length) : null;
}

/** A run that ran, went on and said nothing: shown only as "N hooks ran". */
export function isQuiet(run: HookRun): boolean {
  return run.outcome === "ok" && run.message.trim() === "";
}

/** Programs that run the script named after them (`sh guard.sh`, `npx prettier`). */
const RUNNERS = new Set([
  "sh", "bash", "zsh", "dash", "ksh", "fish", "env", "exec", "command", "sudo", "nice", "nohup", "time",
  "node", "deno", "bun", "bunx", "npx", "pnpx", "pnpm", "yarn", "uv", "uvx", "run", "ruby", "perl", "php",
  "pwsh", "powershell", "cmd", "osascript",
]);
const isRunner = (word: string) => RUNNERS.has(word) || /^python[0-9.]*$/.test(word) || /^pypy[0-9.]*$/.test(word);

/** The command's words, quotes taken off (a shell's rules, roughly: enough to name it). */
function words(command: string): string[] {
  const word = /(?:"(?:[^"\\]|\\.)*"|'[^']*'|[^\s"']+)+/g;
  const part = /"((?:[^"\\]|\\.)*)"|'([^']*)'|([^\s"']+)/g;
  return (command.match(word) ?? []).map((w) => [...w.matchAll(part)].map((m) => m[1] ?? m[2] ?? m[3] ?? "").join(""));
}

const lastPart = (path: string) => path.replace(/[\\/]+$/, "").split(/[\\/]/).pop() ?? path;

const MAX_NAME = 40;

/**
 * What a hook's command is called in a row: its script's file name ("guard.sh" for
 * `sh ~/bin/guard.sh`, "check.py" for `"$CLAUDE_PROJECT_DIR"/hooks/check.py --strict`,
 * "prettier" for `npx prettier --write …`), else its first 40 characters.
 */
export function scriptName(command: string, depth = 0): string {
  const all = words(command.trim());
  let i = 0;
  // A leading `cd DIR &&` is where it runs, not what.
  if (all[0] === "cd" && (all[2] === "&&" || all[2] === ";")) i = 3;
  for (; i < all.length; i++) {
    const w = all[i]!;
    if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(w) || w.startsWith("-")) continue;
    const name = lastPart(w);
    if (isRunner(name)) continue;
    // `sh -c 'python3 x.py'`: the script is inside the quotes.
    if (/\s/.test(w) && depth < 2) return scriptName(w, depth + 1);
    if (name === "" || /^[|&;<>]/.test(name)) break;
    return cut(name);
  }
  return cut(command.trim());
}

function cut(s: string): string {
  const chars = [...s];
  return chars.length > MAX_NAME ? `${chars.slice(0, MAX_NAME - 1).join("")}…` : s;
}

/** "12 ms", "1.4 s", "65 s". */
export function durationText(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 10_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.round(ms / 1000)} s`;
}

/** What a run said, after how it ended: "blocked: no rm -rf here", "failed: exit 1", "allow: trusted". */
export function outcomeText(run: HookRun): string {
  const said = run.message.trim();
  switch (run.outcome) {
    case "ok":
      return said;
    case "blocked":
      return said ? `blocked: ${said}` : "blocked";
    case "error":
      return said ? `failed: ${said}` : "failed";
    case "timeout":
      return said ? `timed out: ${said}` : "timed out";
  }
}

/** The first line of what it said, for the row ("…" when there is more). */
export function firstLine(text: string): string {
  const lines = text.split("\n");
  return lines.length > 1 ? `${lines[0]!.trimEnd()} …` : text;
}

/** One sentence for a tooltip: "PreToolUse hook guard.sh (yours): blocked: no rm -rf here, 12 ms". */
export function runSummary(run: HookRun): string {
  const said = outcomeText(run);
  const whose = run.source === "project" ? "the project's" : "yours";
  return `${run.event} hook ${scriptName(run.command)} (${whose})${said ? `: ${said}` : ", ok"}, ${durationText(run.duration_ms)}`;
}

/** The collapsed line for quiet runs: "PreToolUse hook ran · guard.sh", "3 hooks ran". */
export function quietText(runs: HookRun[]): string {
  if (runs.length === 1) return `${runs[0]!.event} hook ran`;
  return `${runs.length} hooks ran`;
}
