// The chat header's usage (docs/models.md "Cost and limits", docs/ui.md): the tokens and the
// cost, the chat's and today's (against the daily budget, marked past 80% of it), read with
// `usage` and followed by each `turn_usage` (this chat's, and any other's for today), with
// what has no price marked, and the provider's rate limits in the tooltip.

import { act, useState } from "react";
import { createRoot, type Root } from "react-dom/client";
import { afterEach, describe, expect, it, vi } from "vitest";
import { TransportContext } from "../app/context";
import type { Event, RateLimitInfo } from "../protocol";
import { FakeTransport } from "../test/fakeTransport";
import { settle } from "../test/settle";
import { UsageChips } from "./Usage";

let container: HTMLDivElement;
let root: Root | null = null;
let setRunning: (r: boolean) => void = () => {};

function Header() {
  const [running, set] = useState(false);
  setRunning = set;
  return <UsageChips sessionId={1} running={running} />;
}

async function render(server: FakeTransport) {
  container = document.createElement("div");
  document.body.appendChild(container);
  root = createRoot(container);
  await act(async () => {
    root!.render(
      <TransportContext.Provider value={server}>
        <Header />
      </TransportContext.Provider>,
    );
  });
  await settle();
}

afterEach(async () => {
  if (!root) return;
  await act(async () => root!.unmount());
  root = null;
  container.remove();
});

const q = (id: string) => container.querySelector<HTMLElement>(`[data-testid='${id}']`);

const turnUsage = (over: Partial<Extract<Event, { type: "turn_usage" }>> = {}): Extract<Event, { type: "turn_usage" }> => ({
  type: "turn_usage",
  session_id: 1,
  requests: 2,
  input_tokens: 800,
  output_tokens: 100,
  cost_usd: 0.0042,
  unpriced: 0,
  chat_cost_usd: 0.0165,
  today_cost_usd: 0.4042,
  ...over,
});

