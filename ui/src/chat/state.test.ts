import { describe, expect, it } from "vitest";
import { blockedToReturn, chatReducer, emptyChat, latestTodos, staleAssistants, type ChatState, type Item } from "./state";
import type { ChatImage, ChatMessage, CheckpointInfo, Event, HookRun, Reply, Role, ToolCallInfo, ToolCallStatus } from "../protocol";

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
    session: { id: 1, title: "t", agent_id: "a", kind: "interactive", working_dir: null, created_at: 0, updated_at: 0, running, mode: "act" },
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

describe("checkpoints", () => {
  const cp = (id: number, over: Partial<CheckpointInfo> = {}): CheckpointInfo => ({
    id,
    session_id: 1,
    tool_call_id: null,
    kind: "call",
    folder: "/w",
    before: `b${id}`,
    after: `a${id}`,
    changes: { files: [{ path: "notes.md", status: "modified", added: 1, removed: 1, binary: false }], total: 1 },
    note: "",
    restored_to: null,
    created_at: 0,
    ...over,
  });
  const tools = (s: ChatState) => s.items.filter((i): i is Extract<Item, { kind: "tool" }> => i.kind === "tool");
  const stored = () =>
    history(
      [msg(1, "user", "edit it", { created_at: 100 }), msg(2, "assistant", "editing", { created_at: 200 }), msg(3, "assistant", "done", { created_at: 300 }), msg(4, "user", "thanks", { created_at: 500 })],
      [call("w1", 2, { name: "write_file", label_short: "write notes.md" })],
    );

  it("go on their tool cards, whether they come before or after the history", () => {
    const list = [cp(1, { tool_call_id: "w1", created_at: 250 })];
    const after = chatReducer(chatReducer(emptyChat(1), { type: "history", reply: stored() }), { type: "checkpoints", checkpoints: list });
    const before = chatReducer(chatReducer(emptyChat(1), { type: "checkpoints", checkpoints: list }), { type: "history", reply: stored() });
    for (const s of [after, before]) expect(tools(s)[0]!.tool.checkpoint).toEqual(list[0]);
  });

  it("a live checkpoint event updates the call's card", () => {
    let s = ev(chatReducer(emptyChat(1), { type: "history", reply: history([]) }), {
      type: "tool_start",
      tool_call_id: "w9",
      name: "write_file",
      arguments: { path: "x" },
      label_short: "write x",
      label_full: "write x",
    });
    expect(tools(s)[0]!.tool.checkpoint).toBeNull();
    s = ev(s, { type: "tool_done", tool_call_id: "w9", result: "ok" }, { type: "checkpoint", checkpoint: cp(3, { tool_call_id: "w9" }) });
    expect(tools(s)[0]!.tool.checkpoint?.id).toBe(3);
    expect(kinds(s.items)).toEqual(["tool"]);
  });

  it("places a stored restore after the last message before it, labelled with its call", () => {
    const list = [cp(1, { tool_call_id: "w1", created_at: 250 }), cp(2, { kind: "restore", restored_to: 1, created_at: 400 })];
    const s = chatReducer(chatReducer(emptyChat(1), { type: "history", reply: stored() }), { type: "checkpoints", checkpoints: list });
    expect(kinds(s.items)).toEqual(["user", "assistant", "tool", "assistant", "restore", "user"]);
    const r = s.items[4] as Extract<Item, { kind: "restore" }>;
    expect(r).toMatchObject({ target: "write notes.md", undoes: false, undone: false });
    // Loading them again does not add it twice.
    expect(kinds(chatReducer(s, { type: "checkpoints", checkpoints: list }).items)).toEqual(kinds(s.items));
  });

  it("a restore older than the loaded page waits for the older history", () => {
    const r = cp(2, { kind: "restore", restored_to: 1, created_at: 50 });
    const page = { ...stored(), has_more: true };
    let s = chatReducer(chatReducer(emptyChat(1), { type: "history", reply: page }), { type: "checkpoints", checkpoints: [r] });
    expect(kinds(s.items)).not.toContain("restore");
    s = chatReducer(s, { type: "older", reply: history([msg(0, "user", "earlier", { created_at: 10 })]) });
    expect(kinds(s.items)).toEqual(["user", "restore", "user", "assistant", "tool", "assistant", "user"]);
  });

  it("a live restore goes at the end, and undoing it marks it undone", () => {
    let s = chatReducer(chatReducer(emptyChat(1), { type: "history", reply: stored() }), { type: "checkpoints", checkpoints: [cp(1, { tool_call_id: "w1", created_at: 250 })] });
    s = ev(s, { type: "checkpoint", checkpoint: cp(5, { kind: "restore", restored_to: 1, created_at: 600 }) });
    expect(kinds(s.items).at(-1)).toBe("restore");
    s = ev(s, { type: "checkpoint", checkpoint: cp(6, { kind: "restore", restored_to: 5, created_at: 700 }) });
    const restores = s.items.filter((i): i is Extract<Item, { kind: "restore" }> => i.kind === "restore");
    expect(restores.map((r) => [r.checkpoint.id, r.target, r.undoes, r.undone])).toEqual([
      [5, "write notes.md", false, true],
      [6, null, true, false],
    ]);
    // The same restore again (its reply, then its event) is one line.
    s = ev(s, { type: "checkpoint", checkpoint: cp(6, { kind: "restore", restored_to: 5, created_at: 700 }) });
    expect(s.items.filter((i) => i.kind === "restore")).toHaveLength(2);
    // Redone: the undo is undone, and the first restore stands again.
    s = ev(s, { type: "checkpoint", checkpoint: cp(7, { kind: "restore", restored_to: 6, created_at: 800 }) });
    const again = s.items.filter((i): i is Extract<Item, { kind: "restore" }> => i.kind === "restore");
    expect(again.map((r) => r.undone)).toEqual([false, true, false]);
  });
});

