import { describe, expect, it } from "vitest";
import { formatBytes, percent, progressText } from "./bytes";

describe("formatBytes", () => {
  it("uses decimal units with one decimal", () => {
    expect(formatBytes(0)).toBe("0 B");
    expect(formatBytes(999)).toBe("999 B");
    expect(formatBytes(1000)).toBe("1.0 kB");
    expect(formatBytes(12_300_000)).toBe("12.3 MB");
    expect(formatBytes(98_362_432)).toBe("98.4 MB");
    expect(formatBytes(4_920_000_000)).toBe("4.9 GB");
  });

  it("moves up a unit rather than print 1000.0", () => {
    expect(formatBytes(999_960)).toBe("1.0 MB");
    expect(formatBytes(999_940)).toBe("999.9 kB");
  });

  it("stays at the largest unit and rejects nonsense", () => {
    expect(formatBytes(2_000_000_000_000_000)).toBe("2000.0 TB");
    expect(formatBytes(-1)).toBe("—");
    expect(formatBytes(Number.NaN)).toBe("—");
  });
});

describe("percent", () => {
  it("is whole, and 100 only when everything is in", () => {
    expect(percent(0, 100)).toBe(0);
    expect(percent(12_300_000, 98_400_000)).toBe(12);
    expect(percent(98_399_999, 98_400_000)).toBe(99);
    expect(percent(98_400_000, 98_400_000)).toBe(100);
    expect(percent(200, 100)).toBe(100);
  });

  it("is 0 when the total is unknown", () => {
    expect(percent(50, 0)).toBe(0);
    expect(percent(50, Number.NaN)).toBe(0);
    expect(percent(-5, 100)).toBe(0);
  });
});

describe("progressText", () => {
  it("reads like a download dialog", () => {
    expect(progressText(12_300_000, 98_400_000)).toBe("12.3 MB of 98.4 MB (12%)");
    expect(progressText(0, 98_362_432)).toBe("0 B of 98.4 MB (0%)");
    expect(progressText(98_362_432, 98_362_432)).toBe("98.4 MB of 98.4 MB (100%)");
  });

  it("never shows more done than the total, and copes without one", () => {
    expect(progressText(120, 100)).toBe("100 B of 100 B (100%)");
    expect(progressText(5_000, 0)).toBe("5.0 kB");
  });
});