describe("the chat header's usage", () => {
  it("shows the chat's tokens and cost and today's, broken down in the tooltip", async () => {
    const server = new FakeTransport();
    server.usage.set(1, { requests: 3, input_tokens: 1234, output_tokens: 567, cost_usd: 0.0123, unpriced: 0 });
    server.today = 0.4;
    await render(server);
    expect(server.sent("usage")).toEqual([{ cmd: "usage", session_id: 1 }]);
    expect(q("token-usage")?.textContent).toBe("1.2k in · 567 out");
    const cost = q("cost-usage")!;
    expect(cost.textContent).toBe("$0.0123 · today $0.40");
    expect(cost.title.split("\n")).toEqual([
      "This chat: 3 model calls, 1,234 tokens in, 567 out — $0.0123",
      "Today, every chat and task: $0.40",
      "At the prices known when each call was made.",
    ]);
    expect(cost.dataset.unpriced).toBe("0");
  });

  it("follows each turn: this chat's cost and its last turn, any chat's today", async () => {
    const server = new FakeTransport();
    server.usage.set(1, { requests: 3, input_tokens: 1234, output_tokens: 567, cost_usd: 0.0123, unpriced: 0 });
    server.today = 0.4;
    await render(server);
    await act(async () => setRunning(true));
    await act(async () => server.emit(1, turnUsage()));
    const cost = q("cost-usage")!;
    expect(cost.textContent).toBe("$0.0165 · today $0.40");
    expect(q("token-usage")?.textContent).toBe("2.0k in · 667 out");
    expect(cost.title).toContain("Last turn: 2 model calls, 800 tokens in, 100 out — $0.0042");
    // Another chat's turn moves today's sum only.
    await act(async () => server.emit(5, turnUsage({ session_id: 5, chat_cost_usd: 3, today_cost_usd: 1.25 })));
    expect(cost.textContent).toBe("$0.0165 · today $1.25");
    // The turn's end reads the chat's usage again; the last turn stays in the tooltip.
    server.usage.set(1, { requests: 5, input_tokens: 2034, output_tokens: 667, cost_usd: 0.0165, unpriced: 0 });
    server.today = 1.25;
    await act(async () => setRunning(false));
    await settle();
    expect(server.count("usage")).toBe(2);
    expect(q("cost-usage")!.title).toContain("This chat: 5 model calls, 2,034 tokens in, 667 out — $0.0165");
    expect(q("cost-usage")!.title).toContain("Last turn: 2 model calls");
  });

  it("marks calls of models with no known price", async () => {
    const server = new FakeTransport();
    server.usage.set(1, { requests: 3, input_tokens: 30, output_tokens: 15, cost_usd: 0.01, unpriced: 1 });
    server.today = 0.4;
    await render(server);
    const cost = q("cost-usage")!;
    expect(cost.textContent).toBe("$0.0100+ · today $0.40");
    expect(cost.dataset.unpriced).toBe("1");
    expect(cost.title).toContain("1 model call of models with no known price is not counted");
    await act(async () => server.emit(1, turnUsage({ requests: 1, unpriced: 1, cost_usd: 0, chat_cost_usd: 0.01 })));
    expect(q("cost-usage")!.dataset.unpriced).toBe("2");
    expect(q("cost-usage")!.title).toContain("Last turn: 1 model call, 800 tokens in, 100 out — $0.00 (1 unpriced)");
  });

  it("says no price when none of the chat's calls had one, and only today's before any", async () => {
    const server = new FakeTransport();
    server.usage.set(1, { requests: 1, input_tokens: 10, output_tokens: 5, cost_usd: 0, unpriced: 1 });
    server.today = 0.4;
    await render(server);
    expect(q("cost-usage")!.textContent).toBe("no price · today $0.40");
    await act(async () => root!.unmount());
    root = null;
    container.remove();

    const fresh = new FakeTransport();
    fresh.today = 0.4;
    await render(fresh);
    expect(q("token-usage")).toBeNull();
    expect(q("cost-usage")!.textContent).toBe("today $0.40");
    const none = new FakeTransport();
    await act(async () => root!.unmount());
    root = null;
    container.remove();
    await render(none);
    expect(q("cost-usage")).toBeNull();
  });

  it("shows today against the daily budget, warning past 80% of it", async () => {
    const server = new FakeTransport();
    server.usage.set(1, { requests: 3, input_tokens: 1234, output_tokens: 567, cost_usd: 0.0123, unpriced: 0, daily_budget_usd: 5 });
    server.today = 0.4;
    await render(server);
    const cost = () => q("cost-usage")!;
    expect(cost().textContent).toBe("$0.0123 · today $0.40 of $5.00");
    expect(cost().dataset.budget).toBe("ok");
    expect(cost().className).not.toContain("budget-");
    expect(cost().title).toContain("Today, every chat and task: $0.40\nDaily budget: $5.00, 8% spent — a turn that would pass it asks first");
    // Another chat's turn takes today past 80%: marked.
    await act(async () => server.emit(5, turnUsage({ session_id: 5, today_cost_usd: 4.5 })));
    expect(cost().textContent).toBe("$0.0123 · today $4.50 of $5.00");
    expect(cost().dataset.budget).toBe("warn");
    expect(cost().className).toContain("budget-warn");
    expect(cost().title).toContain("Daily budget: $5.00, 90% spent");
    // This chat's turn passes it; the budget stays through the turn's usage.
    await act(async () => server.emit(1, turnUsage({ today_cost_usd: 5.25 })));
    expect(cost().textContent).toBe("$0.0165 · today $5.25 of $5.00");
    expect(cost().dataset.budget).toBe("over");
    expect(cost().className).toContain("budget-over");
    expect(cost().title).toContain("Daily budget: $5.00, 105% spent — passed: the next turn asks first");
  });

  it("shows a budget before the chat or today spent anything", async () => {
    const server = new FakeTransport();
    server.usage.set(1, { requests: 0, input_tokens: 0, output_tokens: 0, cost_usd: 0, unpriced: 0, daily_budget_usd: 5 });
    await render(server);
    expect(q("token-usage")).toBeNull();
    expect(q("cost-usage")!.textContent).toBe("today $0.00 of $5.00");
  });

  it("shows the provider's rate limits in the tooltip, followed by rate_limits events", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      const now = 1_760_000_000_000;
      vi.setSystemTime(now);
      const openai = (remaining: number, seen_at: number): RateLimitInfo => ({
        provider: "openai",
        requests: { limit: 50, remaining, resets_at: now + 360_000 },
        tokens: { limit: 30_000, remaining: 28_500, resets_at: now + 360_000 },
        seen_at,
      });
      const server = new FakeTransport();
      server.usage.set(1, { requests: 3, input_tokens: 1234, output_tokens: 567, cost_usd: 0.0123, unpriced: 0, rate_limits: openai(41, now - 1000) });
      server.today = 0.4;
      await render(server);
      const cost = () => q("cost-usage")!;
      expect(cost().dataset.rateLimits).toBe("openai");
      expect(cost().title.split("\n").at(-1)).toBe("Rate limits, openai: 41/50 requests, 28.5k/30k tokens left; resets in 6m");
      // The pointer over the chip counts from then.
      vi.setSystemTime(now + 60_000);
      await act(async () => cost().dispatchEvent(new MouseEvent("mouseover", { bubbles: true })));
      expect(cost().title.split("\n").at(-1)).toBe("Rate limits, openai: 41/50 requests, 28.5k/30k tokens left; resets in 5m");
      // This chat's call states them again.
      await act(async () => server.emit(1, { type: "rate_limits", session_id: 1, limits: openai(40, now + 61_000) }));
      expect(cost().title).toContain("openai: 40/50 requests");
      // Another chat's call of the same provider does too; of another provider, not.
      await act(async () => server.emit(5, { type: "rate_limits", session_id: 5, limits: openai(39, now + 62_000) }));
      expect(cost().title).toContain("openai: 39/50 requests");
      await act(async () => server.emit(5, { type: "rate_limits", session_id: 5, limits: { provider: "anthropic", requests: { limit: 9, remaining: 1 }, seen_at: now + 63_000 } }));
      expect(cost().title).toContain("openai: 39/50 requests");
      expect(cost().title).not.toContain("anthropic");
      // An older statement arriving late does not undo a newer one.
      await act(async () => server.emit(1, { type: "rate_limits", session_id: 1, limits: openai(45, now) }));
      expect(cost().title).toContain("openai: 39/50 requests");
      // The turn's usage keeps them.
      await act(async () => server.emit(1, turnUsage()));
      expect(cost().title).toContain("openai: 39/50 requests");
    } finally {
      vi.useRealTimers();
    }
  });

  it("says nothing of rate limits when the provider states none", async () => {
    const server = new FakeTransport();
    server.usage.set(1, { requests: 1, input_tokens: 10, output_tokens: 5, cost_usd: 0.001, unpriced: 0 });
    await render(server);
    expect(q("cost-usage")!.title).not.toContain("Rate limits");
    expect(q("cost-usage")!.dataset.rateLimits).toBeUndefined();
    // Another chat's limits are not this chat's provider's.
    await act(async () => server.emit(5, { type: "rate_limits", session_id: 5, limits: { provider: "openai", requests: { limit: 50, remaining: 41 }, seen_at: 1 } }));
    expect(q("cost-usage")!.title).not.toContain("Rate limits");
    // This chat's own call says what its provider is.
    await act(async () => server.emit(1, { type: "rate_limits", session_id: 1, limits: { provider: "openai", requests: { limit: 50, remaining: 41 }, seen_at: 2 } }));
    expect(q("cost-usage")!.title.split("\n").at(-1)).toBe("Rate limits, openai: 41/50 requests left");
  });
});