describe("hooks", () => {
  const loaded = () => chatReducer(emptyChat(1), { type: "history", reply: history([]) });
  const run = (event: string, over: Partial<HookRun> = {}): HookRun => ({ event, command: "sh guard.sh", source: "user", outcome: "ok", message: "", duration_ms: 5, ...over });
  const hook = (event: string, over: Partial<HookRun> = {}): Event => ({ type: "hook", session_id: 1, hook: run(event, over) });
  const start = (id: string, name = "execute_cmd"): Event => ({ type: "tool_start", tool_call_id: id, name, arguments: {}, label_short: id, label_full: id });
  type User = Extract<Item, { kind: "user" }>;
  type Tool = Extract<Item, { kind: "tool" }>;
  const sent = (text: string) => chatReducer(chatReducer(loaded(), { type: "local_send", key: "k1", text }), { type: "send_result", key: "k1", queued: false });
  const BLOCKED = "A UserPromptSubmit hook blocked this message: no secrets in prompts";

  it("put a call's PreToolUse, Notification and PostToolUse runs on its card", () => {
    const s = ev(
      loaded(),
      start("c1"),
      hook("PreToolUse"),
      { type: "approval_required", tool_call_id: "c1", name: "execute_cmd", arguments: {}, label: "run", reason: "asks", inbox_id: 3 },
      hook("Notification", { command: "notify-send" }),
      { type: "inbox_resolved", id: 3, session_id: 1, status: "approved" },
      hook("PostToolUse", { message: "formatted" }),
      { type: "tool_done", tool_call_id: "c1", result: "ok" },
    );
    expect(kinds(s.items)).toEqual(["tool"]);
    expect((s.items[0] as Tool).tool.hooks.map((h) => h.event)).toEqual(["PreToolUse", "Notification", "PostToolUse"]);
  });

  it("put a blocked call's run on its card, not the call before it", () => {
    const s = ev(
      loaded(),
      start("c1"),
      { type: "tool_done", tool_call_id: "c1", result: "ok" },
      start("c2"),
      hook("PreToolUse", { outcome: "blocked", message: "no rm -rf here" }),
      { type: "tool_rejected", tool_call_id: "c2", reason: "A PreToolUse hook blocked this tool call: no rm -rf here" },
    );
    expect(s.items.map((i) => (i as Tool).tool.hooks.length)).toEqual([0, 1]);
    expect((s.items[1] as Tool).tool.hooks[0]!.outcome).toBe("blocked");
  });

  it("put a sub-agent's call's runs on its card, inside the group", () => {
    const s = ev(loaded(), start("t", "execute_task"), hook("PreToolUse"), { type: "agent_start", stack_id: 2, agent_id: "r", depth: 1 }, start("s1"), hook("PreToolUse", { command: "sub.sh" }));
    expect((s.items[0] as Tool).tool.hooks.map((h) => h.command)).toEqual(["sh guard.sh"]);
    const g = s.items[1] as Extract<Item, { kind: "agent" }>;
    expect((g.children[0] as Tool).tool.hooks.map((h) => h.command)).toEqual(["sub.sh"]);
  });

  it("go in a line of their own when no one call is running, one line for runs in a row", () => {
    let s = ev(loaded(), start("a", "execute_task"), start("b", "execute_task"), hook("PreToolUse"), hook("PreToolUse", { command: "two.sh" }));
    expect(kinds(s.items)).toEqual(["tool", "tool", "hooks"]);
    expect((s.items[2] as Extract<Item, { kind: "hooks" }>).runs).toHaveLength(2);
    s = ev(loaded(), { type: "token_delta", text: "Done." }, hook("Stop"), hook("Stop", { command: "b.sh", outcome: "blocked", message: "run the tests first" }), { type: "token_delta", text: "Tests pass." });
    expect(kinds(s.items)).toEqual(["assistant", "hooks", "assistant"]);
    expect((s.items[0] as Extract<Item, { kind: "assistant" }>).streaming).toBe(false);
    expect((s.items[1] as Extract<Item, { kind: "hooks" }>).runs.map((r) => r.outcome)).toEqual(["ok", "blocked"]);
  });

  it("put a message's UserPromptSubmit and SessionStart runs under it, kept when it is stored", () => {
    let s = ev(sent("hello"), hook("SessionStart"), hook("UserPromptSubmit", { message: "added the branch name" }));
    expect(kinds(s.items)).toEqual(["user"]);
    s = ev(s, { type: "turn_running", session_id: 1 }, { type: "user_message", session_id: 1, message_id: 7, text: "hello" });
    const u = s.items[0] as User;
    expect(u).toMatchObject({ id: 7, state: "sent" });
    expect(u.hooks!.map((h) => h.event)).toEqual(["SessionStart", "UserPromptSubmit"]);
    // A message sent elsewhere has no bubble of ours yet: its runs go in a line.
    const other = ev(loaded(), hook("UserPromptSubmit"));
    expect(kinds(other.items)).toEqual(["hooks"]);
  });

  it("mark a blocked message not sent, with the reason, and give its text back once", () => {
    let s = ev(sent("my secret"), hook("UserPromptSubmit", { outcome: "blocked", message: "no secrets in prompts" }), { type: "turn_running", session_id: 1 }, { type: "error", message: BLOCKED });
    expect(s.running).toBe(true);
    s = ev(s, { type: "done", session_id: 1, outcome: "cancelled", text: "" });
    expect(s.running).toBe(false);
    expect(s.promptBlocked).toBe(false);
    // No provider hint, no "Stopped.": the message says what happened.
    expect(kinds(s.items)).toEqual(["user"]);
    const u = s.items[0] as User;
    expect(u).toMatchObject({ state: "blocked", error: "no secrets in prompts", text: "my secret", id: null });
    expect(u.hooks![0]!.outcome).toBe("blocked");
    expect(blockedToReturn(s.items).map((i) => i.key)).toEqual(["k1"]);
    s = chatReducer(s, { type: "returned", key: "k1" });
    expect(blockedToReturn(s.items)).toEqual([]);
    // Sent again and stored, it is a new message; the blocked one stays as it was.
    s = chatReducer(s, { type: "local_send", key: "k2", text: "my secret" });
    s = ev(s, { type: "user_message", session_id: 1, message_id: 9, text: "my secret" });
    expect(s.items.map((i) => (i as User).state)).toEqual(["blocked", "sent"]);
  });

  it("leave the chat idle when the reply to the send comes after the block", () => {
    let s = chatReducer(loaded(), { type: "local_send", key: "k1", text: "x" });
    s = ev(s, { type: "turn_running", session_id: 1 }, { type: "error", message: BLOCKED }, { type: "done", session_id: 1, outcome: "cancelled", text: "" });
    expect((s.items[0] as User).state).toBe("blocked");
    s = chatReducer(s, { type: "send_result", key: "k1", queued: false });
    expect(s.running).toBe(false);
    expect((s.items[0] as User).state).toBe("blocked");
  });

  it("keep a message queued behind a blocked one: it starts the next turn", () => {
    let s = sent("first");
    s = chatReducer(s, { type: "local_send", key: "k2", text: "second" });
    s = chatReducer(s, { type: "send_result", key: "k2", queued: true });
    s = ev(s, { type: "turn_running", session_id: 1 }, { type: "error", message: BLOCKED }, { type: "done", session_id: 1, outcome: "cancelled", text: "" });
    expect(s.items.map((i) => (i as User).state)).toEqual(["blocked", "queued"]);
    s = ev(s, hook("UserPromptSubmit"), { type: "turn_running", session_id: 1 }, { type: "user_message", session_id: 1, message_id: 3, text: "second" });
    expect(s.items.map((i) => (i as User).state)).toEqual(["blocked", "sent"]);
    expect((s.items[1] as User).hooks).toHaveLength(1);
    // A plain stop still drops what was queued.
    let stopped = chatReducer(sent("a"), { type: "local_send", key: "k3", text: "b" });
    stopped = chatReducer(stopped, { type: "send_result", key: "k3", queued: true });
    stopped = ev(stopped, { type: "user_message", session_id: 1, message_id: 1, text: "a" }, { type: "done", session_id: 1, outcome: "cancelled", text: "" });
    expect(Object.fromEntries(stopped.items.filter((i) => i.kind === "user").map((i) => [(i as User).text, (i as User).state]))).toEqual({ a: "sent", b: "failed" });
  });

  it("say a message sent elsewhere was blocked, in a notice", () => {
    const s = ev(loaded(), { type: "turn_running", session_id: 1 }, { type: "error", message: BLOCKED }, { type: "done", session_id: 1, outcome: "cancelled", text: "" });
    expect(kinds(s.items)).toEqual(["notice"]);
    expect(s.items[0]).toMatchObject({ level: "warning", message: BLOCKED });
    expect((s.items[0] as Extract<Item, { kind: "notice" }>).hint).toBeUndefined();
  });
});

