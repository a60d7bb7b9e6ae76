import { describe, expect, it } from "vitest";
import { budgetLabel, budgetLevel, costLabel, costTitle, formatUsd, type ChatUsage } from "./cost";

const usage = (over: Partial<ChatUsage> = {}): ChatUsage => ({ requests: 3, input: 1234, output: 567, cost: 0.0123, unpriced: 0, today: 0.4, ...over });

describe("cost in words", () => {
  it("writes dollars with four decimals while small", () => {
    expect(formatUsd(0)).toBe("$0.00");
    expect(formatUsd(-1)).toBe("$0.00");
    expect(formatUsd(Number.NaN)).toBe("$0.00");
    expect(formatUsd(0.00002)).toBe("<$0.0001");
    expect(formatUsd(0.0123)).toBe("$0.0123");
    expect(formatUsd(0.4)).toBe("$0.40");
    expect(formatUsd(12.5)).toBe("$12.50");
    expect(formatUsd(12345.6)).toBe("$12,346");
  });

  it("labels the chat's cost and today's, marking what has no price", () => {
    expect(costLabel(usage())).toBe("$0.0123 · today $0.40");
    expect(costLabel(usage({ unpriced: 1 }))).toBe("$0.0123+ · today $0.40");
    expect(costLabel(usage({ unpriced: 3, cost: 0 }))).toBe("no price · today $0.40");
    expect(costLabel(usage({ requests: 0, cost: 0 }))).toBe("today $0.40");
  });

  it("breaks it down in the tooltip", () => {
    expect(costTitle(usage({ last: { requests: 1, input: 10, output: 5, cost: 0.004, unpriced: 0 } })).split("\n")).toEqual([
      "This chat: 3 model calls, 1,234 tokens in, 567 out — $0.0123",
      "Last turn: 1 model call, 10 tokens in, 5 out — $0.0040",
      "Today, every chat and task: $0.40",
      "At the prices known when each call was made.",
    ]);
    expect(costTitle(usage({ unpriced: 2 }))).toContain("2 model calls of models with no known price are not counted: set their price in config.toml's [models.prices].");
  });

  it("measures today against the daily budget", () => {
    expect(budgetLabel(0.42, 5)).toBe("$0.42 of $5.00 today");
    expect(budgetLevel(4, 5)).toBe("ok");
    expect(budgetLevel(4.01, 5)).toBe("warn");
    expect(budgetLevel(5, 5)).toBe("over");
    expect(costLabel(usage({ budget: 5 }))).toBe("$0.0123 · today $0.40 of $5.00");
    expect(costLabel(usage({ requests: 0, budget: 5 }))).toBe("today $0.40 of $5.00");
    expect(costTitle(usage({ budget: 5 })).split("\n")).toEqual([
      "This chat: 3 model calls, 1,234 tokens in, 567 out — $0.0123",
      "Today, every chat and task: $0.40",
      "Daily budget: $5.00, 8% spent — a turn that would pass it asks first",
      "At the prices known when each call was made.",
    ]);
  });

  it("ends the tooltip with the provider's rate limits", () => {
    const now = 1_760_000_000_000;
    const title = costTitle(usage({ limits: { provider: "openai", requests: { limit: 50, remaining: 41, resets_at: now + 360_000 }, seen_at: now } }), now);
    expect(title.split("\n").at(-1)).toBe("Rate limits, openai: 41/50 requests left; resets in 6m");
  });
});
