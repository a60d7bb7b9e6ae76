// The board of agents in the shell (docs/board.md): the sidebar's Agents with its shortcut
// and count, Ctrl+Shift+A, the palette, Enter opening a chat from the board. A chat whose
// turn waits for a place among the agents that run at once: the notice with how many are
// ahead and the way to Settings → Agents, the header saying queued, gone when the turn
// starts; Stop while it waits, its message back in the box; and a chat opened while it
// waits, told so by its `queued` (the sidebar's dot too).

import { act } from "react";
import { createRoot, type Root } from "react-dom/client";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { App } from "./App";
import { TransportContext } from "./app/context";
import type { BoardAgent, Command, SessionInfo } from "./protocol";
import type { ConnectionStatus } from "./transport";
import { FakeTransport } from "./test/fakeTransport";
import { settle as settleRounds } from "./test/settle";

const chat = (id: number, running = false): SessionInfo => ({ id, title: `Chat ${id}`, agent_id: "main", kind: "interactive", working_dir: "/w", created_at: id, updated_at: id, running, mode: "act" });

/** Chats as the service keeps them; `send_message` starts a turn, `stop` is recorded. */
class FakeServer extends FakeTransport {
  override status: ConnectionStatus | null = "open";
  board: BoardAgent[] = [];
  constructor(sessions: SessionInfo[]) {
    super();
    this.sessions = sessions;
  }
  override answer(c: Command): unknown {
    switch (c.cmd) {
      case "list_sessions":
        return { cmd: c.cmd, sessions: this.sessions };
      case "history": {
        const s = this.sessions.find((x) => x.id === c.session_id)!;
        return { cmd: c.cmd, session: s, messages: s.running ? [{ id: 1, stack_id: null, role: "user", content: "waiting one", html: null, reasoning: null, status: "complete", synthetic: false, created_at: 1 }] : [], tool_calls: [], has_more: false };
      }
      case "send_message":
        return { cmd: c.cmd, queued: false };
      case "stop":
        return { cmd: c.cmd, stopped: true };
      case "board":
        return { cmd: c.cmd, agents: this.board };
      case "settings":
        return { cmd: c.cmd, models: ["openai/scripted-model"], at_once: 1, compact_at: 80, today_cost_usd: 0, rate_limits: [], tex: { bundle: "", offline: true, system_tex: null } };
      case "inbox":
        return { cmd: c.cmd, items: [] };
      case "checkpoints":
        return { cmd: c.cmd, checkpoints: [] };
      case "list_worktrees":
        return { cmd: c.cmd, worktrees: [] };
      default:
        return super.answer(c);
    }
  }
}

let container: HTMLDivElement;
let root: Root;
const settle = () => settleRounds(10);

async function render(server: FakeServer) {
  container = document.createElement("div");
  document.body.appendChild(container);
  root = createRoot(container);
  await act(async () => {
    root.render(
      <TransportContext.Provider value={server}>
        <App />
      </TransportContext.Provider>,
    );
  });
  await settle();
}

const q = (sel: string) => container.querySelector<HTMLElement>(sel);

async function click(el: HTMLElement | null) {
  expect(el).not.toBeNull();
  await act(async () => el!.click());
  await settle();
}

async function sendText(text: string) {
  const box = q("[data-testid='composer']") as HTMLTextAreaElement;
  await act(async () => {
    Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, "value")!.set!.call(box, text);
    box.dispatchEvent(new Event("input", { bubbles: true }));
  });
  await act(async () => box.form!.requestSubmit());
  await settle();
}

async function emit(sid: number, event: unknown) {
  await act(async () => transport.emit(sid, event));
  await settle();
}

let transport: FakeServer;

beforeEach(() => localStorage.clear());
afterEach(async () => {
  await act(async () => root.unmount());
  container.remove();
});

