import { describe, expect, it } from "vitest";
import type { FileReview, HunkInfo, WorktreeInfo } from "../protocol";
import { choicesOf, fileCounts, fileKey, filesToApply, fileTaken, hunkKey, hunkPlace, hunkRows, takenWhole, worktreeKindText, worktreeOfChat } from "./worktrees";

const hunk = (index: number, old_start: number, removed: string[], added: string[], new_start = old_start): HunkInfo => ({ index, old_start, new_start, removed, added });

const draft: FileReview = { path: "draft.md", status: "modified", binary: false, hunks: [hunk(0, 1, ["one\n"], ["ONE\n"]), hunk(1, 5, ["five\n"], ["FIVE\n", "six\n"])] };
const made: FileReview = { path: "out/made.txt", status: "added", binary: false, hunks: [hunk(0, 0, [], ["made\n"], 1)] };
const logo: FileReview = { path: "logo.png", status: "modified", binary: true, hunks: [] };
const gone: FileReview = { path: "gone.txt", status: "deleted", binary: false, hunks: [hunk(0, 1, ["bye\n"], [], 0)] };

describe("what a review offers to take or leave", () => {
  it("a changed text file hunk by hunk; a binary, added or removed file whole", () => {
    expect([draft, made, logo, gone].map(takenWhole)).toEqual([false, true, true, true]);
    expect(choicesOf([draft, made, logo, gone]).map((c) => [c.path, c.hunk])).toEqual([
      ["draft.md", 0],
      ["draft.md", 1],
      ["out/made.txt", null],
      ["logo.png", null],
      ["gone.txt", null],
    ]);
  });

  it("sends every file taken, whole when all of it is, else the hunks taken", () => {
    expect(filesToApply([draft, made, logo], new Set())).toEqual([{ path: "draft.md" }, { path: "out/made.txt" }, { path: "logo.png" }]);
    const left = new Set([hunkKey("draft.md", draft.hunks[0]!), fileKey(logo)]);
    expect(filesToApply([draft, made, logo], left)).toEqual([{ path: "draft.md", hunks: [1] }, { path: "out/made.txt" }]);
    // A file with nothing taken is not sent.
    const none = new Set([hunkKey("draft.md", draft.hunks[0]!), hunkKey("draft.md", draft.hunks[1]!)]);
    expect(filesToApply([draft], none)).toEqual([]);
    expect(fileTaken(draft, new Set())).toBe("all");
    expect(fileTaken(draft, left)).toBe("some");
    expect(fileTaken(draft, none)).toBe("none");
    expect(fileTaken(logo, left)).toBe("none");
  });

  it("keys a hunk by its change, so one left out stays out while it is the same", () => {
    const again: FileReview = { ...draft, hunks: [hunk(0, 1, ["one\n"], ["ONE\n"]), hunk(1, 3, ["three\n"], ["THREE\n"]), hunk(2, 5, ["five\n"], ["FIVE\n", "six\n"], 5)] };
    const left = new Set([hunkKey("draft.md", draft.hunks[1]!)]);
    // The agent added a change between them: the left-out one is now number 2.
    expect(filesToApply([again], left)).toEqual([{ path: "draft.md", hunks: [0, 1] }]);
    // Changed again, it is a new change: taken.
    const changed: FileReview = { ...draft, hunks: [draft.hunks[0]!, hunk(1, 5, ["five\n"], ["Five\n"])] };
    expect(filesToApply([changed], left)).toEqual([{ path: "draft.md" }]);
  });

  it("counts lines from the hunks", () => {
    expect(fileCounts(draft)).toEqual({ added: 3, removed: 2 });
    expect(fileCounts(logo)).toEqual({ added: 0, removed: 0 });
  });
});

describe("a hunk's lines", () => {
  it("numbers removed lines in the old file and added ones in the new, without their newline", () => {
    expect(hunkRows(hunk(1, 5, ["five\n"], ["FIVE\n", "six"], 5))).toEqual([
      { kind: "del", text: "five", oldNo: 5, newNo: null, noEol: false },
      { kind: "add", text: "FIVE", oldNo: null, newNo: 5, noEol: false },
      { kind: "add", text: "six", oldNo: null, newNo: 6, noEol: true },
    ]);
    expect(hunkRows(hunk(0, 1, ["a\r\n"], [])).map((r) => r.text)).toEqual(["a"]);
  });

  it("says where it is", () => {
    expect(hunkPlace(hunk(0, 3, ["x\n"], ["y\n"]))).toBe("line 3");
    expect(hunkPlace(hunk(0, 3, ["x\n", "y\n", "z\n"], []))).toBe("lines 3–5");
    expect(hunkPlace(hunk(0, 3, [], ["new\n"]))).toBe("after line 3");
    expect(hunkPlace(hunk(0, 0, [], ["first\n"]))).toBe("at the start");
  });
});

describe("a worktree", () => {
  const w = (over: Partial<WorktreeInfo>): WorktreeInfo => ({
    id: 1,
    name: "paper-1",
    session_id: 4,
    source: "/home/me/paper",
    root: "/d-worktrees/paper-1",
    working_dir: "/d-worktrees/paper-1",
    kind: "copy",
    status: "active",
    created_at: 1,
    ...over,
  });

  it("is named by its kind, and a git one by its branch", () => {
    expect(worktreeKindText(w({}))).toBe("copy");
    expect(worktreeKindText(w({ kind: "git", branch: "skald/paper-1" }))).toBe("git · skald/paper-1");
  });

  it("is found by its chat", () => {
    const list = [w({ id: 2, name: "b", session_id: 5 }), w({})];
    expect(worktreeOfChat(list, 4)?.name).toBe("paper-1");
    expect(worktreeOfChat(list, 6)).toBeUndefined();
    expect(worktreeOfChat([w({ status: "discarded" })], 4)).toBeUndefined();
  });
});
