// Edit and resend, and "Fork from here" (docs/store.md "Forks", docs/ui.md), in the whole
// app: a message's actions, the inline editor (Enter sends, Escape cancels), the new chat
// opened in the original's place and streaming its answer, the headers that link a fork and
// its original both ways, the engine's refusals where the person acted, and a history read
// while the new chat's turn runs read again when it ends.

import { act } from "react";
import { createRoot, type Root } from "react-dom/client";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { App } from "../App";
import { TransportContext } from "../app/context";
import type { ChatMessage, Command, SessionInfo } from "../protocol";
import { ServerError, type ConnectionStatus } from "../transport";
import { FakeTransport } from "../test/fakeTransport";
import { settle as settleRounds } from "../test/settle";

const msg = (id: number, role: "user" | "assistant", content: string, extra: Partial<ChatMessage> = {}): ChatMessage => ({
  id,
  stack_id: null,
  role,
  content,
  html: role === "assistant" ? `<p>${content}</p>` : null,
  reasoning: null,
  status: "complete",
  synthetic: false,
  created_at: id * 10,
  ...extra,
});

const CHAT: SessionInfo = { id: 1, title: "Capitals", agent_id: "main", kind: "interactive", working_dir: "/w", created_at: 1, updated_at: 500, running: false, mode: "act" };

/** Chat 1 stored, with two exchanges; the fake makes the forks (ids from 100). */
class Server extends FakeTransport {
  override status: ConnectionStatus | null = "open";
  /** What `fork_session` fails with, when set. */
  forkRefusal: string | null = null;
  constructor() {
    super();
    this.sessions = [{ ...CHAT }];
    this.stored[1] = {
      messages: [msg(1, "user", "Capital of France?"), msg(2, "assistant", "Paris."), msg(3, "user", "And Italy?"), msg(4, "assistant", "Rome.")],
      tool_calls: [],
    };
  }
  override answer(c: Command): unknown {
    switch (c.cmd) {
      case "list_sessions":
        return { cmd: c.cmd, sessions: this.sessions.map((s) => this.sessionInfo(s.id)) };
      case "history": {
        if (!this.sessions.some((s) => s.id === c.session_id)) throw new ServerError(`session ${c.session_id} does not exist`);
        const all = this.stored[c.session_id]?.messages ?? [];
        const messages = c.limit ? all.slice(-c.limit) : all;
        return { cmd: c.cmd, session: this.sessionInfo(c.session_id), messages, tool_calls: [], has_more: false };
      }
      case "fork_session":
        if (this.forkRefusal) throw new ServerError(this.forkRefusal);
        return super.answer(c);
      case "checkpoints":
        return { cmd: c.cmd, checkpoints: [] };
      case "inbox":
        return { cmd: c.cmd, items: [] };
      case "list_mcp_prompts":
        return { cmd: c.cmd, prompts: [] };
      case "list_mcp_resources":
        return { cmd: c.cmd, resources: [] };
      default:
        return super.answer(c);
    }
  }
  histories(sid: number) {
    return this.sent("history").filter((c) => c.session_id === sid && c.limit !== 50).length;
  }
}

let container: HTMLDivElement;
let root: Root;
const settle = () => settleRounds(10);

async function render(server: Server) {
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

const q = <E extends HTMLElement = HTMLElement>(sel: string) => container.querySelector<E>(sel);
const qa = (sel: string) => [...container.querySelectorAll<HTMLElement>(sel)];
const shown = () => qa("[data-testid='message'] .bubble").map((b) => b.textContent);
const active = () => q(".session.active")?.dataset.sessionId ?? null;
const message = (id: number) => q(`[data-testid='message'][data-message-id='${id}']`);
const editor = () => q<HTMLTextAreaElement>("[data-testid='message-editor-input']");

async function click(el: HTMLElement | null) {
  expect(el).not.toBeNull();
  await act(async () => el!.click());
  await settle();
}

async function type(el: HTMLTextAreaElement, value: string) {
  await act(async () => {
    Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, "value")!.set!.call(el, value);
    el.dispatchEvent(new Event("input", { bubbles: true }));
  });
}

async function key(el: HTMLElement, k: string) {
  await act(async () => {
    el.dispatchEvent(new KeyboardEvent("keydown", { key: k, bubbles: true, cancelable: true }));
  });
  await settle();
}

beforeEach(() => {
  localStorage.clear();
  localStorage.setItem("skald.session", "1");
});
afterEach(async () => {
  await act(async () => root.unmount());
  container.remove();
});