describe("images", () => {
  const IMG = (sha: string, name?: string): ChatImage => ({ sha256: sha.repeat(64), media_type: "image/png", width: 3, height: 2, bytes: 70, ...(name ? { name } : {}) });
  type User = Extract<Item, { kind: "user" }>;
  type Tool = Extract<Item, { kind: "tool" }>;

  it("come with the stored messages and tool calls", () => {
    const s = chatReducer(emptyChat(1), {
      type: "history",
      reply: history([msg(1, "user", "", { images: [IMG("a", "a.png")] }), msg(2, "assistant", "I see a chart")], [call("c1", 2, { images: [IMG("b")] })]),
    });
    expect((s.items[0] as User).images).toEqual([IMG("a", "a.png")]);
    expect((s.items[2] as Tool).tool.images).toEqual([IMG("b")]);
  });

  it("stay on our message once stored, which is told from another with the same text by them", () => {
    const loaded = chatReducer(emptyChat(1), { type: "history", reply: history([]) });
    let s = chatReducer(loaded, { type: "local_send", key: "k1", text: "", images: [IMG("a")] });
    s = chatReducer(s, { type: "local_send", key: "k2", text: "", images: [IMG("b")] });
    // The second is stored first (its turn was already running).
    s = ev(s, { type: "user_message", session_id: 1, message_id: 10, text: "", images: [IMG("b")] });
    expect(s.items.map((i) => [(i as User).key, (i as User).id])).toEqual([["k1", null], ["k2", 10]]);
    s = ev(s, { type: "user_message", session_id: 1, message_id: 11, text: "", images: [IMG("a")] });
    expect(s.items.map((i) => [(i as User).key, (i as User).id, (i as User).images![0]!.sha256[0]])).toEqual([["k2", 10, "b"], ["k1", 11, "a"]]);
    // One sent elsewhere brings its images.
    s = ev(s, { type: "user_message", session_id: 1, message_id: 12, text: "look", images: [IMG("c")] });
    expect((s.items[2] as User).images).toEqual([IMG("c")]);
  });

  it("of a tool call come with its result", () => {
    let s = ev(chatReducer(emptyChat(1), { type: "history", reply: history([]) }), {
      type: "tool_start",
      tool_call_id: "c1",
      name: "read_file",
      arguments: { path: "chart.png" },
      label_short: "read chart.png",
      label_full: "read chart.png",
    });
    expect((s.items[0] as Tool).tool.images).toBeUndefined();
    s = ev(s, { type: "tool_done", tool_call_id: "c1", result: "chart.png: PNG image", images: [IMG("d")] });
    expect((s.items[0] as Tool).tool).toMatchObject({ status: "done", result: "chart.png: PNG image", images: [IMG("d")] });
  });

  it("of a blocked message are offered back with its text", () => {
    const loaded = chatReducer(emptyChat(1), { type: "history", reply: history([]) });
    let s = chatReducer(loaded, { type: "local_send", key: "k1", text: "see", images: [IMG("a")] });
    s = ev(s, { type: "turn_running", session_id: 1 }, { type: "error", message: "A UserPromptSubmit hook blocked this message: no" });
    expect(blockedToReturn(s.items).map((u) => [u.text, u.images])).toEqual([["see", [IMG("a")]]]);
  });
});

