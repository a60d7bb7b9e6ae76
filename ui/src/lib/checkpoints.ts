// Checkpoints as the chat shows them: the one-line summary of what a call changed, and
// the engine's unified diff (`checkpoint_diff`) cut into rows to colour. Pure, so the
// wording and the parsing are unit-tested. File names and diff lines are the agent's (or
// anyone's) data: they are only ever rendered as text.

import type { CheckpointInfo, FileChange, FileChanges } from "../protocol";

/** "1 file changed", "3 files changed". */
export function filesChanged(total: number): string {
  if (total === 0) return "No files changed";
  return `${total} ${total === 1 ? "file" : "files"} changed`;
}

/** One file of a change: "notes.md +1 −1", "out/made.txt (new)". */
export function fileChangeText(f: FileChange): string {
  switch (f.status) {
    case "added":
      return `${f.path} (new)`;
    case "deleted":
      return `${f.path} (deleted)`;
    case "modified":
      if (f.binary) return `${f.path} (binary)`;
      // Past the first 500 files the engine counts no lines: say nothing rather than +0 −0.
      if (f.added === 0 && f.removed === 0) return f.path;
      return `${f.path} +${f.added} −${f.removed}`;
  }
}

/** "2 files changed: notes.md +1 −1, out/made.txt (new)" (the first `shown` files named). */
export function changesSummary(changes: FileChanges, shown = 3): string {
  if (changes.total === 0) return filesChanged(0);
  const named = changes.files.slice(0, shown).map(fileChangeText);
  const more = changes.total - named.length;
  return `${filesChanged(changes.total)}: ${named.join(", ")}${more > 0 ? ` and ${more} more` : ""}`;
}

/** Whether the folder can be brought back to before the step. */
export function restorable(c: CheckpointInfo): boolean {
  return c.before != null;
}

/** Whether the step's diff can be shown (both ends were recorded). */
export function hasDiff(c: CheckpointInfo): boolean {
  return c.before != null && c.after != null && c.changes.total > 0;
}

export type PatchRow =
  /** `diff --git a/x b/x`: a new file's section starts. */
  | { kind: "file"; text: string }
  /** index, mode, `---`/`+++`, "Binary files … differ". */
  | { kind: "meta"; text: string }
  | { kind: "hunk"; text: string }
  | { kind: "add" | "del" | "ctx"; text: string; oldNo: number | null; newNo: number | null }
  /** "\ No newline at end of file", "[diff cut at … bytes]". */
  | { kind: "note"; text: string };

export interface Patch {
  rows: PatchRow[];
  added: number;
  removed: number;
}

const HUNK = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

/**
 * A unified diff (git's patch format) as rows. Inside a hunk, lines are read by the
 * hunk's counts, so a removed line that reads "-- a" or an added "++ b" is a change and
 * not a header.
 */
export function parsePatch(text: string): Patch {
  const lines = text.split("\n");
  if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  const rows: PatchRow[] = [];
  let added = 0;
  let removed = 0;
  let oldLeft = 0;
  let newLeft = 0;
  let o = 0;
  let n = 0;
  for (const line of lines) {
    if (oldLeft > 0 || newLeft > 0) {
      const mark = line[0];
      if (mark === "+" && newLeft > 0) {
        rows.push({ kind: "add", text: line.slice(1), oldNo: null, newNo: n++ });
        newLeft--;
        added++;
        continue;
      }
      if (mark === "-" && oldLeft > 0) {
        rows.push({ kind: "del", text: line.slice(1), oldNo: o++, newNo: null });
        oldLeft--;
        removed++;
        continue;
      }
      if (mark === " " && oldLeft > 0 && newLeft > 0) {
        rows.push({ kind: "ctx", text: line.slice(1), oldNo: o++, newNo: n++ });
        oldLeft--;
        newLeft--;
        continue;
      }
      if (mark === "\\") {
        rows.push({ kind: "note", text: line });
        continue;
      }
      // Not what the hunk's counts promised (a cut diff): read it as a header.
      oldLeft = newLeft = 0;
    }
    if (line.startsWith("diff --git ")) {
      rows.push({ kind: "file", text: line });
    } else if (line.startsWith("@@")) {
      const m = HUNK.exec(line);
      if (m) {
        o = Number(m[1]);
        oldLeft = m[2] === undefined ? 1 : Number(m[2]);
        n = Number(m[3]);
        newLeft = m[4] === undefined ? 1 : Number(m[4]);
        rows.push({ kind: "hunk", text: line });
      } else {
        rows.push({ kind: "meta", text: line });
      }
    } else if (line.startsWith("\\") || /^\[diff cut at \d+ bytes\]$/.test(line)) {
      rows.push({ kind: "note", text: line });
    } else if (line !== "") {
      rows.push({ kind: "meta", text: line });
    }
  }
  return { rows, added, removed };
}

/**
 * Whether a chat has changes of its own to review (docs/worktrees.md, "A chat's own
 * changes"): a checkpoint that recorded the folder before a call that changed files.
 */
export function hasOwnChanges(checkpoints: readonly CheckpointInfo[]): boolean {
  return checkpoints.some((c) => c.before != null && c.changes.total > 0);
}
