// A worktree's review as the UI holds it (docs/worktrees.md, "In the app"): what can be
// taken or left — each hunk of a changed text file, or a whole file when it is binary,
// added or removed — what the person left out, and the `apply_worktree` choice that
// follows. Pure, so the rules are unit-tested. Paths and lines are the agent's data: they
// are only ever rendered as text.

import type { FileChoice, FileReview, HunkInfo, MergeReport, WorktreeInfo } from "../protocol";

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

// ---- disk use and cleaning up (docs/worktrees.md, "Disk use and cleaning up") ----

export const DAY_MS = 24 * 3600 * 1000;

/** When a worktree was last used: its chat's latest activity, else when it was made. */
export function lastUsed(w: WorktreeInfo): number {
  return w.last_used_at ?? w.created_at;
}

/** Whole days since a worktree was last used (0 within the last 24 hours). */
export function daysUnused(w: WorktreeInfo, now: number): number {
  return Math.max(0, Math.floor((now - lastUsed(w)) / DAY_MS));
}

/** "used today", "used yesterday", "unused for 1 day", "unused for 20 days". */
export function usedText(w: WorktreeInfo, now: number): string {
  const days = daysUnused(w, now);
  if (days === 0) return new Date(lastUsed(w)).toDateString() === new Date(now).toDateString() ? "used today" : "used yesterday";
  return `unused for ${days} ${days === 1 ? "day" : "days"}`;
}

/**
 * Whether a worktree is offered for cleaning up, as the engine decides it
 * (`skald_core::worktrees::old`): unused for `cleanAfterDays` days or more (0: never),
 * and no chat working in it (here, or in another process: `in_use`).
 */
export function isOld(w: WorktreeInfo, cleanAfterDays: number, now: number, running: boolean): boolean {
  return cleanAfterDays > 0 && !running && !w.in_use && lastUsed(w) < now - cleanAfterDays * DAY_MS;
}

/** "2 worktrees unused for 14 days or more take 1.2 GB" (the size from `formatBytes`). */
export function cleanupText(count: number, days: number, size: string): string {
  return `${count} ${count === 1 ? "worktree" : "worktrees"} unused for ${days} ${days === 1 ? "day" : "days"} or more ${count === 1 ? "takes" : "take"} ${size}`;
}

/** What the worktrees take in all (those whose size is not known count for nothing). */
export function totalBytes(list: readonly WorktreeInfo[]): number {
  return list.reduce((sum, w) => sum + (w.disk_bytes ?? 0), 0);
}

// ---- best of N: a trial's worktrees (docs/worktrees.md, "Best of N") ----

/** A trial's agent letter, from its worktree's name (`paper-try1-b` → "B"); "?" when not one. */
export function trialLetter(w: WorktreeInfo): string {
  if (!w.trial || !w.name.startsWith(`${w.trial}-`)) return "?";
  return w.name.slice(w.trial.length + 1).toUpperCase();
}

/** The worktrees as the Worktrees screen lists them: those of one trial together, in the list's order. */
export type WorktreeGroup = { kind: "one"; worktree: WorktreeInfo } | { kind: "trial"; trial: string; worktrees: WorktreeInfo[] };

export function groupByTrial(list: readonly WorktreeInfo[]): WorktreeGroup[] {
  const out: WorktreeGroup[] = [];
  const trials = new Map<string, Extract<WorktreeGroup, { kind: "trial" }>>();
  for (const w of list) {
    if (!w.trial) {
      out.push({ kind: "one", worktree: w });
      continue;
    }
    let g = trials.get(w.trial);
    if (!g) {
      g = { kind: "trial", trial: w.trial, worktrees: [] };
      trials.set(w.trial, g);
      out.push(g);
    }
    g.worktrees.push(w);
  }
  for (const g of trials.values()) g.worktrees.sort((a, b) => a.name.localeCompare(b.name));
  return out;
}

/** A trial's active worktrees, by letter. */
export function trialWorktrees(list: readonly WorktreeInfo[], trial: string): WorktreeInfo[] {
  return list.filter((w) => w.trial === trial && w.status === "active").sort((a, b) => a.name.localeCompare(b.name));
}

// ---- commit and merge (docs/worktrees.md, "Commit and merge (git worktrees)") ----

/** A commit as git shows it short: its first 7 hex digits. */
export function shortCommit(commit: string): string {
  return commit.slice(0, 7);
}

/** What a merge did, in a sentence, and whether `git reset --keep ORIG_HEAD` undoes it. */
export function mergeText(r: MergeReport, branch: string): { text: string; undoable: boolean } {
  switch (r.outcome) {
    case "up_to_date":
      return { text: `${r.into} already has everything of ${branch}: nothing to merge.`, undoable: false };
    case "fast_forward":
      return { text: `${r.into} fast-forwarded to ${shortCommit(r.commit ?? "")}.`, undoable: true };
    case "merge_commit":
      return { text: `Merged into ${r.into} (${shortCommit(r.commit ?? "")}).`, undoable: true };
    case "conflicts":
      return { text: `Not merged: both changed ${r.conflicts.join(", ")} — nothing was written.`, undoable: false };
  }
}

/** What undoes a merge, in the person's repository. */
export const MERGE_UNDO = "git reset --keep ORIG_HEAD";

// ---- what is taken: by default, or only what the person picks ----

/**
 * The choices left out, from those the person flipped: in a review whose changes are taken
 * unless unchecked (a worktree's), the flipped ones; in one where nothing is taken unless
 * checked (taking a chat's changes back), every other one. A choice that is new after a
 * Refresh is then taken, or not, as the review's default says.
 */
export function leftOut(files: FileReview[], flipped: ReadonlySet<string>, takenByDefault: boolean): ReadonlySet<string> {
  if (takenByDefault) return flipped;
  return new Set(choicesOf(files).flatMap((c) => (flipped.has(c.key) ? [] : [c.key])));
}
