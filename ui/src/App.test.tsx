// The shell against an in-memory server: creating a chat and loading it, in the orders
// the replies can really arrive in (issue 19, item 12: "Could not load this chat:
// session 1 does not exist" right after a new chat's first message).

import { act } from "react";
import { createRoot, type Root } from "react-dom/client";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { App } from "./App";
import { TransportContext } from "./app/context";
import type { ChatMessage, CheckpointInfo, Command, InboxEntry, SandboxInfo, SessionInfo, ToolCallInfo } from "./protocol";
import { ServerError, type ConnectionStatus } from "./transport";
import { FakeTransport } from "./test/fakeTransport";
import { settle as settleRounds } from "./test/settle";

const info = (id: number): SessionInfo => ({ id, title: "New chat", agent_id: "main", kind: "interactive", working_dir: "/w", created_at: id, updated_at: id, running: false, mode: "act" });

/**
 * Skald's store in memory. Every reply is computed when the request arrives (as the
 * service does) and delivered when `hold` lets it go, so a test can deliver replies out
 * of order.
 */
class FakeServer extends FakeTransport {
  /** Connected from the start. */
  override status: ConnectionStatus | null = "open";
  override nextId = 1;
  /** Every command as sent, by name (with a history's chat). */
  calls: string[] = [];
  checkpoints: CheckpointInfo[] = [];
  /** What the Inbox holds; an answer resolves its item, as the service does. */
  inboxItems: InboxEntry[] = [];
  /** Every chat's sandbox, as config.toml's default gives it until a chat sets its own. */
  sandbox: Omit<SandboxInfo, "note"> = { mode: "workspace-write", network: false, available: true, always_ask: false };
  sandboxInfo(): SandboxInfo {
    const s = this.sandbox;
    return { ...s, note: `Sandbox ${s.mode}: network ${s.network ? "on" : "off"}.` };
  }
  override answer(c: Command): unknown {
    this.calls.push(c.cmd === "history" ? `history ${c.session_id}` : c.cmd);
    switch (c.cmd) {
      case "list_sessions":
        return { cmd: c.cmd, sessions: this.sessions.map((s) => this.sessionInfo(s.id)) };
      case "list_models":
      case "set_session_model":
      case "set_session_mode":
      case "fork_session":
      case "edit_message":
      case "usage":
        // The fake's own: gpt-4.1 configured, o3-mini and a local model besides; modes,
        // forks of the chats in `sessions` and `stored`, and usage.
        return super.answer(c);
      case "create_session": {
        const s = info(this.nextId++);
        this.sessions.push(s);
        return { cmd: c.cmd, session: s };
      }
      case "history": {
        const s = this.sessions.find((x) => x.id === c.session_id);
        if (!s) throw new ServerError(`session ${c.session_id} does not exist`);
        return { cmd: c.cmd, session: this.sessionInfo(s.id), messages: [], tool_calls: [], ...this.stored[s.id], has_more: false };
      }
      case "send_message":
        if (!this.sessions.some((x) => x.id === c.session_id)) throw new ServerError(`session ${c.session_id} does not exist`);
        return { cmd: c.cmd, queued: false };
      case "settings":
        return { cmd: c.cmd, models: ["openai/scripted-model"] };
      case "inbox":
        return { cmd: c.cmd, items: this.inboxItems };
      case "answer": {
        const item = this.inboxItems.find((e) => e.id === c.inbox_id);
        if (!item) throw new ServerError(`no pending Inbox item ${c.inbox_id}`);
        this.inboxItems = this.inboxItems.filter((e) => e !== item);
        this.calls.push(`answer ${c.inbox_id} ${JSON.stringify(c.answer)}`);
        setTimeout(() => this.emit(item.session_id, { type: "inbox_resolved", id: item.id, session_id: item.session_id, status: "answered" }), 0);
        return { cmd: c.cmd };
      }
      case "sandbox":
        return { cmd: c.cmd, sandbox: this.sandboxInfo() };
      case "session_context":
        return {
          cmd: c.cmd,
          context: { project_root: "/w", instructions: [{ path: "/w/AGENTS.md", source: "project", bytes: 2100, included: 2100, note: "" }], skills: [] },
        };
      case "checkpoints":
        return { cmd: c.cmd, checkpoints: this.checkpoints.filter((x) => x.session_id === c.session_id) };
      case "restore_checkpoint": {
        // As the service does: the restore is a checkpoint of the chat; with `rewind` a new
        // chat holds the messages before the call's message, the original keeps them all.
        const cp = this.checkpoints.find((x) => x.id === c.id);
        if (!cp) throw new ServerError(`there is no checkpoint ${c.id}`);
        const done: CheckpointInfo = { ...cp, id: Math.max(...this.checkpoints.map((x) => x.id)) + 1, kind: "restore", tool_call_id: null, restored_to: cp.id, created_at: 900 };
        this.checkpoints.push(done);
        let fork: SessionInfo | null = null;
        if (c.rewind) {
          const from = this.stored[cp.session_id] ?? { messages: [], tool_calls: [] };
          const at = from.tool_calls.find((x) => x.tool_call_id === cp.tool_call_id)?.message_id ?? 0;
          fork = { ...info(this.nextId++), title: "Edit the notes (rewound)", updated_at: 50 };
          this.sessions.push(fork);
          const messages = from.messages.filter((m) => m.id < at);
          this.stored[fork.id] = { messages, tool_calls: from.tool_calls.filter((x) => messages.some((m) => m.id === x.message_id)) };
        }
        return { cmd: c.cmd, checkpoint: done, fork };
      }
      case "list_processes":
        return { cmd: c.cmd, processes: [] };
      case "set_sandbox":
        this.sandbox = { ...this.sandbox, mode: c.mode, network: c.network };
        this.calls.push(`set_sandbox ${c.mode} ${c.network}`);
        return { cmd: c.cmd, sandbox: this.sandboxInfo() };
      default:
        return { cmd: c.cmd };
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

const q = (sel: string) => container.querySelector(sel);
const text = () => container.textContent ?? "";

async function click(sel: string) {
  const el = q(sel) as HTMLElement | null;
  expect(el, `${sel} is on the page`).not.toBeNull();
  await act(async () => el!.click());
  await settle();
}

async function sendFirstMessage(body: string) {
  const box = q("[data-testid='composer']") as HTMLTextAreaElement;
  expect(box).not.toBeNull();
  await act(async () => {
    const set = Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, "value")!.set!;
    set.call(box, body);
    box.dispatchEvent(new Event("input", { bubbles: true }));
  });
  await act(async () => {
    box.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
  });
  await settle();
}

beforeEach(() => {
  localStorage.clear();
});
afterEach(async () => {
  await act(async () => root.unmount());
  container.remove();
});

describe("creating a chat and loading it", () => {
  it("a chat id remembered from another data folder does not poison the new chat 1", async () => {
    // The desktop app's web storage outlives a data folder: the last chat used was 1.
    localStorage.setItem("skald.session", "1");
    const server = new FakeServer();
    await render(server);
    expect(server.calls).not.toContain("history 1");
    await click("[data-testid='new-session']");
    expect(q("[data-testid='message-list'][data-loaded='1']"), text()).not.toBeNull();
    await sendFirstMessage("hello");
    expect(text()).not.toContain("Could not load this chat");
    expect(q("[data-testid='message-list'][data-loaded='1']"), text()).not.toBeNull();
    expect(server.calls).toContain("send_message");
  });

  it("a sessions list computed before the create does not close the new chat", async () => {
    const server = new FakeServer();
    server.sessions.push(info(server.nextId++));
    await render(server);
    // A turn ends: the app reloads the list, whose reply (computed now, before the
    // create) arrives only after the new chat has been created and opened.
    let release: () => void = () => {};
    const late = new Promise<void>((r) => (release = r));
    server.hold = (c) => (c.cmd === "list_sessions" ? late : null);
    await act(async () => server.emit(1, { type: "done", session_id: 1, outcome: "final", text: "" }));
    server.hold = null;
    await click("[data-testid='new-session']");
    expect(q(".session.active[data-session-id='2']"), text()).not.toBeNull();
    release();
    await settle();
    expect(q(".session.active[data-session-id='2']"), "the new chat is still open").not.toBeNull();
    expect(q("[data-testid='message-list'][data-loaded='1']"), text()).not.toBeNull();
  });

  it("the first message, sent at once, is not wiped by the new chat's history", async () => {
    const server = new FakeServer();
    await render(server);
    // The history of the new chat (empty: computed before the first message) is
    // answered only after the message's events, as on a busy first launch.
    let release: () => void = () => {};
    const late = new Promise<void>((r) => (release = r));
    server.hold = (c) => (c.cmd === "history" ? late : null);
    await click("[data-testid='new-session']");
    await sendFirstMessage("hello there");
    await act(async () => {
      server.emit(1, { type: "turn_running", session_id: 1 });
      server.emit(1, { type: "user_message", session_id: 1, message_id: 1, text: "hello there" });
      server.emit(1, { type: "token_delta", text: "General Kenobi" });
    });
    await settle();
    release();
    await settle();
    expect(text()).not.toContain("Could not load this chat");
    expect(text()).toContain("hello there");
    expect(text()).toContain("General Kenobi");
  });

  it("a chat whose history failed loads again when it is opened again", async () => {
    const server = new FakeServer();
    server.sessions.push(info(server.nextId++), info(server.nextId++));
    localStorage.setItem("skald.session", "2");
    let fail = true;
    server.hold = (c) => (c.cmd === "history" && c.session_id === 2 && fail ? Promise.reject(new ServerError("the store is busy")) : null);
    await render(server);
    expect(text()).toContain("Could not load this chat: the store is busy");
    fail = false;
    await click("[data-testid='session-item'][data-session-id='1'] .session-main");
    await click("[data-testid='session-item'][data-session-id='2'] .session-main");
    expect(text()).not.toContain("Could not load this chat");
    expect(q("[data-testid='message-list'][data-loaded='1']"), text()).not.toBeNull();
  });
});

describe("the chat header's context view", () => {
  const panel = () => q("[data-testid='context-panel']");
  const press = async (key: string, on: EventTarget = window, shiftKey = true) => {
    await act(async () => {
      on.dispatchEvent(new KeyboardEvent("keydown", { key, ctrlKey: true, shiftKey, bubbles: true, cancelable: true }));
    });
    await settle();
  };

  it("opens with Ctrl+Shift+X and from the palette, and closes with the chat", async () => {
    const server = new FakeServer();
    await render(server);
    await click("[data-testid='new-session']");
    const chip = q("[data-testid='context-chip']") as HTMLButtonElement;
    expect(chip.textContent).toBe("AGENTS.md ×1");
    expect(server.commands).toContainEqual({ cmd: "session_context", session_id: 1 });

    // From the composer, where the focus is, and back to it.
    const composer = q("[data-testid='composer']") as HTMLTextAreaElement;
    composer.focus();
    await press("X", composer);
    expect(panel()).not.toBeNull();
    expect(document.activeElement).toBe(panel());
    expect(q("[data-testid='context-file'] .context-path")!.textContent).toBe("AGENTS.md");
    await press("X", panel()!);
    expect(panel()).toBeNull();
    expect(document.activeElement).toBe(composer);

    // The palette's entry, from another screen too.
    await click("[data-testid='nav-inbox']");
    await press("k", window, false);
    const input = q("[data-testid='palette'] input") as HTMLInputElement;
    await act(async () => {
      const set = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value")!.set!;
      set.call(input, "chat's context");
      input.dispatchEvent(new Event("input", { bubbles: true }));
    });
    await act(async () => {
      input.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
    });
    await settle();
    expect(q("[data-testid='palette']")).toBeNull();
    expect(panel()).not.toBeNull();

    // Another chat opens with its panel closed.
    await click("[data-testid='new-session']");
    expect(panel()).toBeNull();
  });
});

describe("a message a hook blocked", () => {
  const BLOCKED = "A UserPromptSubmit hook blocked this message: no secrets in prompts";
  const blockTurn = async (server: FakeServer) => {
    await act(async () => {
      server.emit(1, { type: "hook", session_id: 1, hook: { event: "UserPromptSubmit", command: "sh .skald/no-secrets.sh", source: "project", outcome: "blocked", message: "no secrets in prompts", duration_ms: 8 } });
      server.emit(1, { type: "turn_running", session_id: 1 });
      server.emit(1, { type: "error", message: BLOCKED });
      server.emit(1, { type: "done", session_id: 1, outcome: "cancelled", text: "" });
    });
    await settle();
  };
  const composer = () => q("[data-testid='composer']") as HTMLTextAreaElement;
  const type = async (body: string) => {
    await act(async () => {
      const set = Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, "value")!.set!;
      set.call(composer(), body);
      composer().dispatchEvent(new Event("input", { bubbles: true }));
    });
  };

  it("is marked not sent, with the hook's reason, and its text is back in the box", async () => {
    const server = new FakeServer();
    await render(server);
    await click("[data-testid='new-session']");
    await sendFirstMessage("the key is hunter2");
    expect(composer().value).toBe("");
    await blockTurn(server);

    const bubble = q("[data-testid='message'][data-role='user']") as HTMLElement;
    expect(bubble.dataset.state).toBe("blocked");
    expect(bubble.querySelector("[data-testid='blocked-reason']")!.textContent).toBe("Not sent: a hook blocked it — no secrets in prompts");
    const row = bubble.querySelector("[data-testid='hook-run']") as HTMLElement;
    expect(row.dataset.event).toBe("UserPromptSubmit");
    expect(row.dataset.outcome).toBe("blocked");
    expect(row.querySelector("[data-testid='hook-command']")!.textContent).toBe("no-secrets.sh");
    // Neither a provider hint nor "Stopped.": the message says what happened.
    expect(text()).not.toContain("Stopped.");
    expect(text()).not.toContain("Check the provider");
    expect(q("[data-testid='stop']")).toBeNull();
    expect(composer().value).toBe("the key is hunter2");
    expect(localStorage.getItem("skald.draft.1")).toBe("the key is hunter2");
  });

  it("does not overwrite what was typed since, nor come back once cleared", async () => {
    const server = new FakeServer();
    await render(server);
    await click("[data-testid='new-session']");
    await sendFirstMessage("first");
    await type("something new");
    await blockTurn(server);
    expect(composer().value).toBe("something new");
    expect(q("[data-testid='message'][data-state='blocked']")).not.toBeNull();

    // Given back once: cleared, it stays cleared when the chat is opened again.
    await type("");
    await click("[data-testid='new-session']");
    await click("[data-testid='session-item'][data-session-id='1'] .session-main");
    expect(composer().value).toBe("");
  });
});

describe("the chat header's sandbox badge", () => {
  const badge = () => q("[data-testid='sandbox-badge']") as HTMLButtonElement | null;

  it("shows the chat's sandbox and changes it from its menu", async () => {
    const server = new FakeServer();
    await render(server);
    await click("[data-testid='new-session']");
    expect(badge(), text()).not.toBeNull();
    expect(badge()!.tagName).toBe("BUTTON");
    expect(badge()!.dataset.mode).toBe("workspace-write");
    expect(badge()!.dataset.available).toBe("1");
    expect(badge()!.textContent).toBe("Sandbox: workspace-write · network off");
    expect(badge()!.title).toBe("Sandbox workspace-write: network off.");

    await click("[data-testid='sandbox-badge']");
    const menu = q("[data-testid='sandbox-menu']");
    expect(menu).not.toBeNull();
    expect(menu!.textContent).toContain("Applies from the next turn.");
    expect(q("[data-testid='sandbox-mode-workspace-write']")!.getAttribute("aria-checked")).toBe("true");

    await click("[data-testid='sandbox-mode-read-only']");
    expect(server.calls).toContain("set_sandbox read-only false");
    expect(badge()!.dataset.mode).toBe("read-only");
    expect(q("[data-testid='sandbox-mode-read-only']")!.getAttribute("aria-checked")).toBe("true");

    await click("[data-testid='sandbox-network']");
    expect(server.calls).toContain("set_sandbox read-only true");
    expect(badge()!.textContent).toBe("Sandbox: read-only · network on");
    expect((q("[data-testid='sandbox-network']") as HTMLInputElement).checked).toBe(true);

    // Escape closes the menu and gives the focus back to the badge.
    await act(async () => {
      q("[data-testid='sandbox-menu']")!.dispatchEvent(new KeyboardEvent("keydown", { key: "Escape", bubbles: true }));
    });
    await settle();
    expect(q("[data-testid='sandbox-menu']")).toBeNull();
    expect(document.activeElement).toBe(badge());
  });

  it("warns when this machine cannot sandbox", async () => {
    const server = new FakeServer();
    server.sandbox.available = false;
    await render(server);
    await click("[data-testid='new-session']");
    expect(badge()!.textContent).toBe("Not sandboxed");
    expect(badge()!.className).toContain("warn");
    expect(badge()!.dataset.available).toBe("0");
  });

  it("a failed change says so in the menu and keeps the badge as it was", async () => {
    const server = new FakeServer();
    server.hold = (c) => (c.cmd === "set_sandbox" ? Promise.reject(new ServerError("the store is busy")) : null);
    await render(server);
    await click("[data-testid='new-session']");
    await click("[data-testid='sandbox-badge']");
    await click("[data-testid='sandbox-mode-off']");
    expect(q("[data-testid='sandbox-menu'] [role='alert']")?.textContent).toBe("Could not change the sandbox: the store is busy");
    expect(badge()!.dataset.mode).toBe("workspace-write");
  });
});

describe("checkpoints in the chat", () => {
  const checkpoint = (id: number, over: Partial<CheckpointInfo> = {}): CheckpointInfo => ({
    id,
    session_id: 1,
    tool_call_id: "w1",
    kind: "call",
    folder: "/w",
    before: `b${id}`,
    after: `a${id}`,
    changes: { files: [{ path: "notes.md", status: "modified", added: 1, removed: 1, binary: false }], total: 1 },
    note: "",
    restored_to: null,
    created_at: 250,
    ...over,
  });
  const stored = (): { messages: ChatMessage[]; tool_calls: ToolCallInfo[] } => ({
    messages: [
      { id: 1, stack_id: null, role: "user", content: "edit the notes", html: null, reasoning: null, status: "complete", synthetic: false, created_at: 100 },
      { id: 2, stack_id: null, role: "assistant", content: "Editing.", html: "<p>Editing.</p>", reasoning: null, status: "complete", synthetic: false, created_at: 200 },
    ],
    tool_calls: [
      { tool_call_id: "w1", message_id: 2, stack_id: null, name: "write_file", arguments: { path: "notes.md" }, label_short: "write notes.md", label_full: "write /w/notes.md", path: "/w/notes.md", status: "done", result: "ok" },
      { tool_call_id: "w2", message_id: 2, stack_id: null, name: "write_file", arguments: { path: "b.md" }, label_short: "write b.md", label_full: "write /w/b.md", path: "/w/b.md", status: "done", result: "ok" },
    ],
  });
  const summaries = () => [...container.querySelectorAll("[data-testid='tool-card']")].map((c) => c.querySelector("[data-testid='checkpoint-summary']")?.textContent ?? null);

  it("loads with the chat, and a live event updates the call's card", async () => {
    const server = new FakeServer();
    server.sessions.push(info(server.nextId++));
    server.stored[1] = stored();
    server.checkpoints = [checkpoint(1)];
    localStorage.setItem("skald.session", "1");
    await render(server);
    expect(server.calls).toContain("checkpoints");
    expect(summaries()).toEqual(["1 file changed: notes.md +1 −1", null]);

    await act(async () =>
      server.emit(1, { type: "checkpoint", checkpoint: checkpoint(2, { tool_call_id: "w2", changes: { files: [{ path: "b.md", status: "added", added: 2, removed: 0, binary: false }], total: 1 } }) }),
    );
    await settle();
    expect(summaries()).toEqual(["1 file changed: notes.md +1 −1", "1 file changed: b.md (new)"]);

    // A restore made elsewhere (another window) shows as a line of its own.
    await act(async () => server.emit(1, { type: "checkpoint", checkpoint: checkpoint(3, { kind: "restore", tool_call_id: null, restored_to: 1, created_at: 900 }) }));
    await settle();
    expect(q("[data-testid='restore-line']")?.textContent).toContain("Folder restored to before write notes.md — 1 file changed");
  });

  /** The confirm dialog is in a portal, outside the app's container. */
  async function clickInDialog(sel: string) {
    const el = document.querySelector(`[data-testid='restore-dialog'] ${sel}`) as HTMLElement | null;
    expect(el, `${sel} is in the dialog`).not.toBeNull();
    await act(async () => el!.click());
    await settle();
  }
  const sessionIds = () => [...container.querySelectorAll<HTMLElement>("[data-testid='session-item']")].map((e) => e.dataset.sessionId).sort();
  const restores = (server: FakeServer) => server.commands.filter((c) => c.cmd === "restore_checkpoint");
  async function openChat1(server: FakeServer) {
    server.sessions.push({ ...info(server.nextId++), title: "Edit the notes" });
    server.stored[1] = stored();
    server.checkpoints = [checkpoint(1)];
    localStorage.setItem("skald.session", "1");
    await render(server);
    expect(summaries()).toEqual(["1 file changed: notes.md +1 −1", null]);
  }

  it("a restore that also rewinds opens the new chat; the original keeps every message", async () => {
    const server = new FakeServer();
    await openChat1(server);
    // A turn ends meanwhile: the sessions list is computed now, before the fork, and
    // answered only after it has opened (it must not drop the new chat and close it).
    let release: () => void = () => {};
    const late = new Promise<void>((r) => (release = r));
    server.hold = (c) => (c.cmd === "list_sessions" ? late : null);
    await act(async () => server.emit(1, { type: "done", session_id: 1, outcome: "final", text: "" }));
    server.hold = null;
    await click("[data-testid='checkpoint-restore']");
    await clickInDialog("[data-testid='restore-dialog-rewind']");
    await clickInDialog("[data-testid='restore-dialog-confirm']");
    expect(restores(server)).toEqual([{ cmd: "restore_checkpoint", id: 1, rewind: true }]);
    release();
    await settle();

    // The new chat is the current one, with the conversation before the call, ready to type in.
    expect(q(".session.active[data-session-id='2']"), text()).not.toBeNull();
    expect(server.calls).toContain("history 2");
    expect(q("[data-testid='message-list'][data-loaded='1']"), text()).not.toBeNull();
    expect(text()).toContain("edit the notes");
    expect(text()).not.toContain("Editing.");
    expect(document.activeElement).toBe(q("[data-testid='composer']"));
    expect(localStorage.getItem("skald.session")).toBe("2");
    // Both chats are in the list.
    expect(sessionIds()).toEqual(["1", "2"]);
    expect(q("[data-testid='session-item'][data-session-id='2']")!.textContent).toContain("Edit the notes (rewound)");
    expect(q("[data-testid='session-item'][data-session-id='1']")!.textContent).toContain("Edit the notes");

    // The original chat keeps every message and shows the restore.
    await click("[data-testid='session-item'][data-session-id='1'] .session-main");
    expect(text()).toContain("edit the notes");
    expect(text()).toContain("Editing.");
    expect(q("[data-testid='restore-line']")?.textContent).toContain("Folder restored to before write notes.md");
    expect(sessionIds()).toEqual(["1", "2"]);
  });

  it("a restore without the rewind box stays in the chat and sends no rewind", async () => {
    const server = new FakeServer();
    await openChat1(server);
    await click("[data-testid='checkpoint-restore']");
    expect((document.querySelector("[data-testid='restore-dialog-rewind']") as HTMLInputElement).checked).toBe(false);
    await clickInDialog("[data-testid='restore-dialog-confirm']");
    expect(restores(server)).toHaveLength(1);
    expect(restores(server)[0]).toStrictEqual({ cmd: "restore_checkpoint", id: 1 });
    expect(q(".session.active[data-session-id='1']"), text()).not.toBeNull();
    expect(sessionIds()).toEqual(["1"]);
    expect(text()).toContain("Editing.");
    expect(q("[data-testid='restore-line']")?.textContent).toContain("Folder restored to before write notes.md");
  });
});

describe("a chat's model", () => {
  const modelButton = () => q("[data-testid='model-button']") as HTMLElement;
  it("is remembered by the chat: set in one, the other keeps the default, and a list asked for before does not undo it", async () => {
    const server = new FakeServer();
    server.sessions.push(info(server.nextId++), info(server.nextId++));
    localStorage.setItem("skald.session", "1");
    await render(server);
    expect(modelButton().textContent).toBe("gpt-4.1 (default)");

    // A turn ends elsewhere: the app asks for the list, whose reply (computed before the
    // change) arrives after it.
    let release: () => void = () => {};
    const late = new Promise<void>((r) => (release = r));
    server.hold = (c) => (c.cmd === "list_sessions" ? late : null);
    await act(async () => server.emit(2, { type: "done", session_id: 2, outcome: "final", text: "" }));
    server.hold = null;
    await sendFirstMessage("/model openai/o3-mini");
    expect(server.commands).toContainEqual({ cmd: "set_session_model", session_id: 1, model: "openai/o3-mini" });
    expect(modelButton().textContent).toBe("o3-mini");
    release();
    await settle();
    expect(modelButton().textContent).toBe("o3-mini");

    await click("[data-testid='session-item'][data-session-id='2'] .session-main");
    expect(modelButton().textContent).toBe("gpt-4.1 (default)");
    await click("[data-testid='session-item'][data-session-id='1'] .session-main");
    expect(modelButton().textContent).toBe("o3-mini");
    expect(server.calls).not.toContain("send_message");
  });
});

// The daily budget (docs/models.md "Cost and limits"): a turn that would pass it asks in the
// Inbox, outside any tool call; the chat shows the question at its end, as the Inbox does.
describe("the daily budget's question", () => {
  const budgetQuestion = (session_id: number): InboxEntry => ({
    id: 31,
    session_id,
    session_title: "New chat",
    tool_call_id: null,
    agent_id: "main",
    depth: 0,
    title: "Daily budget",
    created_at: 5,
    kind: "question",
    payload: {
      question: "Today's model calls have cost $10.00 of your $5.00 daily budget, and this turn's next request would add about $0.0003. Run it anyway?",
      suggested_answers: ["Run it", "Stop"],
      title: "Daily budget",
    },
  });
  const card = () => q("[data-testid='question-card'][data-from='skald']") as HTMLElement | null;

  it("shows at the end of its chat, not in another, and in the Inbox, and is answered with Run it", async () => {
    const server = new FakeServer();
    server.sessions.push(info(server.nextId++), info(server.nextId++));
    localStorage.setItem("skald.session", "2");
    await render(server);
    expect(card()).toBeNull();
    server.inboxItems = [budgetQuestion(1)];
    await act(async () => server.emit(1, { type: "inbox_requested", item: budgetQuestion(1) }));
    await act(async () => new Promise((r) => setTimeout(r, 60)));
    await settle();
    // Chat 2 is open: the question is chat 1's.
    expect(card()).toBeNull();
    await click("[data-testid='session-item'][data-session-id='1'] .session-main");
    expect(card(), text()).not.toBeNull();
    expect(card()!.closest(".pending-area")).not.toBeNull();
    expect(card()!.textContent).toContain("Daily budget");
    expect([...card()!.querySelectorAll("[data-testid='suggested-answer']")].map((b) => b.textContent)).toEqual(["Run it", "Stop"]);

    // The same question in the Inbox, with its chat.
    await click("[data-testid='nav-inbox']");
    const item = q("[data-testid='inbox-item'][data-inbox-id='31']") as HTMLElement;
    expect(item).not.toBeNull();
    expect(item.textContent).toContain("Daily budget");
    expect(item.textContent).toContain("of your $5.00 daily budget");
    await click("[data-testid='nav-chat']");
    await act(async () => (card()!.querySelector("[data-testid='suggested-answer']") as HTMLElement).click());
    await act(async () => new Promise((r) => setTimeout(r, 60)));
    await settle();
    expect(server.calls).toContain('answer 31 {"decision":"text","text":"Run it"}');
    expect(card()).toBeNull();
  });
});
