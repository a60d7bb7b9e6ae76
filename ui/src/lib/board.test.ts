// The board in words: durations, tokens, cost with unpriced calls, files changed, where an
// agent works, what each filter shows, and the time of a running turn ticking on.

import { describe, expect, it } from "vitest";
import type { BoardAgent } from "../protocol";
import { agentTitle, changesText, changesTitle, costText, filterAgents, filterCounts, formatDuration, formatTokens, isTicking, oneLine, stateText, tokensText, whereText, workedMs } from "./board";

function agent(over: Partial<BoardAgent> = {}): BoardAgent {
  return {
    session_id: 1,
    title: "Tidy the draft",
    agent_id: "main",
    kind: "interactive",
    state: "done",
    folder: "/home/me/paper",
    created_at: 1,
    updated_at: 1,
    active_ms: 0,
    input_tokens: 0,
    output_tokens: 0,
    cost_usd: 0,
    unpriced: 0,
    changes: { files: 0, added: 0, removed: 0 },
    waiting: 0,
    ...over,
  };
}

describe("the board's words", () => {
  it("says how long an agent worked", () => {
    expect(formatDuration(0)).toBe("–");
    expect(formatDuration(400)).toBe("0s");
    expect(formatDuration(45_000)).toBe("45s");
    expect(formatDuration(192_000)).toBe("3m 12s");
    expect(formatDuration(3_900_000)).toBe("1h 05m");
    expect(formatDuration(2 * 86_400_000 + 4 * 3_600_000)).toBe("2d 4h");
  });

  it("counts tokens in and out together, shortly", () => {
    expect(formatTokens(950)).toBe("950");
    expect(formatTokens(1000)).toBe("1k");
    expect(formatTokens(41_234)).toBe("41.2k");
    expect(formatTokens(999_960)).toBe("1M");
    expect(formatTokens(1_250_000)).toBe("1.3M");
    expect(tokensText(agent())).toBe("–");
    expect(tokensText(agent({ input_tokens: 40_000, output_tokens: 1_234 }))).toBe("41.2k");
  });

  it("says the cost, with + when some calls had no known price", () => {
    expect(costText(agent())).toBe("–");
    expect(costText(agent({ input_tokens: 10, cost_usd: 0.0123 }))).toBe("$0.0123");
    expect(costText(agent({ input_tokens: 10, cost_usd: 0.4, unpriced: 2 }))).toBe("$0.40+");
    expect(costText(agent({ input_tokens: 10, unpriced: 3 }))).toBe("no price");
    expect(costText(agent({ input_tokens: 10 }))).toBe("$0.00");
  });

  it("says what changed, or – when nothing did", () => {
    expect(changesText(agent())).toBe("–");
    expect(changesTitle(agent())).toBe("No files changed");
    const a = agent({ changes: { files: 3, added: 41, removed: 7 } });
    expect(changesText(a)).toBe("3 files +41 −7");
    expect(changesTitle(a)).toBe("3 files changed from before its first change to after its last: 41 lines added, 7 removed");
    expect(changesText(agent({ changes: { files: 1, added: 1, removed: 0 } }))).toBe("1 file +1 −0");
  });

  it("says where it works: its folder, or the person's folder and the worktree", () => {
    expect(whereText(agent())).toBe("/home/me/paper");
    expect(whereText(agent({ folder: "/d-worktrees/paper-1", worktree: "paper-1", source: "/home/me/paper" }))).toBe("/home/me/paper · worktree paper-1");
    const { folder: _none, ...noFolder } = agent();
    expect(whereText(noFolder)).toBe("the server's folder");
  });

  it("names an untitled agent, and keeps its last message to one line", () => {
    expect(agentTitle(agent({ title: "  " }))).toBe("Untitled");
    expect(oneLine("Done.\n\n- one\n- two  ")).toBe("Done. - one - two");
  });

  it("says how many items an agent waits on", () => {
    expect(stateText(agent({ state: "waiting", waiting: 2 }))).toBe("waiting · 2");
    expect(stateText(agent({ state: "queued" }))).toBe("queued");
  });

  it("filters the active and the finished", () => {
    const all = (["queued", "working", "waiting", "done", "failed", "stopped", "interrupted", "idle"] as const).map((state, i) => agent({ session_id: i + 1, state }));
    expect(filterAgents(all, "all")).toHaveLength(8);
    expect(filterAgents(all, "active").map((a) => a.state)).toEqual(["queued", "working", "waiting"]);
    expect(filterAgents(all, "finished").map((a) => a.state)).toEqual(["done", "failed", "stopped", "interrupted"]);
    expect(filterCounts(all)).toEqual({ all: 8, active: 3, finished: 4 });
  });

  it("ticks a running turn's time on from when the board was read", () => {
    const working = agent({ state: "working", active_ms: 10_000, turn_started_at: 5 });
    expect(isTicking(working)).toBe(true);
    expect(workedMs(working, 1000, 4000)).toBe(13_000);
    const done = agent({ state: "done", active_ms: 10_000, turn_started_at: 5 });
    expect(isTicking(done)).toBe(false);
    expect(workedMs(done, 1000, 4000)).toBe(10_000);
    expect(isTicking(agent({ state: "queued" }))).toBe(false);
  });
});
