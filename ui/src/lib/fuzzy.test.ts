import { describe, expect, it } from "vitest";
import { fuzzyFilter, fuzzyScore } from "./fuzzy";

const labels = ["New chat", "Go to Inbox", "Go to Settings", "Toggle viewer", "Refactor the parser", "Notes on caching"];

describe("palette filter", () => {
  it("keeps everything, in order, for an empty query", () => {
    expect(fuzzyFilter("", labels, (x) => x).map((r) => r.item)).toEqual(labels);
  });

  it("matches subsequences and drops non-matches", () => {
    const r = fuzzyFilter("inbx", labels, (x) => x).map((x) => x.item);
    expect(r).toEqual(["Go to Inbox"]);
    expect(fuzzyFilter("zzz", labels, (x) => x)).toEqual([]);
  });

  it("ranks word-start matches first", () => {
    const r = fuzzyFilter("nc", labels, (x) => x).map((x) => x.item);
    expect(r[0]).toBe("New chat");
    expect(r).toContain("Notes on caching");
  });

  it("ranks substrings above scattered matches", () => {
    const r = fuzzyFilter("set", labels, (x) => x).map((x) => x.item);
    expect(r[0]).toBe("Go to Settings");
  });

  it("is case-insensitive and reports matched positions", () => {
    expect(fuzzyScore("VIEW", "Toggle viewer")?.positions).toEqual([7, 8, 9, 10]);
  });
});
