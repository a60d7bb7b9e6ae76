// The chat header's context meter (docs/agent-loop.md "Long conversations"): the tokens over
// the window, coloured as they near the threshold; read when the chat opens, after a turn,
// a compaction or an undo; its popover with what fills the context, the threshold, the last
// call, "Compact now" (the engine's refusal said in it) and "Undo compaction"; the keyboard.

import { act, useCallback, useState } from "react";
import { createRoot, type Root } from "react-dom/client";
import { afterEach, describe, expect, it } from "vitest";
import { TransportContext, useTransport } from "../app/context";
import type { Command, SummaryInfo } from "../protocol";
import type { ContextUsage } from "../lib/contextUsage";
import { FakeTransport } from "../test/fakeTransport";
import { settle } from "../test/settle";
import { ServerError } from "../transport";
import { ContextMeter } from "./ContextMeter";

const SUMMARY: SummaryInfo = { up_to_message_id: 4, summary: "Two notes.\nLeft out: their text.", created_at: 1000 };

/** The engine as far as the meter knows it: one chat's context, its summary and its turn. */
class Server extends FakeTransport {
  context: ContextUsage = {
    tokens: 12_345,
    window: 128_000,
    compact_at: 80,
    last_input_tokens: 9876,
    parts: [
      { what: "system", tokens: 700 },
      { what: "instructions", tokens: 145 },
      { what: "tools", tokens: 3100 },
      { what: "summary", tokens: 0 },
      { what: "messages", tokens: 6400 },
      { what: "tool_results", tokens: 2000 },
    ],
  };
  summary: SummaryInfo | null = null;
  running = false;
  /** What `compact_now` answers when the turn is not running. */
  compacted = true;
  override answer(c: Command): unknown {
    switch (c.cmd) {
      case "context_usage":
        return { cmd: c.cmd, ...this.context };
      case "compact_now":
        if (this.running) throw new ServerError("the chat's turn is running; compact it when the turn has ended");
        return { cmd: c.cmd, compacted: this.compacted };
      case "undo_compaction": {
        const undone = this.summary != null;
        this.summary = null;
        return { cmd: c.cmd, undone };
      }
      case "history":
        return { cmd: c.cmd, session: this.sessionInfo(c.session_id), messages: [], tool_calls: [], has_more: false, ...(this.summary ? { summary: this.summary } : {}) };
      default:
        return super.answer(c);
    }
  }
}

