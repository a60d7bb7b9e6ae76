// A worktree's review as the UI holds it (docs/worktrees.md, "In the app"): what can be
// taken or left — each hunk of a changed text file, or a whole file when it is binary,
// added or removed — what the person left out, and the `apply_worktree` choice that
// follows. Pure, so the rules are unit-tested. Paths and lines are the agent's data: they
// are only ever rendered as text.

import type { FileChoice, FileReview, HunkInfo, WorktreeInfo } from "../protocol";

/** One thing the person takes or leaves: a hunk (`hunk` its index) or a whole file (`hunk` null). */
export interface ReviewChoice {
  key: string;
  path: string;
  hunk: number | null;
}

/** Whether a file is taken or left whole: binary, added or removed, or with no hunks. */
export function takenWhole(f: FileReview): boolean {
  return f.binary || f.status !== "modified" || f.hunks.length === 0;
}

/**
 * A hunk's key, by what it changes rather than by its number: a hunk left out stays left
 * out across a Refresh while it is the same change, and a new or changed one is taken.
 */
export function hunkKey(path: string, h: HunkInfo): string {
  return JSON.stringify([path, h.old_start, h.removed, h.added]);
}

/** A whole file's key. */
export function fileKey(f: FileReview): string {
  return JSON.stringify([f.path, f.status]);
}

/** Every choice of a review, in the order shown (and moved through with j/k). */
export function choicesOf(files: FileReview[]): ReviewChoice[] {
  const out: ReviewChoice[] = [];
  for (const f of files) {
    if (takenWhole(f)) out.push({ key: fileKey(f), path: f.path, hunk: null });
    else for (const h of f.hunks) out.push({ key: hunkKey(f.path, h), path: f.path, hunk: h.index });
  }
  return out;
}

/** A file's choices' keys. */
export function fileChoiceKeys(f: FileReview): string[] {
  return takenWhole(f) ? [fileKey(f)] : f.hunks.map((h) => hunkKey(f.path, h));
}

/** How much of a file is taken: all, some or none of its choices. */
export function fileTaken(f: FileReview, left: ReadonlySet<string>): "all" | "some" | "none" {
  const keys = fileChoiceKeys(f);
  const out = keys.filter((k) => left.has(k)).length;
  return out === 0 ? "all" : out === keys.length ? "none" : "some";
}

/**
 * What `apply_worktree` is sent: each file with anything taken, without `hunks` when all
 * of it is taken (a file taken whole, or every hunk), else the hunks taken.
 */
export function filesToApply(files: FileReview[], left: ReadonlySet<string>): FileChoice[] {
  const out: FileChoice[] = [];
  for (const f of files) {
    if (takenWhole(f)) {
      if (!left.has(fileKey(f))) out.push({ path: f.path });
      continue;
    }
    const taken = f.hunks.filter((h) => !left.has(hunkKey(f.path, h)));
    if (taken.length === f.hunks.length) out.push({ path: f.path });
    else if (taken.length > 0) out.push({ path: f.path, hunks: taken.map((h) => h.index) });
  }
  return out;
}

/** Lines added and removed in a file, from its hunks. */
export function fileCounts(f: FileReview): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const h of f.hunks) {
    added += h.added.length;
    removed += h.removed.length;
  }
  return { added, removed };
}

export interface HunkRow {
  kind: "add" | "del";
  text: string;
  oldNo: number | null;
  newNo: number | null;
  /** The line has no newline after it (the file's last line). */
  noEol: boolean;
}

/** A hunk's lines as rows: removed lines numbered in the old file, added in the new. */
export function hunkRows(h: HunkInfo): HunkRow[] {
  const row = (kind: "add" | "del", line: string, i: number): HunkRow => {
    const noEol = !line.endsWith("\n");
    const text = noEol ? line : line.endsWith("\r\n") ? line.slice(0, -2) : line.slice(0, -1);
    return kind === "del" ? { kind, text, oldNo: h.old_start + i, newNo: null, noEol } : { kind, text, oldNo: null, newNo: h.new_start + i, noEol };
  };
  return [...h.removed.map((l, i) => row("del", l, i)), ...h.added.map((l, i) => row("add", l, i))];
}

/** "lines 3–5", "line 3", "after line 3" — where a hunk is in the old file, for its label. */
export function hunkPlace(h: HunkInfo): string {
  if (h.removed.length === 0) return h.old_start === 0 ? "at the start" : `after line ${h.old_start}`;
  if (h.removed.length === 1) return `line ${h.old_start}`;
  return `lines ${h.old_start}–${h.old_start + h.removed.length - 1}`;
}

/** "copy" or "git · skald/paper-1". */
export function worktreeKindText(w: WorktreeInfo): string {
  return w.kind === "git" ? `git${w.branch ? ` · ${w.branch}` : ""}` : "copy";
}

/** The worktree a chat works in, if any. */
export function worktreeOfChat(worktrees: readonly WorktreeInfo[], sessionId: number): WorktreeInfo | undefined {
  return worktrees.find((w) => w.session_id === sessionId && w.status === "active");
}
