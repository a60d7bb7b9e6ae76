import { describe, expect, it } from "vitest";
import type { RateLimitInfo } from "../protocol";
import { formatDuration, limitCount, rateLimitLine, rateLimitLow, withLimits } from "./limits";

const NOW = 1_760_000_000_000;

describe("rate limits in words", () => {
  it("writes waits as people read them, rounded up to the second", () => {
    expect(formatDuration(0)).toBe("0s");
    expect(formatDuration(1)).toBe("1s");
    expect(formatDuration(45_000)).toBe("45s");
    expect(formatDuration(130_000)).toBe("2m 10s");
    expect(formatDuration(360_000)).toBe("6m");
    expect(formatDuration(3_900_000)).toBe("1h 5m");
    expect(formatDuration(7_200_000)).toBe("2h");
    expect(formatDuration(183_600_000)).toBe("2d 3h");
  });

  it("writes counts short", () => {
    expect(limitCount(41)).toBe("41");
    expect(limitCount(1234)).toBe("1.2k");
    expect(limitCount(28_500)).toBe("28.5k");
    expect(limitCount(30_000)).toBe("30k");
    expect(limitCount(2_000_000)).toBe("2M");
  });

  it("says what is left of each window and when it resets", () => {
    const r: RateLimitInfo = {
      provider: "openai",
      requests: { limit: 50, remaining: 41, resets_at: NOW + 360_000 },
      tokens: { limit: 30_000, remaining: 28_500, resets_at: NOW + 360_000 },
      seen_at: NOW,
    };
    expect(rateLimitLine(r, NOW)).toBe("openai: 41/50 requests, 28.5k/30k tokens left; resets in 6m");
    // Windows resetting at different times say each.
    expect(rateLimitLine({ ...r, tokens: { ...r.tokens, resets_at: NOW + 12_000 } }, NOW)).toBe(
      "openai: 41/50 requests, 28.5k/30k tokens left; requests reset in 6m, tokens in 12s",
    );
    expect(rateLimitLine(r, NOW + 400_000)).toBe("openai: 41/50 requests, 28.5k/30k tokens left; reset by now");
    // What a provider leaves out is left out.
    expect(rateLimitLine({ provider: "groq", requests: { remaining: 7 }, seen_at: NOW }, NOW)).toBe("groq: 7 requests left");
    expect(rateLimitLine({ provider: "groq", tokens: { limit: 6000 }, seen_at: NOW }, NOW)).toBe("groq: ?/6k tokens left");
    expect(rateLimitLine({ provider: "x", seen_at: NOW }, NOW)).toBe("x: no limits stated");
  });

  it("marks a window a tenth or less of which is left", () => {
    expect(rateLimitLow({ provider: "a", requests: { limit: 50, remaining: 5 }, seen_at: 0 })).toBe(true);
    expect(rateLimitLow({ provider: "a", requests: { limit: 50, remaining: 6 }, tokens: { limit: 1000, remaining: 100 }, seen_at: 0 })).toBe(true);
    expect(rateLimitLow({ provider: "a", requests: { limit: 50, remaining: 6 }, seen_at: 0 })).toBe(false);
    expect(rateLimitLow({ provider: "a", requests: { remaining: 0 }, seen_at: 0 })).toBe(false);
  });

  it("keeps each provider's latest, by provider", () => {
    const a = (seen_at: number, remaining = 1): RateLimitInfo => ({ provider: "openai", requests: { remaining }, seen_at });
    const b: RateLimitInfo = { provider: "anthropic", seen_at: 5 };
    let list = withLimits([], a(1));
    list = withLimits(list, b);
    expect(list.map((r) => r.provider)).toEqual(["anthropic", "openai"]);
    list = withLimits(list, a(3, 2));
    expect(list[1]!.requests?.remaining).toBe(2);
    // An older statement arriving late is not kept.
    expect(withLimits(list, a(2, 9))).toBe(list);
  });
});
