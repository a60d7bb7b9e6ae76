// Comments on lines of a worktree's review (docs/worktrees.md, "In the app"): which line
// each is on, and the one message that sends them to the agent. Pure, so the wording a
// model reads is unit-tested.

import type { FileReview } from "../protocol";
import { hunkRows, type HunkRow } from "./worktrees";

/** A comment on one line of a change: an added line by its number in the new file, a removed one by its number in the old. */
export interface ReviewComment {
  id: string;
  path: string;
  side: "new" | "old";
  line: number;
  /** The line as the review showed it (no newline). */
  quote: string;
  text: string;
}

/** Where a comment goes: a line of a file, on one side. */
export type LineRef = Pick<ReviewComment, "path" | "side" | "line">;

export function lineKey(l: LineRef): string {
  return JSON.stringify([l.path, l.side, l.line]);
}

/** The line a row of a hunk is: its file, side and number. */
export function rowRef(path: string, r: HunkRow): LineRef {
  return r.kind === "add" ? { path, side: "new", line: r.newNo! } : { path, side: "old", line: r.oldNo! };
}

/** "line 12", "removed line 5" — a line in words, for labels. */
export function lineWords(l: LineRef): string {
  return l.side === "new" ? `line ${l.line}` : `removed line ${l.line}`;
}

/** Every line a review shows, in its order, by key. */
export function reviewLines(files: readonly FileReview[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const f of files) {
    if (f.binary) continue;
    for (const h of f.hunks) for (const r of hunkRows(h)) out.set(lineKey(rowRef(f.path, r)), out.size);
  }
  return out;
}

/** The comments in the review's order (file by file, line by line); those on lines no longer shown last, as they were made. */
export function sortComments(comments: readonly ReviewComment[], files: readonly FileReview[]): ReviewComment[] {
  const order = reviewLines(files);
  const at = (c: ReviewComment) => order.get(lineKey(c)) ?? Number.MAX_SAFE_INTEGER;
  return comments
    .map((c, i) => ({ c, i }))
    .sort((a, b) => at(a.c) - at(b.c) || a.i - b.i)
    .map(({ c }) => c);
}

/** How much of a long line is quoted. */
export const QUOTE_CHARS = 300;

/** `text` as Markdown inline code, with a fence longer than any run of backticks in it. */
export function inlineCode(text: string): string {
  const runs = text.match(/`+/g) ?? [];
  const fence = "`".repeat(Math.max(0, ...runs.map((r) => r.length)) + 1);
  const pad = fence.length > 1 || text.startsWith("`") || text.endsWith("`") ? " " : "";
  return `${fence}${pad}${text}${pad}${fence}`;
}

/**
 * The message the agent gets, one numbered item per comment: the file, the line (in the
 * new file, or in the old one for a removed line), the line quoted and the comment:
 *
 *     Review comments on your changes:
 *
 *     1. `src/a.rs` line 12:
 *        > let x = 1;
 *        Use a constant here.
 */
export function commentsMessage(comments: readonly ReviewComment[]): string {
  const items = comments.map((c, i) => {
    const where = c.side === "new" ? `line ${c.line}` : `line ${c.line} of the old file (a line you removed)`;
    const quote = c.quote.length > QUOTE_CHARS ? `${c.quote.slice(0, QUOTE_CHARS)}…` : c.quote;
    const body = c.text
      .trim()
      .split("\n")
      .map((l) => `   ${l}`.trimEnd());
    return [`${i + 1}. ${inlineCode(c.path)} ${where}:`, quote.trim() === "" ? "   > (an empty line)" : `   > ${quote}`, ...body].join("\n");
  });
  return ["Review comments on your changes:", ...items].join("\n\n");
}

/** "Send 2 comments to the agent". */
export const sendLabel = (n: number) => `Send ${n} ${n === 1 ? "comment" : "comments"} to the agent`;
