// A compacted chat (docs/agent-loop.md "Long conversations"): the turns a summary stands for
// stay in the chat, folded under the summary's card (its text, its "Left out:" line apart),
// unfolded and folded again; the card's Undo gives them back whole; a compaction is
// announced in the chat before its summary comes, which then shows; older pages load into
// the fold only once it is open. And where the fold ends, with live items and groups.

import { act, useReducer } from "react";
import { createRoot, type Root } from "react-dom/client";
import { afterEach, describe, expect, it } from "vitest";
import { AppContext, TransportContext, useEvents } from "../app/context";
import { chatReducer, emptyChat, type Item } from "../chat/state";
import { foldUnderSummary, splitLeftOut, summaryBoundary } from "../chat/summary";
import type { ChatMessage, Command, Reply, Role, SummaryInfo } from "../protocol";
import { fakeApp } from "../test/fakeApp";
import { FakeTransport } from "../test/fakeTransport";
import { settle } from "../test/settle";
import { ServerError } from "../transport";
import { ChatView } from "./ChatView";

const SUMMARY: SummaryInfo = {
  up_to_message_id: 4,
  summary: "The person asked about the harbour twice; the agent answered.\nLeft out: the tide tables it read.",
  created_at: 1000,
};

function msg(id: number, role: Role, content: string): ChatMessage {
  return { id, stack_id: null, role, content, html: null, reasoning: null, status: "complete", synthetic: false, created_at: id };
}

/** Three turns: the first two (messages 1 to 4) are the ones a compaction folds. */
const TURNS = [msg(1, "user", "First question"), msg(2, "assistant", "First answer"), msg(3, "user", "Second question"), msg(4, "assistant", "Second answer"), msg(5, "user", "Third question"), msg(6, "assistant", "Third answer")];

class Server extends FakeTransport {
  summary: SummaryInfo | null = null;
  messages: ChatMessage[] = TURNS;
  hasMore = false;
  history(): Extract<Reply, { cmd: "history" }> {
    return { cmd: "history", session: this.sessionInfo(1), messages: this.messages, tool_calls: [], has_more: this.hasMore, ...(this.summary ? { summary: this.summary } : {}) };
  }
  override answer(c: Command): unknown {
    switch (c.cmd) {
      case "history":
        return this.history();
      case "undo_compaction": {
        const undone = this.summary != null;
        this.summary = null;
        return { cmd: c.cmd, undone };
      }
      case "list_mcp_prompts":
        return { cmd: c.cmd, prompts: [] };
      case "list_mcp_resources":
        return { cmd: c.cmd, resources: [] };
      default:
        return super.answer(c);
    }
  }
}

function Chat({ server }: { server: Server }) {
  const [chat, dispatch] = useReducer(chatReducer, undefined, () => chatReducer(emptyChat(1), { type: "history", reply: server.history() }));
  // The chat's events, as the shell hands them on (useSessions).
  useEvents((sid, event) => sid === 1 && dispatch({ type: "event", event }));
  return <ChatView session={undefined} sessionId={1} chat={chat} dispatch={dispatch} loadError={null} onRetryLoad={() => {}} viewerOpen={false} onToggleViewer={() => {}} />;
}

let container: HTMLDivElement;
let root: Root | null = null;

