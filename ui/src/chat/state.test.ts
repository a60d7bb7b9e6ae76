import { describe, expect, it } from "vitest";
import { chatReducer, emptyChat, latestTodos, staleAssistants, type ChatState, type Item } from "./state";
import type { ChatMessage, Event, Reply, Role, ToolCallInfo, ToolCallStatus } from "../protocol";

const ev = (s: ChatState, ...events: Event[]) => events.reduce((st, e) => chatReducer(st, { type: "event", event: e }), s);
const kinds = (items: Item[]) => items.map((i) => i.kind);

function msg(id: number, role: Role, content: string, extra: Partial<ChatMessage> = {}): ChatMessage {
  return { id, stack_id: null, role, content, html: role === "assistant" ? `<p>${content}</p>` : null, reasoning: null, status: "complete", synthetic: false, created_at: 0, ...extra };
}
function call(id: string, messageId: number | null, extra: Partial<ToolCallInfo> = {}): ToolCallInfo {
  return { tool_call_id: id, message_id: messageId, stack_id: null, name: "read_file", arguments: { path: "/a" }, label_short: "read a", label_full: "read /a", path: "/a", status: "done", result: "ok", ...extra };
}
function history(messages: ChatMessage[], tool_calls: ToolCallInfo[] = [], running = false): Extract<Reply, { cmd: "history" }> {
  return {
    cmd: "history",
    session: { id: 1, title: "t", agent_id: "a", kind: "interactive", working_dir: null, created_at: 0, updated_at: 0, running },
    messages,
    tool_calls,
    has_more: false,
  };
}

describe("history", () => {
  it("hides tool and system messages and places tool cards after their message", () => {
    const s = chatReducer(emptyChat(1), {
      type: "history",
      reply: history(
        [msg(1, "system", "sys"), msg(2, "user", "hi"), msg(3, "assistant", "let me look"), msg(4, "tool", "ok"), msg(5, "assistant", "done")],
        [call("c1", 3)],
      ),
    });
    expect(s.loaded).toBe(true);
    expect(kinds(s.items)).toEqual(["user", "assistant", "tool", "assistant"]);
    const tool = s.items[2] as Extract<Item, { kind: "tool" }>;
    expect(tool.tool.status).toBe("done");
    expect(tool.tool.path).toBe("/a");
    expect((s.items[1] as Extract<Item, { kind: "assistant" }>).html).toBe("<p>let me look</p>");
  });

  it("groups sub-agent messages, collapsed", () => {
    const s = chatReducer(emptyChat(1), {
      type: "history",
      reply: history([msg(1, "user", "go"), msg(2, "assistant", "delegating"), msg(3, "assistant", "sub work", { stack_id: 7 }), msg(4, "assistant", "back")], [call("t", 2, { name: "task" }), call("s1", 3, { stack_id: 7 })]),
    });
    expect(kinds(s.items)).toEqual(["user", "assistant", "tool", "agent", "assistant"]);
    const g = s.items[3] as Extract<Item, { kind: "agent" }>;
    expect(g.expanded).toBe(false);
    expect(kinds(g.children)).toEqual(["assistant", "tool"]);
  });

  it("shows each stored tool call status as it is", () => {
    const stored: ToolCallStatus[] = ["running", "pending", "done", "failed", "cancelled", "rejected", "interrupted"];
    const s = chatReducer(emptyChat(1), { type: "history", reply: history([], stored.map((status, i) => call(`c${i}`, null, { status }))) });
    expect(s.items.map((i) => (i.kind === "tool" ? i.tool.status : i.kind))).toEqual(stored);
  });
});