describe("edit and resend", () => {
  it("sends the edited message as a new chat that opens and streams; the original stays, and each links the other", async () => {
    const server = new Server();
    await render(server);
    expect(shown()).toEqual(["Capital of France?", "Paris.", "And Italy?", "Rome."]);
    // The person's messages can be edited; answers can only be forked from.
    expect(message(3)!.querySelector("[data-testid='message-edit']")).not.toBeNull();
    expect(message(4)!.querySelector("[data-testid='message-edit']")).toBeNull();
    expect(message(4)!.querySelector("[data-testid='message-fork']")).not.toBeNull();

    await click(message(3)!.querySelector<HTMLElement>("[data-testid='message-edit']"));
    expect(editor()!.value).toBe("And Italy?");
    expect(document.activeElement).toBe(editor());
    await type(editor()!, "And Spain?");
    await key(editor()!, "Enter");
    expect(server.sent("edit_message")).toEqual([{ cmd: "edit_message", session_id: 1, message_id: 3, text: "And Spain?" }]);

    // The new chat opens in the original's place, with the conversation before the message
    // and the edited one; its turn runs.
    expect(active()).toBe("100");
    expect(q("h1")!.textContent).toBe("Capitals (edited)");
    expect(shown()).toEqual(["Capital of France?", "Paris.", "And Spain?"]);
    expect(q("[data-testid='forked-from']")!.textContent).toBe("Capitals");
    expect(q("[data-testid='session-item'][data-session-id='100']")!.textContent).toContain("fork ·");
    expect(q("[data-testid='stop']")).not.toBeNull();
    await act(async () => {
      server.emit(100, { type: "token_delta", text: "Madrid." });
    });
    await settle();
    expect(shown()).toContain("Madrid.");
    // It was read while its turn ran: read again when the turn ends.
    const reads = server.histories(100);
    server.stored[100]!.messages.push(msg(server.nextMessageId++, "assistant", "Madrid."));
    server.sessions = server.sessions.map((s) => (s.id === 100 ? { ...s, running: false } : s));
    await act(async () => server.emit(100, { type: "done", session_id: 100, outcome: "final", text: "Madrid." }));
    await settle();
    expect(server.histories(100)).toBe(reads + 1);
    expect(shown()).toEqual(["Capital of France?", "Paris.", "And Spain?", "Madrid."]);

    // Back to the original, unchanged: its header lists the fork.
    await click(q("[data-testid='forked-from']"));
    expect(active()).toBe("1");
    expect(shown()).toEqual(["Capital of France?", "Paris.", "And Italy?", "Rome."]);
    expect(q("[data-testid='forked-from-line']")).toBeNull();
    const forks = q("[data-testid='forks-button']")!;
    expect(forks.textContent).toBe("Forks ×1");
    await click(forks);
    const items = qa("[data-testid='fork-item']");
    expect(items.map((i) => i.dataset.sessionId)).toEqual(["100"]);
    expect(document.activeElement).toBe(items[0]);
    expect(items[0]!.textContent).toContain("Capitals (edited)");
    await click(items[0]!);
    expect(active()).toBe("100");
  });

  it("Escape cancels, giving the focus back; an empty message is not sent", async () => {
    const server = new Server();
    await render(server);
    const edit = message(1)!.querySelector<HTMLElement>("[data-testid='message-edit']")!;
    await click(edit);
    await type(editor()!, "   ");
    await key(editor()!, "Enter");
    expect(q("[data-testid='message-editor-error']")!.textContent).toBe("The message is empty.");
    await key(editor()!, "Escape");
    expect(editor()).toBeNull();
    expect(shown()[0]).toBe("Capital of France?");
    expect(document.activeElement).toBe(message(1)!.querySelector("[data-testid='message-edit']"));
    expect(server.count("edit_message")).toBe(0);
    expect(active()).toBe("1");
  });

  it("shows the engine's refusal in the editor, the text kept, and no new chat", async () => {
    const server = new Server();
    server.sendRefusal = "Configure a provider in Settings";
    await render(server);
    await click(message(3)!.querySelector<HTMLElement>("[data-testid='message-edit']"));
    await type(editor()!, "And Spain?");
    await click(q("[data-testid='message-editor-send']"));
    expect(q("[data-testid='message-editor-error']")!.textContent).toBe("Could not send the edited message: Configure a provider in Settings");
    expect(editor()!.value).toBe("And Spain?");
    expect(active()).toBe("1");
    expect(qa("[data-testid='session-item']")).toHaveLength(1);
  });

  it("is not offered for a message still on its way, one Skald wrote, or a sub-agent's", async () => {
    const server = new Server();
    server.stored[1]!.messages.push(msg(5, "user", "[task result] done", { synthetic: true }), msg(6, "user", "sub-agent prompt", { stack_id: 4 }), msg(7, "assistant", "sub-agent answer", { stack_id: 4 }));
    await render(server);
    expect(message(5)!.querySelector("[data-testid='message-edit']")).toBeNull();
    expect(message(5)!.querySelector("[data-testid='message-fork']")).not.toBeNull();
    await click(q("[data-testid='agent-group'] .agent-head"));
    expect(message(6)).not.toBeNull();
    expect(message(6)!.querySelector("[data-testid='message-actions']")).toBeNull();
    expect(message(7)!.querySelector("[data-testid='message-actions']")).toBeNull();
    // Sending: not stored yet.
    server.answer = (c: Command) => (c.cmd === "send_message" ? new Promise(() => {}) : Server.prototype.answer.call(server, c));
    const box = q<HTMLTextAreaElement>("[data-testid='composer']")!;
    await type(box, "Portugal?");
    await key(box, "Enter");
    const sending = qa("[data-testid='message'][data-state='sending']");
    expect(sending).toHaveLength(1);
    expect(sending[0]!.querySelector("[data-testid='message-actions']")).toBeNull();
  });
});

