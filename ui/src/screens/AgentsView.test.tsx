// The Agents board: a row per agent with its state in words (queued, working, waiting with
// its count, done, failed, stopped, interrupted, idle), title, where, time worked (ticking
// while it works), tokens, cost, files and last message; the keyboard (↑/↓, j/k,
// Home/End, Enter opens the chat) and a click; the filters; read again after events and
// every few seconds; its empty and failed states; the agents' text shown as text.

import { act } from "react";
import { createRoot, type Root } from "react-dom/client";
import { afterEach, describe, expect, it, vi } from "vitest";
import { AppContext, TransportContext } from "../app/context";
import { BOARD_DEBOUNCE_MS, BOARD_POLL_MS } from "../app/useBoard";
import type { BoardAgent, Command } from "../protocol";
import { ServerError } from "../transport";
import { fakeApp } from "../test/fakeApp";
import { FakeTransport } from "../test/fakeTransport";
import { settle } from "../test/settle";
import { AgentsView } from "./AgentsView";

function agent(over: Partial<BoardAgent>): BoardAgent {
  return {
    session_id: 1,
    title: "",
    agent_id: "main",
    kind: "interactive",
    state: "idle",
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

/** The board as the engine answers it; a working agent's time counts up to the read. */
class FakeServer extends FakeTransport {
  agents: BoardAgent[] = [];
  /** When the working agents' turns started (their `active_ms` then grows with the clock). */
  startedAt = 0;
  refusal: string | null = null;
  override answer(c: Command): unknown {
    if (c.cmd === "board") {
      if (this.refusal) throw new ServerError(this.refusal);
      const now = Date.now();
      return { cmd: c.cmd, agents: this.agents.map((a) => (a.state === "working" ? { ...a, active_ms: a.active_ms + (now - this.startedAt) } : a)) };
    }
    return super.answer(c);
  }
}

const FLEET: BoardAgent[] = [
  agent({ session_id: 7, title: "Write the intro", state: "working", active_ms: 60_000, turn_started_at: 1, input_tokens: 40_000, output_tokens: 1_234, cost_usd: 0.4, unpriced: 1 }),
  agent({ session_id: 6, title: "Second chat", state: "queued" }),
  agent({
    session_id: 5,
    title: "Fix the figures",
    state: "waiting",
    waiting: 2,
    folder: "/d-worktrees/paper-1",
    worktree: "paper-1",
    source: "/home/me/paper",
    changes: { files: 3, added: 41, removed: 7 },
  }),
  agent({ session_id: 4, title: "Done one", state: "done", active_ms: 192_000, input_tokens: 900, output_tokens: 50, cost_usd: 0.0123, last_message: "All done.\nThe figures are fixed, and the captions say what they show." }),
  agent({ session_id: 3, title: "Failed one", state: "failed" }),
  agent({ session_id: 2, title: "Stopped one", state: "stopped" }),
  agent({ session_id: 8, title: "Crashed one", state: "interrupted", kind: "background", agent_id: "researcher" }),
  agent({ session_id: 1, title: "  ", state: "idle" }),
];

let container: HTMLDivElement;
let root: Root | null = null;
let opened: number[];

async function render(server: FakeServer) {
  container = document.createElement("div");
  document.body.appendChild(container);
  root = createRoot(container);
  opened = [];
  await act(async () => {
    root!.render(
      <TransportContext.Provider value={server}>
        <AppContext.Provider value={fakeApp({ openSession: (id) => opened.push(id) })}>
          <AgentsView />
        </AppContext.Provider>
      </TransportContext.Provider>,
    );
  });
  await settle();
}

afterEach(async () => {
  vi.useRealTimers();
  if (!root) return;
  await act(async () => root!.unmount());
  root = null;
  container.remove();
});

const q = (sel: string, from: ParentNode = container) => from.querySelector<HTMLElement>(sel);
const rows = () => [...container.querySelectorAll<HTMLElement>("[data-testid='agent-row']")];
const row = (id: number) => q(`[data-testid='agent-row'][data-session-id='${id}']`)!;
const cell = (id: number, name: string) => q(`[data-testid='agent-${name}']`, row(id))!;
const selectedId = () => Number(rows().find((r) => r.getAttribute("aria-selected") === "true")?.dataset.sessionId);
const list = () => q("[data-testid='agent-list']")!;

async function key(k: string) {
  await act(async () => {
    list().dispatchEvent(new KeyboardEvent("keydown", { key: k, bubbles: true }));
  });
}

async function click(el: HTMLElement | null) {
  expect(el).not.toBeNull();
  await act(async () => el!.click());
  await settle();
}

describe("the Agents board", () => {
  it("shows a row per agent with its state in words, where it works, what it used and changed", async () => {
    const server = new FakeServer();
    server.agents = FLEET;
    await render(server);
    expect(server.sent("board")).toEqual([{ cmd: "board" }]);
    expect(rows().map((r) => r.dataset.state)).toEqual(["working", "queued", "waiting", "done", "failed", "stopped", "interrupted", "idle"]);
    expect(rows().map((r) => q("[data-testid='agent-state']", r)!.textContent)).toEqual([
      "working",
      "queued",
      "waiting · 2 — 2 in the Inbox",
      "done",
      "failed",
      "stopped",
      "interrupted",
      "idle",
    ]);
    // Each state has its own look and says what it means.
    expect(q("[data-testid='agent-state']", row(6))!.className).toBe("agent-state agent-state-queued");
    expect(q("[data-testid='agent-state']", row(8))!.getAttribute("title")).toMatch(/ended mid-turn/);

    expect(cell(7, "title").textContent).toBe("Write the intro");
    expect(cell(1, "title").textContent).toBe("Untitled");
    expect(cell(8, "title").textContent).toBe("Crashed onebackground · researcher");
    expect(cell(7, "where").textContent).toBe("/home/me/paper");
    expect(cell(5, "where").textContent).toBe("/home/me/paper · worktree paper-1");
    expect(cell(5, "where").getAttribute("title")).toBe("/home/me/paper · worktree paper-1\\nIts folder: /d-worktrees/paper-1");

    expect(cell(4, "time").textContent).toBe("worked 3m 12s");
    expect(cell(1, "time").textContent).toBe("worked –");
    expect(cell(7, "tokens").textContent).toBe("tokens 41.2k");
    expect(cell(7, "cost").textContent).toBe("cost $0.40+");
    expect(cell(7, "cost").getAttribute("title")).toMatch(/1 call of models with no known price not counted/);
    expect(cell(4, "cost").textContent).toBe("cost $0.0123");
    expect(cell(1, "cost").textContent).toBe("cost –");
    expect(cell(5, "files").textContent).toBe("files changed 3 files +41 −7");
    expect(cell(5, "files").getAttribute("title")).toBe("3 files changed in its worktree, since the worktree was made: 41 lines added, 7 removed");
    expect(cell(4, "files").textContent).toBe("files changed –");

    // The last message on one line, whole in its tooltip.
    expect(cell(4, "last").textContent).toBe("All done. The figures are fixed, and the captions say what they show.");
    expect(cell(4, "last").getAttribute("title")).toBe("All done.\\nThe figures are fixed, and the captions say what they show.");
    expect(cell(1, "last").textContent).toBe("Nothing asked yet");
    expect(cell(3, "last").textContent).toBe("No answer yet");
  });

  it("moves the selection with ↑/↓, j/k, Home and End, and Enter opens the chat", async () => {
    const server = new FakeServer();
    server.agents = FLEET;
    await render(server);
    // The list has the focus at once, the first row selected.
    expect(document.activeElement).toBe(list());
    expect(list().getAttribute("role")).toBe("listbox");
    expect(selectedId()).toBe(7);
    expect(list().getAttribute("aria-activedescendant")).toBe(row(7).id);
    await key("ArrowDown");
    expect(selectedId()).toBe(6);
    await key("j");
    expect(selectedId()).toBe(5);
    await key("k");
    expect(selectedId()).toBe(6);
    await key("End");
    expect(selectedId()).toBe(1);
    await key("ArrowDown");
    expect(selectedId()).toBe(1);
    await key("Home");
    expect(selectedId()).toBe(7);
    await key("ArrowUp");
    expect(selectedId()).toBe(7);
    await key("ArrowDown");
    await key("Enter");
    expect(opened).toEqual([6]);
    expect(list().getAttribute("aria-activedescendant")).toBe(row(6).id);
  });

  it("opens a chat with a click on its row", async () => {
    const server = new FakeServer();
    server.agents = FLEET;
    await render(server);
    await click(row(4));
    expect(opened).toEqual([4]);
    expect(selectedId()).toBe(4);
  });

  it("filters the active and the finished agents, with their counts", async () => {
    const server = new FakeServer();
    server.agents = FLEET;
    await render(server);
    const chip = (f: string) => q(`[data-testid='board-filter-${f}']`)!;
    expect(chip("all").textContent).toBe("All 8");
    expect(chip("active").textContent).toBe("Active 3");
    expect(chip("finished").textContent).toBe("Finished 4");
    expect(chip("all").getAttribute("aria-pressed")).toBe("true");
    await click(chip("active"));
    expect(chip("active").getAttribute("aria-pressed")).toBe("true");
    expect(chip("all").getAttribute("aria-pressed")).toBe("false");
    expect(rows().map((r) => Number(r.dataset.sessionId))).toEqual([7, 6, 5]);
    await click(chip("finished"));
    expect(rows().map((r) => r.dataset.state)).toEqual(["done", "failed", "stopped", "interrupted"]);
    // The selection moves to a shown row.
    expect(selectedId()).toBe(4);

    // A filter with no agent says so.
    server.agents = FLEET.filter((a) => a.state === "idle");
    await act(async () => server.emit(1, { type: "done", session_id: 1, outcome: "final", text: "" }));
    await act(async () => new Promise((r) => setTimeout(r, BOARD_DEBOUNCE_MS + 50)));
    await settle();
    expect(rows()).toHaveLength(0);
    expect(q(".state-empty")!.textContent).toBe("No finished agentsNo agent has finished a turn yet.");
  });

  it("reads the board again after an agent's events, a burst at once", async () => {
    const server = new FakeServer();
    server.agents = [agent({ session_id: 7, title: "First", state: "working", turn_started_at: 1 })];
    await render(server);
    expect(server.count("board")).toBe(1);
    server.agents = [agent({ session_id: 9, title: "Second", state: "queued" }), agent({ session_id: 7, title: "First", state: "working", turn_started_at: 1 })];
    await act(async () => {
      server.emit(9, { type: "turn_queued", session_id: 9, ahead: 0 });
      server.emit(7, { type: "checkpoint", checkpoint: {} });
      server.emit(null, { type: "file_changed", path: "/x" });
    });
    await act(async () => new Promise((r) => setTimeout(r, BOARD_DEBOUNCE_MS + 50)));
    await settle();
    expect(server.count("board")).toBe(2);
    expect(rows().map((r) => r.dataset.state)).toEqual(["queued", "working"]);
    // The selection stays on its agent though the order changed.
    expect(selectedId()).toBe(7);
  });

  it("ticks a working agent's time, and reads the board every few seconds", async () => {
    vi.useFakeTimers({ toFake: ["Date", "setInterval", "clearInterval"] });
    const start = 1_760_000_000_000;
    vi.setSystemTime(start);
    const server = new FakeServer();
    server.startedAt = start - 5000;
    server.agents = [agent({ session_id: 7, state: "working", active_ms: 60_000, turn_started_at: start - 5000 }), agent({ session_id: 4, state: "done", active_ms: 30_000 })];
    await render(server);
    expect(cell(7, "time").textContent).toBe("worked 1m 05s");
    await act(async () => vi.advanceTimersByTime(3000));
    expect(cell(7, "time").textContent).toBe("worked 1m 08s");
    expect(cell(4, "time").textContent).toBe("worked 30s");
    expect(server.count("board")).toBe(1);
    await act(async () => vi.advanceTimersByTime(BOARD_POLL_MS - 3000));
    await settle();
    expect(server.count("board")).toBe(2);
    // Read again: the engine's count, no jump.
    expect(cell(7, "time").textContent).toBe("worked 1m 10s");
  });

  it("says when there is no agent yet", async () => {
    const server = new FakeServer();
    await render(server);
    expect(q(".state-empty")!.textContent).toBe("No agents yetStart a chat, and it shows up here with what it is doing.");
    expect(q("[data-testid='agent-list']")).toBeNull();
  });

  it("shows why the board could not be read, with a retry, and keeps the rows when a refresh fails", async () => {
    const server = new FakeServer();
    server.refusal = "the store is locked";
    await render(server);
    expect(q("[data-testid='board-error']")!.textContent).toBe("Could not read the agents: the store is lockedRetry");
    server.refusal = null;
    server.agents = [agent({ session_id: 7, title: "Back", state: "done" })];
    await click(q("[data-testid='board-error'] button"));
    expect(rows()).toHaveLength(1);
    expect(q("[data-testid='board-error']")).toBeNull();
    server.refusal = "the store is locked";
    await click(q("[data-testid='board-refresh']"));
    expect(rows()).toHaveLength(1);
    expect(q("[data-testid='board-error']")!.textContent).toBe("Could not refresh: the store is locked");
  });

  it("shows titles, folders and messages as text, escaped", async () => {
    const server = new FakeServer();
    server.agents = [agent({ session_id: 7, title: "<b>x</b>\u202e", folder: "/tmp/a\u202eb", last_message: "<img src=x onerror=alert(1)>" })];
    await render(server);
    expect(container.querySelector("b, img")).toBeNull();
    expect(cell(7, "title").textContent).toBe("<b>x</b>\\u{202e}");
    expect(cell(7, "where").textContent).toBe("/tmp/a\\u{202e}b");
    expect(cell(7, "last").textContent).toBe("<img src=x onerror=alert(1)>");
  });
});
