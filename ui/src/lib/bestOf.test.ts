import { describe, expect, it } from "vitest";
import type { BoardAgent, ModelOption, SessionInfo, WorktreeInfo } from "../protocol";
import { CONFIGURED, TYPED, agentLetter, agentModel, bestOfCommand, bestOfProblems, columnState, hasProblems, isActive, trialColumns, type AgentDraft } from "./bestOf";

const MODELS: ModelOption[] = [
  { label: "openai/gpt-4.1", sees_images: true, takes_effort: false, default: true },
  { label: "openai/o3-mini", sees_images: false, takes_effort: true, default: false },
];
const agent = (id: number, pick: string, typed = ""): AgentDraft => ({ id, pick, typed });

describe("the Best of N dialog's agents", () => {
  it("sends the configured model as null, a listed one by its label, a typed one as typed (a bare listed name resolved)", () => {
    expect(agentModel(agent(1, CONFIGURED), MODELS)).toBeNull();
    expect(agentModel(agent(1, "openai/o3-mini"), MODELS)).toBe("openai/o3-mini");
    expect(agentModel(agent(1, TYPED, " anthropic/claude-x "), MODELS)).toBe("anthropic/claude-x");
    expect(agentModel(agent(1, TYPED, "o3-mini"), MODELS)).toBe("openai/o3-mini");
    expect(bestOfCommand("Do it", [agent(1, CONFIGURED), agent(2, "openai/o3-mini"), agent(3, TYPED, "openai/other")], MODELS)).toEqual({
      cmd: "best_of",
      text: "Do it",
      models: [null, "openai/o3-mini", "openai/other"],
    });
    expect(bestOfCommand("Do it", [agent(1, CONFIGURED), agent(2, CONFIGURED)], MODELS, "/home/me/paper").working_dir).toBe("/home/me/paper");
  });

  it("says what is wrong before anything is sent: the prompt, how many agents, each typed model", () => {
    const ok = bestOfProblems("Write it", [agent(1, CONFIGURED), agent(2, CONFIGURED)], MODELS);
    expect(hasProblems(ok)).toBe(false);
    const bad = bestOfProblems("  \n", [agent(1, TYPED, ""), agent(2, TYPED, "gpt-5"), agent(3, TYPED, "openai/x"), agent(4, CONFIGURED), agent(5, CONFIGURED)], MODELS);
    expect(bad.text).toBe("Write the prompt the agents are given.");
    expect(bad.count).toBe("Best of N takes 2 to 4 agents.");
    expect(bad.agents).toEqual({ 1: "Type a model, as provider/model.", 2: "Name a provider and a model, as provider/model (not “gpt-5”)." });
    expect(bestOfProblems("x", [agent(1, CONFIGURED)], MODELS).count).toBe("Best of N takes 2 to 4 agents.");
    expect(hasProblems(bad)).toBe(true);
    expect([0, 1, 2, 3].map(agentLetter)).toEqual(["A", "B", "C", "D"]);
  });
});

const wt = (name: string, session_id: number | null): WorktreeInfo => ({
  id: session_id ?? 0,
  name,
  session_id,
  source: "/home/me/paper",
  root: `/d/${name}`,
  working_dir: `/d/${name}`,
  kind: "copy",
  status: "active",
  created_at: 1,
  trial: "paper-try1",
});
const chat = (id: number, over: Partial<SessionInfo> = {}): SessionInfo => ({ id, title: `Chat ${id}`, agent_id: "main", kind: "interactive", working_dir: "/w", created_at: 1, updated_at: 1, running: false, mode: "act", ...over });
const row = (session_id: number, over: Partial<BoardAgent> = {}): BoardAgent => ({
  session_id,
  title: "",
  agent_id: "main",
  kind: "interactive",
  state: "done",
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
});

describe("a trial's columns", () => {
  it("an agent's state: the chat's queued and running first, then the board's", () => {
    expect(columnState(chat(1, { running: true, queued: true }), row(1, { state: "working" }))).toBe("queued");
    expect(columnState(chat(1, { running: true }), undefined)).toBe("working");
    expect(columnState(chat(1, { running: true }), row(1, { state: "waiting" }))).toBe("waiting");
    expect(columnState(chat(1, { running: true }), row(1, { state: "done" }))).toBe("working");
    expect(columnState(chat(1), row(1, { state: "failed" }))).toBe("failed");
    // The board read before the turn ended still says it works: it ended.
    expect(columnState(chat(1), row(1, { state: "working" }))).toBe("done");
    expect(columnState(chat(1), undefined)).toBe("idle");
    expect(columnState(undefined, undefined)).toBe("idle");
    expect(["queued", "working", "waiting", "done", "idle"].map((s) => isActive(s as never))).toEqual([true, true, true, false, false]);
  });

  it("one column per worktree, by letter, with its chat, its board row and its model", () => {
    const cols = trialColumns([wt("paper-try1-b", 2), wt("paper-try1-a", 1), wt("paper-try1-c", null)], [chat(1), chat(2, { model: "openai/o3-mini", running: true })], [row(1, { last_message: "Done." })]);
    expect(cols.map((c) => [c.letter, c.state, c.model, c.session?.id ?? null, c.agent?.last_message ?? null])).toEqual([
      ["A", "done", null, 1, "Done."],
      ["B", "working", "openai/o3-mini", 2, null],
      ["C", "idle", null, null, null],
    ]);
  });
});