describe("fork from here", () => {
  it("makes a new chat up to the message and opens it", async () => {
    const server = new Server();
    await render(server);
    await click(message(2)!.querySelector<HTMLElement>("[data-testid='message-fork']"));
    expect(server.sent("fork_session")).toEqual([{ cmd: "fork_session", session_id: 1, message_id: 2 }]);
    expect(active()).toBe("100");
    expect(q("h1")!.textContent).toBe("Capitals (fork)");
    expect(shown()).toEqual(["Capital of France?", "Paris."]);
    expect(q("[data-testid='forked-from-line']")!.textContent).toContain("Forked from");
    expect(server.count("send_message")).toBe(0);
  });

  it("finds a streamed answer's stored id, and shows a refusal under the message", async () => {
    const server = new Server();
    await render(server);
    await act(async () => {
      server.emit(1, { type: "turn_running", session_id: 1 });
      server.emit(1, { type: "user_message", session_id: 1, message_id: 5, text: "And Spain?" });
      server.emit(1, { type: "token_delta", text: "Madrid." });
      server.emit(1, { type: "done", session_id: 1, outcome: "final", text: "Madrid." });
    });
    await settle();
    server.stored[1]!.messages.push(msg(5, "user", "And Spain?"), msg(6, "assistant", "Madrid."));
    const live = qa("[data-testid='message'][data-role='assistant']").at(-1)!;
    expect(live.dataset.messageId).toBeUndefined();
    server.forkRefusal = "the store is busy";
    await click(live.querySelector<HTMLElement>("[data-testid='message-fork']"));
    expect(server.sent("history").at(-1)).toEqual({ cmd: "history", session_id: 1, limit: 50 });
    expect(server.sent("fork_session")).toEqual([{ cmd: "fork_session", session_id: 1, message_id: 6 }]);
    const error = qa("[data-testid='message-action-error']");
    expect(error.map((e) => e.textContent)).toEqual(["Could not fork the chat: the store is busy"]);
    expect(live.contains(error[0]!)).toBe(true);
    expect(active()).toBe("1");

    server.forkRefusal = null;
    await click(live.querySelector<HTMLElement>("[data-testid='message-fork']"));
    expect(active()).toBe("100");
    expect(shown()).toEqual(["Capital of France?", "Paris.", "And Italy?", "Rome.", "And Spain?", "Madrid."]);
  });
});

describe("a chat read while its turn runs", () => {
  it("is read again at once when the turn ended before the history came", async () => {
    const server = new Server();
    server.sessions = [{ ...CHAT, running: true }];
    let release: () => void = () => {};
    const late = new Promise<void>((r) => (release = r));
    server.hold = (c) => (c.cmd === "history" && server.histories(1) === 1 ? late : null);
    await render(server);
    expect(server.histories(1)).toBe(1);
    // The turn ends (and is stored) before the history, read while it ran, arrives.
    server.sessions = [{ ...CHAT, running: false }];
    await act(async () => server.emit(1, { type: "done", session_id: 1, outcome: "final", text: "" }));
    await settle();
    release();
    await settle();
    expect(server.histories(1)).toBe(2);
    expect(q("[data-testid='stop']")).toBeNull();
    expect(shown()).toEqual(["Capital of France?", "Paris.", "And Italy?", "Rome."]);
  });
});
