// Comments on a review's lines: which line each is on, their order, and the message the
// agent reads.

import { describe, expect, it } from "vitest";
import type { FileReview } from "../protocol";
import { commentsMessage, inlineCode, lineKey, lineWords, reviewLines, rowRef, sendLabel, sortComments, type ReviewComment } from "./reviewComments";
import { hunkRows } from "./worktrees";

const DRAFT: FileReview = {
  path: "draft.md",
  status: "modified",
  binary: false,
  hunks: [
    { index: 0, old_start: 1, new_start: 1, removed: ["one\n"], added: ["ONE\n"] },
    { index: 1, old_start: 5, new_start: 5, removed: ["five\n"], added: ["FIVE\n", "six\n"] },
  ],
};
const LIB: FileReview = { path: "src/a.rs", status: "added", binary: false, hunks: [{ index: 0, old_start: 0, new_start: 1, removed: [], added: ["fn main() {}\n", "let x = 1;\n"] }] };
const LOGO: FileReview = { path: "logo.png", status: "modified", binary: true, hunks: [] };

const comment = (over: Partial<ReviewComment>): ReviewComment => ({ id: "c", path: "draft.md", side: "new", line: 1, quote: "ONE", text: "Keep it lower case.", ...over });

describe("comments on a review's lines", () => {
  it("name a line by its file, side and number", () => {
    const [del, add] = hunkRows(DRAFT.hunks[1]!);
    expect(rowRef("draft.md", del!)).toEqual({ path: "draft.md", side: "old", line: 5 });
    expect(rowRef("draft.md", add!)).toEqual({ path: "draft.md", side: "new", line: 5 });
    expect(lineWords({ path: "draft.md", side: "new", line: 5 })).toBe("line 5");
    expect(lineWords({ path: "draft.md", side: "old", line: 5 })).toBe("removed line 5");
    expect(lineKey({ path: "a", side: "new", line: 5 })).not.toBe(lineKey({ path: "a", side: "old", line: 5 }));
  });

  it("list every line a review shows, in its order", () => {
    const lines = [...reviewLines([DRAFT, LOGO, LIB]).keys()].map((k) => JSON.parse(k) as [string, string, number]);
    expect(lines).toEqual([
      ["draft.md", "old", 1],
      ["draft.md", "new", 1],
      ["draft.md", "old", 5],
      ["draft.md", "new", 5],
      ["draft.md", "new", 6],
      ["src/a.rs", "new", 1],
      ["src/a.rs", "new", 2],
    ]);
  });

  it("are sent in the review's order, those on lines no longer shown last", () => {
    const a = comment({ id: "a", path: "src/a.rs", line: 2 });
    const b = comment({ id: "b", line: 6 });
    const c = comment({ id: "c", side: "old", line: 1 });
    const gone = comment({ id: "gone", line: 40 });
    expect(sortComments([gone, a, b, c], [DRAFT, LIB]).map((x) => x.id)).toEqual(["c", "b", "a", "gone"]);
  });

  it("make one message a model reads easily: the file, the line, the line quoted, the comment", () => {
    const text = commentsMessage([
      comment({ path: "src/a.rs", line: 12, quote: "let x = 1;", text: "Use a constant here." }),
      comment({ side: "old", line: 5, quote: "five", text: "Keep this line.\n\nIt is cited in chapter 2." }),
      comment({ line: 3, quote: "", text: "Why empty?" }),
    ]);
    expect(text).toBe(
      [
        "Review comments on your changes:",
        "",
        "1. `src/a.rs` line 12:",
        "   > let x = 1;",
        "   Use a constant here.",
        "",
        "2. `draft.md` line 5 of the old file (a line you removed):",
        "   > five",
        "   Keep this line.",
        "",
        "   It is cited in chapter 2.",
        "",
        "3. `draft.md` line 3:",
        "   > (an empty line)",
        "   Why empty?",
      ].join("\n"),
    );
  });

  it("quote a long line in part, and a path with backticks whole", () => {
    const text = commentsMessage([comment({ path: "a`b.md", quote: "x".repeat(400) })]);
    expect(text).toContain("1. `` a`b.md `` line 1:");
    expect(text).toContain(`   > ${"x".repeat(300)}…\n`);
    expect(inlineCode("plain")).toBe("`plain`");
    expect(inlineCode("`tick")).toBe("`` `tick ``");
  });

  it("say how many are sent", () => {
    expect(sendLabel(1)).toBe("Send 1 comment to the agent");
    expect(sendLabel(3)).toBe("Send 3 comments to the agent");
  });
});