/** The header as ChatView has it: the chat's summary, read again after an undo. */
function Header({ initial }: { initial: SummaryInfo | null }) {
  const t = useTransport();
  const [summary, setSummary] = useState(initial);
  const reread = useCallback(async () => {
    const r = await t.call({ cmd: "history", session_id: 1, limit: 1 });
    setSummary(r.summary ?? null);
  }, [t]);
  return (
    <>
      <ContextMeter sessionId={1} summary={summary} onUndone={reread} />
      <button type="button" data-testid="elsewhere">
        elsewhere
      </button>
    </>
  );
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
        <Header initial={server.summary} />
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

const q = (id: string) => container.querySelector<HTMLElement>(`[data-testid='${id}']`);
const meter = () => q("context-meter")!;
const menu = () => q("context-meter-menu");
const text = (id: string) => q(id)?.textContent ?? null;

async function click(el: HTMLElement | null) {
  expect(el).not.toBeNull();
  await act(async () => el!.click());
  await settle();
}

async function key(el: HTMLElement, k: string) {
  await act(async () => {
    el.dispatchEvent(new KeyboardEvent("keydown", { key: k, bubbles: true, cancelable: true }));
  });
  await settle();
}

async function emit(server: Server, event: object) {
  await act(async () => server.emit(1, event));
  await settle();
}

describe("the chat header's context meter", () => {
  it("shows the tokens over the window, the percent in its tooltip, coloured as they near the threshold", async () => {
    const server = new Server();
    await render(server);
    expect(server.sent("context_usage")).toEqual([{ cmd: "context_usage", session_id: 1 }]);
    expect(text("context-meter-label")).toBe("12.3k / 128k");
    expect(meter().title).toBe("Context: 12,345 of 128,000 tokens (9%), summarised at 80%");
    expect(meter().getAttribute("aria-haspopup")).toBe("dialog");
    expect(meter().dataset.level).toBe("ok");

    // Past four fifths of the threshold (80% of 128k): near; past it, over.
    server.context = { ...server.context, tokens: 85_000 };
    await emit(server, { type: "done", session_id: 1, outcome: "final", text: "" });
    expect(text("context-meter-label")).toBe("85k / 128k");
    expect(meter().dataset.level).toBe("near");
    expect(meter().className).toContain("level-near");
    server.context = { ...server.context, tokens: 104_000 };
    await emit(server, { type: "done", session_id: 1, outcome: "final", text: "" });
    expect(meter().dataset.level).toBe("over");
    expect(meter().title).toBe("Context: 104,000 of 128,000 tokens (81%), summarised at 80%");
  });

  it("is read again after the chat's turns and compactions, not another chat's", async () => {
    const server = new Server();
    await render(server);
    expect(server.count("context_usage")).toBe(1);
    await act(async () => server.emit(2, { type: "done", session_id: 2, outcome: "final", text: "" }));
    await settle();
    expect(server.count("context_usage")).toBe(1);
    await emit(server, { type: "done", session_id: 1, outcome: "final", text: "" });
    expect(server.count("context_usage")).toBe(2);
    await emit(server, { type: "compaction_started", session_id: 1, up_to_message_id: 4, tokens: 104_000, window: 128_000 });
    expect(server.count("context_usage")).toBe(2);
    server.context = { ...server.context, tokens: 30_000 };
    await emit(server, { type: "context_compacted", session_id: 1, up_to_message_id: 4 });
    expect(server.count("context_usage")).toBe(3);
    expect(text("context-meter-label")).toBe("30k / 128k");
  });

  it("shows no meter when the server cannot say", async () => {
    class Old extends Server {
      override answer(c: Command): unknown {
        if (c.cmd === "context_usage") throw new ServerError("unknown command");
        return super.answer(c);
      }
    }
    await render(new Old());
    expect(q("context-meter")).toBeNull();
  });

  it("opens on a click to what fills the context, the threshold and the last call; Escape closes it", async () => {
    const server = new Server();
    await render(server);
    await click(meter());
    expect(meter().getAttribute("aria-expanded")).toBe("true");
    const m = menu()!;
    expect(m.getAttribute("role")).toBe("dialog");
    expect(document.activeElement).toBe(m);
    const parts = [...m.querySelectorAll(".meter-part")].map((p) => [p.querySelector("dt")!.textContent, p.querySelector("dd")!.textContent]);
    // No summary yet: none is listed.
    expect(parts).toEqual([
      ["System prompt", "700"],
      ["AGENTS.md & skills", "145"],
      ["Tool definitions", "3.1k"],
      ["Messages", "6.4k"],
      ["Tool results", "2k"],
    ]);
    expect(m.textContent).toContain("12,345 of 128,000 tokens · 9%");
    expect(text("context-meter-threshold")).toBe("Summarises at 80% (102k tokens)");
    expect(text("context-meter-last")).toBe("The last model call read 9,876 tokens.");
    expect(q("compact-now")).not.toBeNull();
    expect(q("undo-compaction")).toBeNull();

    await key(m, "Escape");
    expect(menu()).toBeNull();
    expect(document.activeElement).toBe(meter());
    expect(meter().getAttribute("aria-expanded")).toBe("false");

    // A click elsewhere closes it too.
    await click(meter());
    expect(menu()).not.toBeNull();
    await act(async () => {
      q("elsewhere")!.dispatchEvent(new MouseEvent("pointerdown", { bubbles: true }));
    });
    expect(menu()).toBeNull();
  });

  it("says a chat summarised only when asked, and leaves out a last call there was none of", async () => {
    const server = new Server();
    const { last_input_tokens: _none, ...rest } = server.context;
    server.context = { ...rest, compact_at: 0, tokens: 120_000 };
    await render(server);
    // With no threshold the window is the limit.
    expect(meter().dataset.level).toBe("near");
    expect(meter().title).toBe("Context: 120,000 of 128,000 tokens (93%), summarised only when asked");
    await click(meter());
    expect(text("context-meter-threshold")).toBe("Only when asked");
    expect(q("context-meter-last")).toBeNull();
  });

  it("compacts now: announced, then summarised, and read again", async () => {
    const server = new Server();
    await render(server);
    await click(meter());
    await click(q("compact-now"));
    expect(server.sent("compact_now")).toEqual([{ cmd: "compact_now", session_id: 1 }]);
    expect(text("context-meter-note")).toBe("Older turns summarised.");
    await emit(server, { type: "compaction_started", session_id: 1, up_to_message_id: 4, tokens: 12_345, window: 128_000 });
    expect(text("context-meter-note")).toBe("Summarising older turns…");
    server.context = { ...server.context, tokens: 5000, parts: server.context.parts.map((p) => (p.what === "summary" ? { ...p, tokens: 80 } : p)) };
    await emit(server, { type: "context_compacted", session_id: 1, up_to_message_id: 4 });
    expect(text("context-meter-note")).toBe("Older turns summarised.");
    expect(text("context-meter-label")).toBe("5k / 128k");
    expect([...menu()!.querySelectorAll(".meter-part dt")].map((d) => d.textContent)).toContain("Summary");
    expect(q("context-meter-error")).toBeNull();
  });

  it("says when there was nothing older to summarise, the engine's refusal while the turn runs, and its failure", async () => {
    const server = new Server();
    server.compacted = false;
    await render(server);
    await click(meter());
    await click(q("compact-now"));
    expect(text("context-meter-note")).toBe("Nothing older to summarise yet.");

    server.running = true;
    await click(q("compact-now"));
    const error = q("context-meter-error")!;
    expect(error.getAttribute("role")).toBe("alert");
    expect(error.textContent).toBe("Could not compact the chat: the chat's turn is running; compact it when the turn has ended");
    expect(q("context-meter-note")).toBeNull();
    // The popover stays open, the focus in it.
    expect(menu()).not.toBeNull();

    // The summary failed in the background: its error comes as the chat's event.
    server.running = false;
    server.compacted = true;
    await click(q("compact-now"));
    expect(q("context-meter-error")).toBeNull();
    await emit(server, { type: "error", message: "could not summarise older turns: the model failed" });
    expect(text("context-meter-error")).toBe("could not summarise older turns: the model failed");
    expect(q("context-meter-note")).toBeNull();
    // An error not after "Compact now" is the chat's to show.
    await click(q("compact-now"));
    await emit(server, { type: "context_compacted", session_id: 1, up_to_message_id: 4 });
    await emit(server, { type: "error", message: "the model failed" });
    expect(q("context-meter-error")).toBeNull();
  });

  it("undoes the chat's compaction: the chat reads its summary again, the meter its numbers", async () => {
    const server = new Server();
    server.summary = SUMMARY;
    await render(server);
    await click(meter());
    const before = server.count("context_usage");
    server.context = { ...server.context, tokens: 40_000 };
    await click(q("undo-compaction"));
    expect(server.sent("undo_compaction")).toEqual([{ cmd: "undo_compaction", session_id: 1 }]);
    expect(server.sent("history")).toEqual([{ cmd: "history", session_id: 1, limit: 1 }]);
    expect(text("context-meter-note")).toBe("Compaction undone: the turns are sent whole again.");
    expect(server.count("context_usage")).toBeGreaterThan(before);
    expect(text("context-meter-label")).toBe("40k / 128k");
    // No summary any more: nothing to undo; the focus stays in the popover, Escape closes it.
    expect(q("undo-compaction")).toBeNull();
    expect(document.activeElement).toBe(menu());
    await key(menu()!, "Escape");
    expect(menu()).toBeNull();
  });
});
