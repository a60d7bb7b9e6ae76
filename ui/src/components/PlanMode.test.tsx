// Plan mode in the UI (docs/agent-loop.md "Plan mode", docs/ui.md): the chat header's Act /
// Plan switch, Shift+Tab and `/plan` / `/act` in the composer (run, not sent; refused with
// the engine's words where the person acted), the plan-mode composer, the plan's approval
// card (the plan as Markdown, "Approve plan and start" / "Keep planning" with a note, no
// bypass or rule), the plan on its call's card, and the header back to act once an approved
// plan's call is done.

import { act, useEffect, useReducer, useState } from "react";
import { createRoot, type Root } from "react-dom/client";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AppContext, TransportContext } from "../app/context";
import { chatReducer, emptyChat } from "../chat/state";
import type { Command, InboxEntry, SessionInfo } from "../protocol";
import { fakeApp } from "../test/fakeApp";
import { FakeTransport } from "../test/fakeTransport";
import { settle } from "../test/settle";
import { ChatView } from "./ChatView";

/** A plan with a heading, a list and a hidden control character. */
const PLAN = "# Fix the parser\n\n1. Read `parse.rs`\n2. Add a test\u202e\n";

/** The chat's server: messages are taken; Markdown is rendered (headings and the rest as text). */
class Server extends FakeTransport {
  override answer(c: Command): unknown {
    switch (c.cmd) {
      case "send_message":
        return { cmd: c.cmd, queued: false };
      case "list_mcp_prompts":
        return { cmd: c.cmd, prompts: [] };
      case "list_mcp_resources":
        return { cmd: c.cmd, resources: [] };
      case "list_sessions":
        return { cmd: c.cmd, sessions: [this.sessionInfo(1)] };
      case "render_markdown":
        return { cmd: c.cmd, html: c.text.replace(/^# (.*)$/m, "<h1>$1</h1>").replace(/^\d\. (.*)$/gm, "<li>$1</li>") };
      case "answer":
        return { cmd: c.cmd };
      default:
        return super.answer(c);
    }
  }
  messages() {
    return this.sent("send_message").map((c) => c.text);
  }
}

/** The sessions list's copies of the chat, as the engine answered changes of it. */
let listed: SessionInfo[] = [];

/** The chat, fed by the server's events, its list entry kept as the shell keeps it. */
function Chat({ server, initial }: { server: Server; initial: SessionInfo }) {
  const [chat, dispatch] = useReducer(chatReducer, undefined, () => ({ ...emptyChat(1), loaded: true }));
  const [session, setSession] = useState(initial);
  useEffect(() => server.onEvent((sid, event) => sid === 1 && dispatch({ type: "event", event })), [server]);
  return (
    <ChatView
      session={session}
      sessionId={1}
      chat={chat}
      dispatch={dispatch}
      loadError={null}
      onRetryLoad={() => {}}
      viewerOpen={false}
      onToggleViewer={() => {}}
      onSession={(s) => {
        listed.push(s);
        setSession(s);
      }}
    />
  );
}

let container: HTMLDivElement;
let root: Root | null = null;

async function render(server: Server, { own = {}, inbox = [] }: { own?: Partial<SessionInfo>; inbox?: InboxEntry[] } = {}) {
  container = document.createElement("div");
  document.body.appendChild(container);
  root = createRoot(container);
  await act(async () => {
    root!.render(
      <TransportContext.Provider value={server}>
        <AppContext.Provider value={fakeApp({ inbox })}>
          <Chat server={server} initial={{ ...server.sessionInfo(1), ...own }} />
        </AppContext.Provider>
      </TransportContext.Provider>,
    );
  });
  await settle();
}

const q = (sel: string) => container.querySelector<HTMLElement>(sel);
const qa = (sel: string) => [...container.querySelectorAll<HTMLElement>(sel)];
const toggle = () => q("[data-testid='chat-mode']")!;
const box = () => q("[data-testid='composer']") as HTMLTextAreaElement;
const composerError = () => q("[data-testid='composer-error']")?.textContent ?? null;
const note = () => q("[data-testid='composer-note']")?.textContent ?? null;
const planNote = () => q("[data-testid='plan-mode-note']");

async function type(el: HTMLTextAreaElement, value: string) {
  await act(async () => {
    el.focus();
    Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, "value")!.set!.call(el, value);
    el.dispatchEvent(new Event("input", { bubbles: true }));
  });
}

async function key(el: HTMLElement, k: string, init: KeyboardEventInit = {}) {
  let ev!: KeyboardEvent;
  await act(async () => {
    ev = new KeyboardEvent("keydown", { key: k, bubbles: true, cancelable: true, ...init });
    el.dispatchEvent(ev);
  });
  await settle();
  return ev;
}

async function click(el: HTMLElement | null) {
  expect(el).not.toBeNull();
  await act(async () => el!.click());
  await settle();
}

async function enter(text: string) {
  await type(box(), text);
  await key(box(), "Enter");
}

const planApproval = (over: Partial<InboxEntry> = {}): InboxEntry => ({
  id: 9,
  session_id: 1,
  session_title: "Chat 1",
  tool_call_id: "p1",
  agent_id: "main",
  depth: 0,
  title: "exit_plan_mode",
  created_at: 1,
  kind: "approval",
  payload: { tool: "exit_plan_mode", arguments: { plan: PLAN }, label: "Approve the plan and start acting: Fix the parser", reason: "asks", category: "session", write: null, sandbox: null },
  ...over,
} as InboxEntry);

beforeEach(() => {
  localStorage.clear();
  listed = [];
});
afterEach(async () => {
  if (!root) return;
  await act(async () => root!.unmount());
  root = null;
  container.remove();
});

describe("the chat header's mode switch", () => {
  it("shows the chat's mode, switches it, and the composer says plan mode", async () => {
    const server = new Server();
    await render(server);
    expect(toggle().dataset.mode).toBe("act");
    expect(toggle().getAttribute("role")).toBe("radiogroup");
    expect(q("[data-testid='mode-act']")!.getAttribute("aria-checked")).toBe("true");
    expect(planNote()).toBeNull();
    expect(q("form.composer")!.classList.contains("composer-plan")).toBe(false);

    await click(q("[data-testid='mode-plan']"));
    expect(server.sent("set_session_mode")).toEqual([{ cmd: "set_session_mode", session_id: 1, mode: "plan" }]);
    expect(toggle().dataset.mode).toBe("plan");
    expect(q("[data-testid='mode-plan']")!.getAttribute("aria-checked")).toBe("true");
    expect(listed.at(-1)).toMatchObject({ id: 1, mode: "plan" });
    // The composer wears it, and says what it means.
    expect(q("form.composer")!.classList.contains("composer-plan")).toBe(true);
    expect(planNote()!.textContent).toContain("Plan mode — the agent changes nothing until you approve its plan");
    expect(box().getAttribute("aria-describedby")).toBe(planNote()!.id);
    expect(box().placeholder).toContain("plan");

    // The arrow keys move it back.
    await key(q("[data-testid='mode-plan']")!, "ArrowLeft");
    expect(toggle().dataset.mode).toBe("act");
    expect(planNote()).toBeNull();
  });

  it("opens in the chat's own mode, and shows a refusal beside the switch", async () => {
    const server = new Server();
    server.chatModes.set(1, "plan");
    await render(server);
    expect(toggle().dataset.mode).toBe("plan");
    expect(planNote()).not.toBeNull();
    server.modeRefusal = "chat 1 does not exist";
    await click(q("[data-testid='mode-act']"));
    expect(toggle().dataset.mode).toBe("plan");
    expect(q("[data-testid='mode-error']")!.textContent).toBe("Could not switch to act mode: chat 1 does not exist");
  });
});

describe("the composer's mode commands", () => {
  it("Shift+Tab switches act and plan, the text and the focus staying", async () => {
    const server = new Server();
    await render(server);
    await type(box(), "look at the parser");
    const ev = await key(box(), "Tab", { shiftKey: true });
    expect(ev.defaultPrevented).toBe(true);
    expect(server.sent("set_session_mode").map((c) => c.mode)).toEqual(["plan"]);
    expect(toggle().dataset.mode).toBe("plan");
    expect(note()).toContain("Plan mode: the agent reads, searches and asks");
    expect(box().value).toBe("look at the parser");
    expect(document.activeElement).toBe(box());

    await key(box(), "Tab", { shiftKey: true });
    expect(server.sent("set_session_mode").map((c) => c.mode)).toEqual(["plan", "act"]);
    expect(toggle().dataset.mode).toBe("act");
    expect(note()).toContain("Act mode");
    // Tab alone is left to the browser.
    expect((await key(box(), "Tab")).defaultPrevented).toBe(false);
    expect(server.count("set_session_mode")).toBe(2);
    expect(server.messages()).toEqual([]);
  });

  it("/plan and /act switch the chat rather than being sent; a refusal keeps the command", async () => {
    const server = new Server();
    await render(server);
    await type(box(), "/pl");
    expect(qa("[data-testid='command-option'] .prompt-command").map((o) => o.textContent)).toEqual(["/plan"]);
    // Picked, it is whole: Enter then runs it.
    await key(box(), "Tab");
    expect(box().value).toBe("/plan");
    expect(q("[data-testid='command-hint']")!.textContent).toContain("changes nothing until you approve its plan");
    await key(box(), "Enter");
    expect(toggle().dataset.mode).toBe("plan");
    expect(box().value).toBe("");
    expect(note()).toContain("Plan mode");

    await enter("/plan now");
    expect(composerError()).toBe("/plan takes nothing: it switches the chat, then send your message.");
    expect(box().value).toBe("/plan now");

    server.modeRefusal = "the store is busy";
    await enter("/act");
    expect(composerError()).toBe("Could not switch to act mode: the store is busy");
    expect(box().value).toBe("/act");
    expect(toggle().dataset.mode).toBe("plan");

    server.modeRefusal = null;
    await enter("/act");
    expect(toggle().dataset.mode).toBe("act");
    expect(composerError()).toBeNull();
    expect(server.messages()).toEqual([]);
  });
});

describe("a plan to approve", () => {
  it("shows the plan as Markdown with plan buttons, and approves it", async () => {
    const server = new Server();
    server.chatModes.set(1, "plan");
    await render(server, { inbox: [planApproval()] });
    const card = q("[data-testid='approval-card']")!;
    expect(card.dataset.plan).toBe("1");
    expect(card.querySelector("[data-testid='plan-markdown'] h1")!.textContent).toBe("Fix the parser");
    expect(server.sent("render_markdown")).toEqual([{ cmd: "render_markdown", text: PLAN, session_id: 1 }]);
    expect(card.querySelector("[data-testid='approve']")!.textContent).toBe("Approve plan and start");
    expect(card.querySelector("[data-testid='reject']")!.textContent).toBe("Keep planning…");
    // A plan is not a call to allow for a while or always.
    expect(card.textContent).not.toContain("Bypass");
    expect(card.textContent).not.toContain("Always");
    // As text, its hidden characters are shown escaped.
    await click(card.querySelector<HTMLElement>("[data-testid='plan-as-text']"));
    expect(card.querySelector("[data-testid='plan-text']")!.textContent).toContain("Add a test\\u{202e}");
    expect(card.querySelector("[data-testid='plan-text'] .esc")).not.toBeNull();

    await click(card.querySelector<HTMLElement>("[data-testid='approve']"));
    expect(server.sent("answer")).toEqual([{ cmd: "answer", inbox_id: 9, answer: { decision: "approve" } }]);
  });

  it("keeps planning with a note for the agent", async () => {
    const server = new Server();
    await render(server, { inbox: [planApproval()] });
    await click(q("[data-testid='reject']"));
    const noteBox = q("[data-testid='reject-note']") as HTMLTextAreaElement;
    expect(document.activeElement).toBe(noteBox);
    expect(noteBox.placeholder).toContain("What should change in the plan?");
    await type(noteBox, "add a benchmark too");
    expect(q("[data-testid='reject-confirm']")!.textContent).toBe("Keep planning");
    await click(q("[data-testid='reject-confirm']"));
    expect(server.sent("answer")).toEqual([{ cmd: "answer", inbox_id: 9, answer: { decision: "reject", note: "add a benchmark too" } }]);
  });

  it("an approved plan's call is done: the header reads the chat again and says act", async () => {
    const server = new Server();
    server.chatModes.set(1, "plan");
    await render(server);
    expect(toggle().dataset.mode).toBe("plan");
    await act(async () => {
      server.emit(1, { type: "turn_running", session_id: 1 });
      server.emit(1, { type: "tool_start", tool_call_id: "p1", name: "exit_plan_mode", arguments: { plan: PLAN }, label_short: "Plan: Fix the parser", label_full: "Approve the plan and start acting: Fix the parser" });
      server.emit(1, { type: "approval_required", tool_call_id: "p1", name: "exit_plan_mode", arguments: { plan: PLAN }, label: "Plan", reason: "asks", inbox_id: 9 });
    });
    await settle();
    const before = server.count("list_sessions");
    // The engine switched the chat when the call ran.
    server.chatModes.set(1, "act");
    await act(async () => server.emit(1, { type: "tool_done", tool_call_id: "p1", result: "The user approved the plan." }));
    await settle();
    expect(server.count("list_sessions")).toBe(before + 1);
    expect(toggle().dataset.mode).toBe("act");
    expect(planNote()).toBeNull();
    expect(listed.at(-1)).toMatchObject({ id: 1, mode: "act" });

    // The call's card shows the plan as Markdown too.
    await click(q("[data-testid='tool-card'] .tool-toggle"));
    expect(q("[data-testid='tool-card'] [data-testid='plan-markdown'] h1")!.textContent).toBe("Fix the parser");
    expect(q("[data-testid='tool-card'] [data-testid='tool-arguments']")).toBeNull();
  });
});
