import { describe, expect, it } from "vitest";
import { meterLevel, partsShown, percentOf, thresholdText, tokenCount } from "./contextUsage";

describe("the context meter's words", () => {
  it("counts tokens short", () => {
    expect([0, 950, 1000, 3000, 12_345, 99_949, 128_000, 1_234_567].map(tokenCount)).toEqual(["0", "950", "1k", "3k", "12.3k", "99.9k", "128k", "1.2M"]);
  });

  it("colours by the threshold, or the window when there is none", () => {
    const at = (tokens: number, compact_at = 80) => meterLevel({ tokens, window: 100_000, compact_at });
    expect([at(63_999), at(64_000), at(79_999), at(80_000)]).toEqual(["ok", "near", "near", "over"]);
    expect([at(79_999, 0), at(80_000, 0), at(100_000, 0)]).toEqual(["ok", "near", "over"]);
    expect(meterLevel({ tokens: 10, window: 0, compact_at: 80 })).toBe("ok");
    expect(percentOf(5, 0)).toBe(0);
    expect(percentOf(104_000, 128_000)).toBe(81);
  });

  it("names the threshold and the parts", () => {
    expect(thresholdText(80)).toBe("Summarises at 80%");
    expect(thresholdText(0)).toBe("Only when asked");
    const parts = partsShown([
      { what: "messages", tokens: 5 },
      { what: "images", tokens: 7 },
      { what: "summary", tokens: 0 },
      { what: "system", tokens: 1 },
    ]);
    expect(parts.map((p) => p.label)).toEqual(["System prompt", "Messages", "images"]);
    expect(partsShown([{ what: "summary", tokens: 3 }]).map((p) => p.label)).toEqual(["Summary"]);
  });
});
