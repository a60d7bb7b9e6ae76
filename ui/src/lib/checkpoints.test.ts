import { describe, expect, it } from "vitest";
import { changesSummary, fileChangeText, filesChanged, hasDiff, parsePatch, restorable } from "./checkpoints";
import type { CheckpointInfo, FileChange } from "../protocol";

const file = (path: string, over: Partial<FileChange> = {}): FileChange => ({ path, status: "modified", added: 0, removed: 0, binary: false, ...over });

describe("the summary of what a call changed", () => {
  it("names the files with their line counts", () => {
    const files = [file("notes.md", { added: 1, removed: 1 }), file("out/made.txt", { status: "added", added: 3 })];
    expect(changesSummary({ files, total: 2 })).toBe("2 files changed: notes.md +1 −1, out/made.txt (new)");
  });

  it("says one file, deleted and binary files, and how many more there are", () => {
    expect(changesSummary({ files: [file("gone.txt", { status: "deleted", removed: 4 })], total: 1 })).toBe("1 file changed: gone.txt (deleted)");
    const many = ["a", "b", "c", "d", "e"].map((p) => file(p, { added: 2 }));
    expect(changesSummary({ files: many, total: 7 })).toBe("7 files changed: a +2 −0, b +2 −0, c +2 −0 and 4 more");
    expect(fileChangeText(file("logo.png", { binary: true }))).toBe("logo.png (binary)");
    // Past the first 500 files the engine counts no lines: no "+0 −0".
    expect(fileChangeText(file("late.txt"))).toBe("late.txt");
    expect(changesSummary({ files: [], total: 0 })).toBe("No files changed");
    expect(filesChanged(1)).toBe("1 file changed");
  });

  it("offers a restore only with a recorded before, and a diff only with both ends", () => {
    const c: CheckpointInfo = {
      id: 1,
      session_id: 1,
      tool_call_id: "c1",
      kind: "call",
      folder: "/w",
      before: null,
      after: null,
      changes: { files: [], total: 0 },
      note: "The folder is too large to checkpoint",
      restored_to: null,
      created_at: 1,
    };
    expect(restorable(c)).toBe(false);
    expect(hasDiff(c)).toBe(false);
    expect(restorable({ ...c, before: "a" })).toBe(true);
    expect(hasDiff({ ...c, before: "a" })).toBe(false);
    expect(hasDiff({ ...c, before: "a", after: "b", changes: { files: [file("x", { added: 1 })], total: 1 } })).toBe(true);
  });
});

const patch = `diff --git a/notes.md b/notes.md
index 3b18e51..a042389 100644
--- a/notes.md
+++ b/notes.md
@@ -1,3 +1,3 @@
 first
--- a rule, removed
+++ a rule, added
 last
\\ No newline at end of file
diff --git a/out/made.txt b/out/made.txt
new file mode 100644
index 0000000..ce01362
--- /dev/null
+++ b/out/made.txt
@@ -0,0 +1 @@
+made
diff --git a/logo.png b/logo.png
index 1111111..2222222 100644
Binary files a/logo.png and b/logo.png differ
`;

describe("the engine's unified diff, as rows", () => {
  it("reads lines inside a hunk by its counts, headers outside", () => {
    const p = parsePatch(patch);
    expect(p.added).toBe(2);
    expect(p.removed).toBe(1);
    expect(p.rows.map((r) => r.kind)).toEqual([
      "file", "meta", "meta", "meta", "hunk", "ctx", "del", "add", "ctx", "note",
      "file", "meta", "meta", "meta", "meta", "hunk", "add",
      "file", "meta", "meta",
    ]);
    expect(p.rows[6]).toEqual({ kind: "del", text: "-- a rule, removed", oldNo: 2, newNo: null });
    expect(p.rows[7]).toEqual({ kind: "add", text: "++ a rule, added", oldNo: null, newNo: 2 });
    expect(p.rows[8]).toEqual({ kind: "ctx", text: "last", oldNo: 3, newNo: 3 });
    expect(p.rows[16]).toEqual({ kind: "add", text: "made", oldNo: null, newNo: 1 });
    expect(p.rows[19]).toEqual({ kind: "meta", text: "Binary files a/logo.png and b/logo.png differ" });
  });

  it("marks where the engine cut a long diff", () => {
    const p = parsePatch("diff --git a/x b/x\n@@ -1,5 +1,5 @@\n a\n-b\n\n[diff cut at 524288 bytes]\n");
    expect(p.rows.at(-1)).toEqual({ kind: "note", text: "[diff cut at 524288 bytes]" });
    expect(p.rows.filter((r) => r.kind === "del")).toHaveLength(1);
  });

  it("has no rows for an empty diff", () => {
    expect(parsePatch("")).toEqual({ rows: [], added: 0, removed: 0 });
  });
});