async function render(server: Server) {
  container = document.createElement("div");
  document.body.appendChild(container);
  root = createRoot(container);
  await act(async () => {
    root!.render(
      <TransportContext.Provider value={server}>
        <AppContext.Provider value={fakeApp()}>
          <Chat server={server} />
        </AppContext.Provider>
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

const q = (sel: string) => container.querySelector<HTMLElement>(sel);
const qa = (sel: string) => [...container.querySelectorAll<HTMLElement>(sel)];
const card = () => q("[data-testid='summary-card']");
const toggle = () => q("[data-testid='summary-toggle']");
/** The messages shown, in order, each marked when it is one the summary folds. */
const shown = () => qa("[data-testid='message']").map((m) => `${m.closest(".virtual-row.folded") ? "folded " : ""}${m.querySelector(".bubble")!.textContent}`);

async function click(el: HTMLElement | null) {
  expect(el).not.toBeNull();
  await act(async () => el!.click());
  await settle();
}

describe("a compacted chat", () => {
  it("folds the turns the summary stands for under its card, and unfolds them", async () => {
    const server = new Server();
    server.summary = SUMMARY;
    await render(server);
    const c = card()!;
    expect(c.dataset.upTo).toBe("4");
    expect(q("[data-testid='summary-text']")!.textContent).toBe("The person asked about the harbour twice; the agent answered.");
    expect(q("[data-testid='summary-left-out']")!.textContent).toBe("Left out: the tide tables it read.");
    // The card comes first, the later turn after it; the folded ones are not in the list.
    expect(qa(".virtual-row")[0]!.contains(c)).toBe(true);
    expect(shown()).toEqual(["Third question", "Third answer"]);
    expect(toggle()!.textContent).toBe("Show 4 earlier messages");
    expect(toggle()!.getAttribute("aria-expanded")).toBe("false");

    await click(toggle());
    expect(shown()).toEqual(["folded First question", "folded First answer", "folded Second question", "folded Second answer", "Third question", "Third answer"]);
    expect(toggle()!.textContent).toBe("Hide the 4 earlier messages");
    expect(toggle()!.getAttribute("aria-expanded")).toBe("true");
    await click(toggle());
    expect(shown()).toEqual(["Third question", "Third answer"]);
  });

  it("undoes the compaction from its card: the summary goes, the turns show as before", async () => {
    const server = new Server();
    server.summary = SUMMARY;
    await render(server);
    await click(q("[data-testid='summary-undo']"));
    expect(server.sent("undo_compaction")).toEqual([{ cmd: "undo_compaction", session_id: 1 }]);
    // The chat's summary is read again, without reloading the chat.
    expect(server.sent("history")).toEqual([{ cmd: "history", session_id: 1, limit: 1 }]);
    expect(card()).toBeNull();
    expect(shown()).toEqual(["First question", "First answer", "Second question", "Second answer", "Third question", "Third answer"]);
  });

  it("says why an undo failed, and keeps the card", async () => {
    class Failing extends Server {
      override answer(c: Command): unknown {
        if (c.cmd === "undo_compaction") throw new ServerError("the store is busy");
        return super.answer(c);
      }
    }
    const server = new Failing();
    server.summary = SUMMARY;
    await render(server);
    await click(q("[data-testid='summary-undo']"));
    const alert = card()!.querySelector("[role='alert']")!;
    expect(alert.textContent).toBe("Could not undo the compaction: the store is busy");
    expect(shown()).toEqual(["Third question", "Third answer"]);
  });

  it("announces a compaction in the chat before its summary comes, then shows the summary over the turns", async () => {
    const server = new Server();
    await render(server);
    expect(card()).toBeNull();
    await act(async () => server.emit(1, { type: "compaction_started", session_id: 1, up_to_message_id: 4, tokens: 104_000, window: 128_000 }));
    await settle();
    const notices = qa(".notice").map((n) => n.textContent);
    expect(notices).toEqual(["Summarising older turns to keep the context within the model's window — 104k of 128k tokens"]);
    expect(card()).toBeNull();
    expect(server.count("history")).toBe(0);

    server.summary = SUMMARY;
    await act(async () => server.emit(1, { type: "context_compacted", session_id: 1, up_to_message_id: 4 }));
    await settle();
    expect(server.sent("history")).toEqual([{ cmd: "history", session_id: 1, limit: 1 }]);
    expect(card()).not.toBeNull();
    expect(shown()).toEqual(["Third question", "Third answer"]);
    expect(qa(".notice").map((n) => n.textContent)).toEqual([
      "Summarising older turns to keep the context within the model's window — 104k of 128k tokens",
      "Older turns summarised: the summary stands in for them from now on.",
    ]);
    // Another chat's compaction is not this one's.
    await act(async () => server.emit(2, { type: "context_compacted", session_id: 2, up_to_message_id: 9 }));
    await settle();
    expect(server.count("history")).toBe(1);
  });

  it("loads older pages into the fold only once it is open", async () => {
    const server = new Server();
    server.summary = SUMMARY;
    server.messages = TURNS.slice(2);
    server.hasMore = true;
    await render(server);
    // Messages 3 and 4 are loaded and folded; older ones exist.
    expect(toggle()!.textContent).toBe("Show 2+ earlier messages");
    expect(qa(".load-older")).toEqual([]);
    await click(toggle());
    expect(qa(".load-older button").map((b) => b.textContent)).toEqual(["Load earlier messages"]);
  });
});

describe("where the fold ends", () => {
  const user = (id: number | null, key = `u${id}`): Item => ({ kind: "user", key, id, text: "", state: id == null ? "sending" : "sent" });
  const answer = (id: number | null, key = `a${id}`): Item => ({ kind: "assistant", key, id, text: "", html: null, htmlFor: null, reasoning: "", streaming: false, interrupted: false });
  const note = (key: string): Item => ({ kind: "notice", key, level: "info", message: key });

  it("is before the first message the summary does not cover, whatever comes between", () => {
    // A live answer (no id yet) and a notice of the folded turn, then the kept message.
    const items = [user(1), answer(null, "live"), note("n1"), user(3), answer(4)];
    expect(summaryBoundary(items, 2)).toBe(3);
    expect(summaryBoundary(items, 0)).toBe(0);
    // Nothing newer loaded: after the last one it covers.
    expect(summaryBoundary(items, 10)).toBe(5);
    expect(summaryBoundary([note("n"), user(null)], 4)).toBe(0);
    // A sub-agent's group counts as its first message.
    const group: Item = { kind: "agent", key: "g", stackId: 1, agentId: "a", depth: 1, running: false, outcome: "final", expanded: false, children: [answer(3)] };
    expect(summaryBoundary([user(1), group, user(5)], 3)).toBe(2);
    expect(summaryBoundary([user(1), group, user(5)], 2)).toBe(1);
  });

  it("leaves a chat without a summary as it is, and keys a new compaction's card anew", () => {
    const items = [user(1), answer(2), user(3)];
    const plain = foldUnderSummary(items, null, 1, null);
    expect(plain.count).toBe(3);
    expect(plain.keyAt(2)).toBe("u3");
    const folded = foldUnderSummary(items, { ...SUMMARY, up_to_message_id: 2 }, 1, null);
    expect(folded.count).toBe(2);
    expect(folded.at(0)).toMatchObject({ kind: "summary", messages: 2, open: false });
    expect(folded.keyAt(1)).toBe("u3");
    const key = folded.keyAt(0)!;
    const open = foldUnderSummary(items, { ...SUMMARY, up_to_message_id: 2 }, 1, key);
    expect(open.count).toBe(4);
    expect([1, 2, 3].map((i) => open.at(i))).toMatchObject([{ folded: true }, { folded: true }, { folded: false }]);
    // A later compaction is another card, folded again.
    expect(foldUnderSummary(items, { ...SUMMARY, up_to_message_id: 2, created_at: 2000 }, 1, key).open).toBe(false);
  });
});

describe("a summary's last line", () => {
  it("is set apart when it says what was left out", () => {
    expect(splitLeftOut("Goals: a.\nFiles: b.\n\nLeft out: the diff.\n")).toEqual({ body: "Goals: a.\nFiles: b.", leftOut: "the diff." });
    expect(splitLeftOut("Done.\n**Left out:** long outputs")).toEqual({ body: "Done.", leftOut: "long outputs" });
    expect(splitLeftOut("Nothing is left out: all kept.")).toEqual({ body: "Nothing is left out: all kept.", leftOut: null });
  });
});