describe("live events", () => {
  const loaded = () => chatReducer(emptyChat(1), { type: "history", reply: history([]) });

  it("streams tokens into one bubble and finishes on done", () => {
    let s = ev(loaded(), { type: "turn_running", session_id: 1 }, { type: "user_message", session_id: 1, message_id: 10, text: "hi" });
    expect(s.running).toBe(true);
    s = ev(s, { type: "token_delta", text: "Hel" }, { type: "token_delta", text: "lo" });
    expect(kinds(s.items)).toEqual(["user", "assistant"]);
    const a = s.items[1] as Extract<Item, { kind: "assistant" }>;
    expect(a.text).toBe("Hello");
    expect(a.streaming).toBe(true);
    expect(staleAssistants(s.items).map((x) => x.key)).toEqual([a.key]);
    s = ev(s, { type: "done", session_id: 1, outcome: "final", text: "Hello" });
    expect(s.running).toBe(false);
    expect((s.items[1] as Extract<Item, { kind: "assistant" }>).streaming).toBe(false);
    // The final text was streamed already: no duplicate bubble.
    expect(kinds(s.items)).toEqual(["user", "assistant"]);
  });

  it("says how far a long prompt is read until the answer starts", () => {
    let s = ev(loaded(), { type: "user_message", session_id: 1, message_id: 10, text: "hi" }, { type: "prompt_progress", read: 512, total: 2048 });
    expect(s.reading).toEqual({ read: 512, total: 2048 });
    s = ev(s, { type: "prompt_progress", read: 1536, total: 2048 });
    expect(s.reading).toEqual({ read: 1536, total: 2048 });
    expect(ev(s, { type: "prompt_progress", read: 2048, total: 2048 }).reading).toBeNull();
    s = ev(s, { type: "token_delta", text: "Hi" });
    expect(s.reading).toBeNull();
    expect(s.running).toBe(true);
    const stopped = ev(loaded(), { type: "prompt_progress", read: 10, total: 2048 }, { type: "done", session_id: 1, outcome: "cancelled", text: "" });
    expect(stopped.reading).toBeNull();
  });

  it("adds the final answer when nothing was streamed", () => {
    const s = ev(loaded(), { type: "user_message", session_id: 1, message_id: 1, text: "q" }, { type: "done", session_id: 1, outcome: "final", text: "answer" });
    expect(kinds(s.items)).toEqual(["user", "assistant"]);
    expect((s.items[1] as Extract<Item, { kind: "assistant" }>).text).toBe("answer");
  });

  it("stores rendered html only for the text it was rendered from", () => {
    let s = ev(loaded(), { type: "token_delta", text: "a" });
    const key = s.items[0]!.key;
    s = chatReducer(s, { type: "html", key, html: "<p>a</p>", forText: "a" });
    expect(staleAssistants(s.items)).toEqual([]);
    s = ev(s, { type: "token_delta", text: "b" });
    expect(staleAssistants(s.items)).toHaveLength(1);
  });

  it("tracks a tool call through approval to done, splitting text around it", () => {
    let s = ev(
      loaded(),
      { type: "token_delta", text: "I'll write it." },
      { type: "tool_start", tool_call_id: "c1", name: "write_file", arguments: { path: "/x" }, label_short: "write x", label_full: "write /x", path: "/x" },
      { type: "approval_required", tool_call_id: "c1", name: "write_file", arguments: {}, label: "write /x", reason: "writes", inbox_id: 5 },
    );
    let tool = s.items[1] as Extract<Item, { kind: "tool" }>;
    expect(tool.tool.status).toBe("waiting");
    expect(tool.tool.inboxId).toBe(5);
    expect((s.items[0] as Extract<Item, { kind: "assistant" }>).streaming).toBe(false);
    s = ev(s, { type: "inbox_resolved", id: 5, session_id: 1, status: "approved" }, { type: "tool_done", tool_call_id: "c1", result: "wrote 3 bytes" }, { type: "token_delta", text: "Done." });
    tool = s.items[1] as Extract<Item, { kind: "tool" }>;
    expect(tool.tool.status).toBe("done");
    expect(tool.tool.inboxId).toBeNull();
    expect(tool.tool.result).toBe("wrote 3 bytes");
    expect(kinds(s.items)).toEqual(["assistant", "tool", "assistant"]);
  });

  it("maps tool endings to statuses", () => {
    const start = (id: string): Event => ({ type: "tool_start", tool_call_id: id, name: "x", arguments: null, label_short: id, label_full: id });
    const s = ev(
      loaded(),
      start("a"),
      start("b"),
      start("c"),
      start("d"),
      { type: "tool_error", tool_call_id: "a", error: "boom" },
      { type: "tool_cancelled", tool_call_id: "b" },
      { type: "tool_rejected", tool_call_id: "c", reason: "no" },
    );
    const statuses = s.items.map((i) => (i.kind === "tool" ? i.tool.status : null));
    expect(statuses).toEqual(["failed", "cancelled", "rejected", "running"]);
    const stopped = ev(s, { type: "done", session_id: 1, outcome: "cancelled", text: "" });
    expect(stopped.items.map((i) => (i.kind === "tool" ? i.tool.status : i.kind))).toEqual(["failed", "cancelled", "rejected", "cancelled", "notice"]);
    const failed = ev(s, { type: "done", session_id: 1, outcome: "failed", text: "" });
    expect(failed.items.map((i) => (i.kind === "tool" ? i.tool.status : i.kind))).toEqual(["failed", "cancelled", "rejected", "interrupted", "notice"]);
  });

  it("nests sub-agent events in a group while it runs", () => {
    const s = ev(
      loaded(),
      { type: "tool_start", tool_call_id: "t", name: "task", arguments: {}, label_short: "delegate", label_full: "delegate" },
      { type: "agent_start", stack_id: 2, agent_id: "researcher", depth: 1 },
      { type: "token_delta", text: "sub says" },
      { type: "tool_start", tool_call_id: "s1", name: "grep", arguments: {}, label_short: "grep", label_full: "grep" },
    );
    expect(kinds(s.items)).toEqual(["tool", "agent"]);
    const g = s.items[1] as Extract<Item, { kind: "agent" }>;
    expect(g.running && g.expanded).toBe(true);
    expect(kinds(g.children)).toEqual(["assistant", "tool"]);
    const after = ev(s, { type: "agent_done", stack_id: 2, agent_id: "researcher", outcome: "final" }, { type: "token_delta", text: "main again" });
    expect(kinds(after.items)).toEqual(["tool", "agent", "assistant"]);
    expect((after.items[1] as Extract<Item, { kind: "agent" }>).running).toBe(false);
    expect(after.stack).toEqual([]);
  });

  it("shows a message as queued and moves it when the turn picks it up", () => {
    let s = ev(loaded(), { type: "turn_running", session_id: 1 }, { type: "token_delta", text: "working" });
    s = chatReducer(s, { type: "local_send", key: "k1", text: "also this" });
    s = chatReducer(s, { type: "send_result", key: "k1", queued: true });
    expect((s.items[1] as Extract<Item, { kind: "user" }>).state).toBe("queued");
    s = ev(s, { type: "token_delta", text: " more" }, { type: "user_message", session_id: 1, message_id: 42, text: "also this" });
    const last = s.items[s.items.length - 1] as Extract<Item, { kind: "user" }>;
    expect(last.kind).toBe("user");
    expect(last.state).toBe("sent");
    expect(last.id).toBe(42);
    expect(s.items.filter((i) => i.kind === "user")).toHaveLength(1);
  });

  it("marks a failed send and keeps the text", () => {
    let s = chatReducer(loaded(), { type: "local_send", key: "k", text: "hello" });
    s = chatReducer(s, { type: "send_failed", key: "k", error: "offline" });
    expect(s.items[0]).toMatchObject({ kind: "user", state: "failed", error: "offline", text: "hello" });
  });

  it("shows model failures with a hint", () => {
    const s = ev(loaded(), { type: "llm_failed", message: "401 Unauthorized", retrying: false }, { type: "done", session_id: 1, outcome: "failed", text: "" });
    const notices = s.items.filter((i): i is Extract<Item, { kind: "notice" }> => i.kind === "notice");
    expect(notices).toHaveLength(2);
    expect(notices[0]!.message).toContain("401");
    expect(notices[0]!.hint).toMatch(/Settings/);
    expect(notices[1]!.level).toBe("error");
  });

  it("finds the latest todo list", () => {
    const s = ev(
      loaded(),
      { type: "tool_start", tool_call_id: "1", name: "write_todos", arguments: { todos: [{ content: "a", status: "pending" }] }, label_short: "", label_full: "" },
      { type: "tool_start", tool_call_id: "2", name: "write_todos", arguments: { todos: [{ content: "a", status: "completed" }, { content: "b", status: "in_progress" }, 3, { status: "completed" }, { content: "c", status: "done" }, { content: "d" }] }, label_short: "", label_full: "" },
    );
    expect(latestTodos(s.items)).toEqual([
      { content: "a", status: "completed" },
      { content: "b", status: "in_progress" },
      { content: "c", status: "pending" },
      { content: "d", status: "pending" },
    ]);
    expect(latestTodos([])).toBeNull();
  });
});
