import { describe, expect, it } from "vitest";
import type { FileReview, HunkInfo, WorktreeInfo } from "../protocol";
import {
  DAY_MS,
  choicesOf,
  cleanupText,
  fileCounts,
  fileKey,
  filesToApply,
  fileTaken,
  groupByTrial,
  hunkKey,
  hunkPlace,
  hunkRows,
  isOld,
  leftOut,
  mergeText,
  takenWhole,
  totalBytes,
  trialLetter,
  trialWorktrees,
  usedText,
  worktreeKindText,
  worktreeOfChat,
} from "./worktrees";

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

  it("says when it was last used, and is old once unused for clean_after_days (never while its chat runs, never with 0)", () => {
    const now = new Date(2026, 5, 20, 12).getTime();
    expect(usedText(w({ last_used_at: now - 3600_000 }), now)).toBe("used today");
    expect(usedText(w({ last_used_at: new Date(2026, 5, 19, 23).getTime() }), now)).toBe("used yesterday");
    expect(usedText(w({ last_used_at: now - DAY_MS }), now)).toBe("unused for 1 day");
    expect(usedText(w({ last_used_at: now - 20 * DAY_MS - 5 }), now)).toBe("unused for 20 days");
    // Without its chat's activity, when it was made counts.
    expect(usedText(w({ created_at: now - 3 * DAY_MS }), now)).toBe("unused for 3 days");
    const old = w({ last_used_at: now - 14 * DAY_MS - 1 });
    expect(isOld(old, 14, now, false)).toBe(true);
    // A chat works in it in another process: never offered.
    expect(isOld({ ...old, in_use: true }, 14, now, false)).toBe(false);
    expect(isOld(w({ last_used_at: now - 14 * DAY_MS + 1 }), 14, now, false)).toBe(false);
    expect(isOld(old, 14, now, true)).toBe(false);
    expect(isOld(old, 0, now, false)).toBe(false);
    expect(cleanupText(2, 14, "1.2 GB")).toBe("2 worktrees unused for 14 days or more take 1.2 GB");
    expect(cleanupText(1, 1, "3.0 kB")).toBe("1 worktree unused for 1 day or more takes 3.0 kB");
    expect(totalBytes([w({ disk_bytes: 1000 }), w({}), w({ disk_bytes: 500 })])).toBe(1500);
  });

  it("groups a best-of trial's worktrees together, by letter, where the first of them is listed", () => {
    const a = w({ id: 3, name: "paper-try1-a", trial: "paper-try1" });
    const b = w({ id: 4, name: "paper-try1-b", trial: "paper-try1" });
    const one = w({ id: 5, name: "fix-build" });
    const groups = groupByTrial([b, one, a, w({})]);
    expect(groups.map((g) => (g.kind === "one" ? g.worktree.name : `${g.trial}: ${g.worktrees.map((x) => x.name).join(" ")}`))).toEqual(["paper-try1: paper-try1-a paper-try1-b", "fix-build", "paper-1"]);
    expect([a, b, one].map(trialLetter)).toEqual(["A", "B", "?"]);
    expect(trialWorktrees([b, one, a, { ...a, name: "paper-try1-c", status: "discarded" }], "paper-try1").map((x) => x.name)).toEqual(["paper-try1-a", "paper-try1-b"]);
  });

  it("says what a merge did, and whether git reset --keep ORIG_HEAD undoes it", () => {
    const c = "1597066aa0b1c2d3e4f5";
    expect(mergeText({ into: "main", outcome: "fast_forward", commit: c, conflicts: [] }, "skald/caps")).toEqual({ text: "main fast-forwarded to 1597066.", undoable: true });
    expect(mergeText({ into: "main", outcome: "merge_commit", commit: c, conflicts: [] }, "skald/caps")).toEqual({ text: "Merged into main (1597066).", undoable: true });
    expect(mergeText({ into: "main", outcome: "up_to_date", conflicts: [] }, "skald/caps")).toEqual({ text: "main already has everything of skald/caps: nothing to merge.", undoable: false });
    expect(mergeText({ into: "dev", outcome: "conflicts", conflicts: ["a.md", "b/c.rs"] }, "skald/caps")).toEqual({ text: "Not merged: both changed a.md, b/c.rs — nothing was written.", undoable: false });
  });
});

describe("what is taken", () => {
  it("by default everything but what was flipped; else only what was flipped", () => {
    const flipped = new Set([hunkKey("draft.md", draft.hunks[0]!)]);
    expect(leftOut([draft, made], flipped, true)).toBe(flipped);
    expect([...leftOut([draft, made], flipped, false)]).toEqual([hunkKey("draft.md", draft.hunks[1]!), fileKey(made)]);
    expect(filesToApply([draft, made], leftOut([draft, made], flipped, false))).toEqual([{ path: "draft.md", hunks: [0] }]);
    expect(filesToApply([draft, made], leftOut([draft, made], new Set(), false))).toEqual([]);
  });
});
