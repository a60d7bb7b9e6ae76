import { describe, expect, it } from "vitest";
import { unifiedDiff } from "./diff";

describe("unifiedDiff", () => {
  it("numbers changed lines and counts them", () => {
    const d = unifiedDiff("a\nb\nc\n", "a\nB\nc\nd\n");
    expect(d.added).toBe(2);
    expect(d.removed).toBe(1);
    expect(d.rows[0]).toEqual({ kind: "hunk", text: "@@ -1,3 +1,4 @@" });
    expect(d.rows.slice(1)).toEqual([
      { kind: "ctx", text: "a", oldNo: 1, newNo: 1 },
      { kind: "del", text: "b", oldNo: 2, newNo: null },
      { kind: "add", text: "B", oldNo: null, newNo: 2 },
      { kind: "ctx", text: "c", oldNo: 3, newNo: 3 },
      { kind: "add", text: "d", oldNo: null, newNo: 4 },
    ]);
  });

  it("shows a new file as all additions", () => {
    const d = unifiedDiff("", "x\ny\n");
    expect(d.removed).toBe(0);
    expect(d.rows.filter((r) => r.kind === "add").map((r) => r.text)).toEqual(["x", "y"]);
  });

  it("has no rows when nothing changed", () => {
    expect(unifiedDiff("same\n", "same\n").rows).toEqual([]);
  });

  it("splits far-apart changes into hunks with context", () => {
    const old = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`).join("\n") + "\n";
    const neu = old.replace("line 2\n", "line two\n").replace("line 28\n", "line twenty-eight\n");
    const d = unifiedDiff(old, neu);
    expect(d.rows.filter((r) => r.kind === "hunk")).toHaveLength(2);
    const del28 = d.rows.find((r) => r.kind === "del" && r.text === "line 28");
    expect(del28 && "oldNo" in del28 ? del28.oldNo : null).toBe(28);
  });
});
