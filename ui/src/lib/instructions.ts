// The chat's context view (docs/instructions.md): what a turn's agent is given besides its
// own prompt — the AGENTS.md files and the skills of `.agents/skills`, and whether the
// project's hooks may run (docs/hooks.md) — in the words the header's chip and its panel
// use. Pure, so the wording and the path shortening are unit-tested. Paths, names,
// descriptions and notes come from a project's files: they are only ever rendered as text.

import type { InstructionFile, TurnContext } from "../protocol";
import { formatBytes } from "./bytes";

/** How much of a file the agent was given. */
export type FileState = "whole" | "cut" | "omitted";

export function fileState(f: InstructionFile): FileState {
  if (f.included === 0 && (f.bytes > 0 || f.note !== "")) return "omitted";
  if (f.included < f.bytes) return "cut";
  return "whole";
}

/** "2.1 kB"; "1.2 kB of 40.0 kB" when cut; "not given" when left out or not read. */
export function sizeText(f: InstructionFile): string {
  switch (fileState(f)) {
    case "whole":
      return formatBytes(f.bytes);
    case "cut":
      return `${formatBytes(f.included)} of ${formatBytes(f.bytes)}`;
    case "omitted":
      return f.bytes > 0 ? `not given (${formatBytes(f.bytes)})` : "not given";
  }
}

/** The files the agent was given some of. */
export function givenCount(ctx: TurnContext): number {
  return ctx.instructions.filter((f) => f.included > 0).length;
}

/** Whether a file was cut, left out or not read (its note says why). */
export function hasNotes(ctx: TurnContext): boolean {
  return ctx.instructions.some((f) => f.note !== "");
}

export function isEmpty(ctx: TurnContext): boolean {
  return ctx.instructions.length === 0 && ctx.skills.length === 0;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** The project's hooks file, when it configures hooks: "pending" until approved. */
export function hooksState(ctx: TurnContext | null): "pending" | "approved" | null {
  const h = ctx?.project_hooks;
  if (!h || h.hooks === 0) return null;
  return h.approved ? "approved" : "pending";
}

/** "1 hook", "3 hooks". */
export function hooksCount(n: number): string {
  return plural(n, "hook");
}

/**
 * The header chip's words: "AGENTS.md ×2", "Skills ×3" when there are only skills,
 * "Hooks ×2" when there are only a project's hooks, "AGENTS.md not read" when every file
 * was refused, else "Context" (muted). `hooks` says whether the project's hooks wait for
 * approval (the chip then carries a dot).
 */
export function chipLabel(ctx: TurnContext | null): { text: string; muted: boolean; warn: boolean; hooks: "pending" | "approved" | null } {
  if (!ctx) return { text: "Context", muted: true, warn: false, hooks: null };
  const hooks = hooksState(ctx);
  const given = givenCount(ctx);
  const warn = hasNotes(ctx);
  if (given > 0) return { text: `AGENTS.md ×${given}`, muted: false, warn, hooks };
  if (ctx.instructions.length > 0) return { text: "AGENTS.md not read", muted: false, warn: true, hooks };
  if (ctx.skills.length > 0) return { text: `Skills ×${ctx.skills.length}`, muted: false, warn, hooks };
  if (hooks) return { text: `Hooks ×${ctx.project_hooks!.hooks}`, muted: false, warn: false, hooks };
  return { text: "Context", muted: true, warn: false, hooks: null };
}

/** One sentence for screen readers and the chip's tooltip. */
export function contextSummary(ctx: TurnContext | null): string {
  if (!ctx) return "The agent's context";
  const hooks = hooksState(ctx);
  const n = ctx.project_hooks?.hooks ?? 0;
  const hooksPart =
    hooks === "pending"
      ? `; the project's ${hooksCount(n)} ${n === 1 ? "waits" : "wait"} for your approval`
      : hooks === "approved"
        ? `; the project's ${hooksCount(n)} approved`
        : "";
  if (isEmpty(ctx)) return `No AGENTS.md files or skills are given to the agent${hooksPart}`;
  const parts = [plural(givenCount(ctx), "AGENTS.md file"), plural(ctx.skills.length, "skill")];
  const noted = ctx.instructions.filter((f) => f.note !== "").length;
  const more = noted > 0 ? `; ${plural(noted, "file")} cut or not read` : "";
  return `Given to the agent: ${parts.join(" and ")}${more}${hooksPart}`;
}

// ---- paths ----------------------------------------------------------------------------

/** `path` relative to `dir` ("" for `dir` itself), or null when it is not inside it. */
export function relativeTo(path: string, dir: string): string | null {
  const d = dir.replace(/[\\/]+$/, "");
  // Nothing is shortened against the file system's root.
  if (d === "" || /^[A-Za-z]:$/.test(d)) return null;
  if (path === d) return "";
  if (path.startsWith(d) && (path[d.length] === "/" || path[d.length] === "\\")) return path.slice(d.length + 1);
  return null;
}

/** Where the person's own files sit, read from the paths of their own files. */
const USER_FILE = [
  /^(.+)[\\/]\.config[\\/]skald[\\/]AGENTS\.md$/, // Linux, XDG
  /^(.+)[\\/]Library[\\/]Application Support[\\/]skald[\\/]AGENTS\.md$/, // macOS
  /^(.+)[\\/]AppData[\\/]Roaming[\\/]skald[\\/]config[\\/]AGENTS\.md$/, // Windows
];
const USER_SKILL = /^(.+)[\\/]\.agents[\\/]skills[\\/]/;
/** A home folder by its usual place, when the person's own files say nothing. */
const HOME_LIKE = /^(\/home\/[^/]+|\/Users\/[^/]+|[A-Za-z]:\\Users\\[^\\]+)(?=[\\/]|$)/;

/**
 * The person's home folder as far as the context tells it (the UI is not told it): the
 * folder their own AGENTS.md or skills are in, else a /home/NAME or /Users/NAME the
 * project is under. Null when nothing says.
 */
export function homeOf(ctx: TurnContext): string | null {
  for (const f of ctx.instructions) {
    if (f.source !== "user") continue;
    for (const re of USER_FILE) {
      const m = re.exec(f.path);
      if (m) return m[1]!;
    }
  }
  for (const s of ctx.skills) {
    if (s.source !== "user") continue;
    const m = USER_SKILL.exec(s.path);
    if (m) return m[1]!;
  }
  for (const p of [ctx.project_root, ...ctx.instructions.map((f) => f.path)]) {
    const m = HOME_LIKE.exec(p);
    if (m) return m[1]!;
  }
  return null;
}

/** A folder as people read it: "~/paper", or the path as it is. */
export function shortDir(dir: string, home: string | null): string {
  const inHome = home != null ? relativeTo(dir, home) : null;
  if (inHome != null) return inHome === "" ? "~" : `~/${inHome}`;
  return dir;
}

/**
 * A file as the panel shows it: relative to the project root ("AGENTS.md",
 * "chapters/AGENTS.md"), else to home ("~/.config/skald/AGENTS.md"), else whole.
 */
export function shortPath(path: string, root: string, home: string | null): string {
  const inRoot = relativeTo(path, root);
  if (inRoot != null && inRoot !== "") return inRoot;
  return shortDir(path, home);
}