describe("a turn waiting for a place (docs/board.md, Agents at once)", () => {
  type User = Extract<Item, { kind: "user" }>;
  const loaded = () => chatReducer(emptyChat(1), { type: "history", reply: history([msg(1, "user", "earlier"), msg(2, "assistant", "answered")]) });
  const sent = (s: ChatState, key: string, text: string, queued = false) => chatReducer(chatReducer(s, { type: "local_send", key, text }), { type: "send_result", key, queued });
  const queued: Event = { type: "turn_queued", session_id: 1, ahead: 2 };

  it("is told with how many are ahead, until the turn starts", () => {
    let s = ev(sent(loaded(), "k1", "go"), queued);
    expect(s.running).toBe(true);
    expect(s.queue).toEqual({ ahead: 2 });
    s = ev(s, { type: "turn_running", session_id: 1 });
    expect(s.queue).toBeNull();
    expect(s.running).toBe(true);
    s = ev(s, { type: "user_message", session_id: 1, message_id: 3, text: "go" }, { type: "token_delta", text: "Done." }, { type: "done", session_id: 1, outcome: "final", text: "Done." });
    expect(s.queue).toBeNull();
    expect((s.items[2] as User).state).toBe("sent");
  });

  it("stopped in line, takes its messages back: never stored, offered to the composer, no Stopped.", () => {
    let s = ev(sent(loaded(), "k1", "first"), queued);
    // One more sent while it waits joins the turn.
    s = sent(s, "k2", "second", true);
    s = ev(s, { type: "done", session_id: 1, outcome: "cancelled", text: "" });
    expect(s.running).toBe(false);
    expect(s.queue).toBeNull();
    expect(s.items.map((i) => (i.kind === "user" ? `${i.text}:${i.state}` : i.kind))).toEqual(["earlier:sent", "assistant", "first:withdrawn", "second:withdrawn"]);
    expect(s.items.some((i) => i.kind === "notice")).toBe(false);
    expect(blockedToReturn(s.items).map((u) => u.text)).toEqual(["first", "second"]);
    s = chatReducer(s, { type: "returned", key: "k1" });
    s = chatReducer(s, { type: "returned", key: "k2" });
    expect(blockedToReturn(s.items)).toEqual([]);
    // A reply that comes after the stop changes nothing.
    expect(chatReducer(s, { type: "send_result", key: "k1", queued: false })).toBe(s);
  });

  it("stopped once running, is a stop as any", () => {
    const s = ev(sent(loaded(), "k1", "go"), queued, { type: "turn_running", session_id: 1 }, { type: "user_message", session_id: 1, message_id: 3, text: "go" }, { type: "done", session_id: 1, outcome: "cancelled", text: "" });
    expect((s.items[2] as User).state).toBe("sent");
    expect(s.items.at(-1)).toMatchObject({ kind: "notice", message: "Stopped." });
  });

  it("is known from the board for a chat read while it waits, and kept by a read while it runs", () => {
    const running = chatReducer(emptyChat(1), { type: "history", reply: history([msg(1, "user", "go")], [], true) });
    let s = chatReducer(running, { type: "queue", ahead: null });
    expect(s.queue).toEqual({ ahead: null });
    s = chatReducer(s, { type: "history", reply: history([msg(1, "user", "go")], [], true) });
    expect(s.queue).toEqual({ ahead: null });
    s = chatReducer(s, { type: "history", reply: history([msg(1, "user", "go"), msg(2, "assistant", "done")]) });
    expect(s.queue).toBeNull();
    // Not running: the board's word is stale.
    expect(chatReducer(loaded(), { type: "queue", ahead: null }).queue).toBeNull();
  });
});