const row = (over: Partial<BoardAgent>): BoardAgent => ({
  session_id: 1,
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

async function press(key: string, init: KeyboardEventInit = {}) {
  await act(async () => {
    (document.activeElement ?? document.body).dispatchEvent(new KeyboardEvent("keydown", { key, bubbles: true, cancelable: true, ...init }));
  });
  await settle();
}

describe("the Agents screen in the shell", () => {
  it("is in the sidebar with its shortcut and how many are at work; Ctrl+Shift+A opens it; Enter opens a chat", async () => {
    transport = new FakeServer([chat(1), chat(2, true), chat(3, true)]);
    localStorage.setItem("skald.session", "1");
    transport.board = [row({ session_id: 3, title: "Chat 3", state: "queued" }), row({ session_id: 2, title: "Chat 2", state: "working" }), row({ session_id: 1, title: "Chat 1" })];
    await render(transport);
    const nav = q("[data-testid='nav-agents']")!;
    expect(nav.textContent).toBe("Agents2");
    expect(nav.getAttribute("title")).toBe("Agents (Ctrl+Shift+A)");
    expect(q("[data-testid='agents-badge']")!.getAttribute("aria-label")).toBe("2 at work");
    await press("A", { ctrlKey: true, shiftKey: true });
    expect(nav.getAttribute("aria-current")).toBe("page");
    expect(transport.count("board")).toBe(1);
    expect([...container.querySelectorAll<HTMLElement>("[data-testid='agent-row']")].map((r) => r.dataset.state)).toEqual(["queued", "working", "done"]);
    // The list has the focus: ↓ and Enter open the second agent's chat.
    await press("ArrowDown");
    await press("Enter");
    expect(q("[data-testid='nav-chat']")!.getAttribute("aria-current")).toBe("page");
    expect(q(".chat-title h1")!.textContent).toBe("Chat 2");
  });

  it("is in the palette", async () => {
    transport = new FakeServer([chat(1)]);
    await render(transport);
    await press("k", { ctrlKey: true });
    const entry = [...container.querySelectorAll<HTMLElement>("[data-testid='palette'] [role='option']")].find((o) => o.textContent?.includes("Go to Agents"));
    expect(entry?.textContent).toContain("Ctrl+Shift+A");
    await click(entry!);
    expect(q("[data-testid='agents-view']")).not.toBeNull();
  });
});

describe("a turn waiting for a free place", () => {
  it("says so with how many are ahead until it starts, and the header says queued", async () => {
    transport = new FakeServer([chat(1)]);
    await render(transport);
    await sendText("write the intro");
    expect(transport.sent("send_message")).toEqual([{ cmd: "send_message", session_id: 1, text: "write the intro" }]);
    await emit(1, { type: "turn_queued", session_id: 1, ahead: 2 });
    const notice = q("[data-testid='queue-notice']")!;
    expect(notice.getAttribute("role")).toBe("status");
    expect(q("[data-testid='queue-notice-text']")!.textContent).toBe("Waiting for a free place — 2 ahead");
    expect(notice.textContent).toContain("Settings → Agents sets how many run at once.");
    expect(q("[data-testid='chat-state']")!.textContent).toBe("queued");
    expect(q(".working")).toBeNull();
    expect(q("[data-testid='stop']")).not.toBeNull();

    await emit(1, { type: "turn_running", session_id: 1 });
    expect(q("[data-testid='queue-notice']")).toBeNull();
    expect(q("[data-testid='chat-state']")!.textContent).toBe("working");
    expect(q(".working")!.textContent).toBe("The agent is working…");
  });

  it("says next in line when none is ahead, and its link opens Settings", async () => {
    transport = new FakeServer([chat(1)]);
    await render(transport);
    await sendText("go");
    await emit(1, { type: "turn_queued", session_id: 1, ahead: 0 });
    expect(q("[data-testid='queue-notice-text']")!.textContent).toBe("Waiting for a free place — next in line");
    await click(q("[data-testid='queue-settings']"));
    expect(q("[data-testid='nav-settings']")!.getAttribute("aria-current")).toBe("page");
    expect(q("#s-agents")!.textContent).toBe("Agents");
  });

  it("stopped while it waits: Stop sends stop, and the message comes back to the box, marked not sent", async () => {
    transport = new FakeServer([chat(1)]);
    await render(transport);
    await sendText("write the intro");
    await emit(1, { type: "turn_queued", session_id: 1, ahead: 0 });
    // Something typed meanwhile is kept, after the message that comes back.
    const box = q("[data-testid='composer']") as HTMLTextAreaElement;
    await act(async () => {
      Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, "value")!.set!.call(box, "and then the outline");
      box.dispatchEvent(new Event("input", { bubbles: true }));
    });
    await click(q("[data-testid='stop']"));
    expect(transport.sent("stop")).toEqual([{ cmd: "stop", session_id: 1 }]);
    // The engine ends the turn without storing its message.
    await emit(1, { type: "done", session_id: 1, outcome: "cancelled", text: "" });
    expect(q("[data-testid='queue-notice']")).toBeNull();
    expect(q("[data-testid='stop']")).toBeNull();
    const bubble = q("[data-testid='message'][data-role='user']")!;
    expect(bubble.dataset.state).toBe("withdrawn");
    expect(q("[data-testid='withdrawn-reason']")!.textContent).toBe("Not sent: stopped while it waited for a free place — its text is back in the message box.");
    expect((q("[data-testid='composer']") as HTMLTextAreaElement).value).toBe("write the intro\n\nand then the outline");
    expect(container.textContent).not.toContain("Stopped.");
  });

  it("a chat opened while its turn waits is told so by its queued flag, not the board", async () => {
    transport = new FakeServer([chat(1), { ...chat(2, true), queued: true }]);
    localStorage.setItem("skald.session", "1");
    await render(transport);
    // The sidebar shows it waiting, not working.
    const item = q("[data-testid='session-item'][data-session-id='2']")!;
    expect(item.querySelector("[data-testid='session-queued']")!.getAttribute("aria-label")).toBe("waiting for a free place");
    expect(item.querySelector(".dot-running")).toBeNull();
    await click(q("[data-testid='session-item'][data-session-id='2'] .session-main"));
    expect(transport.count("board")).toBe(0);
    expect(q("[data-testid='queue-notice-text']")!.textContent).toBe("Waiting for a free place");
    expect(q("[data-testid='chat-state']")!.textContent).toBe("queued");
    await emit(2, { type: "turn_running", session_id: 2 });
    expect(q("[data-testid='queue-notice']")).toBeNull();
    // The sidebar follows the events: working now, then neither.
    expect(item.querySelector("[data-testid='session-queued']")).toBeNull();
    expect(item.querySelector(".dot-running")).not.toBeNull();
    await emit(2, { type: "done", session_id: 2, outcome: "final", text: "" });
    expect(item.querySelector(".dot-running")).toBeNull();
  });

  it("a chat whose turn joins the line shows the waiting dot in the sidebar until it starts", async () => {
    transport = new FakeServer([chat(1), chat(2)]);
    await render(transport);
    const item = q("[data-testid='session-item'][data-session-id='2']")!;
    await emit(2, { type: "turn_queued", session_id: 2, ahead: 1 });
    expect(item.querySelector("[data-testid='session-queued']")).not.toBeNull();
    await emit(2, { type: "turn_running", session_id: 2 });
    expect(item.querySelector("[data-testid='session-queued']")).toBeNull();
    expect(item.querySelector(".dot-running")).not.toBeNull();
  });
});
