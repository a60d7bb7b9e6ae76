// A best-of-N trial side by side: one column per agent with its letter, model (the
// configured one named), state and last answer; each worktree's diff, read again while its
// agent works; Apply this one (all of it, with the reviewed snapshot) and its report with
// Undo; Review hunk by hunk; Discard the others after a confirm; the agents' text as text.

import { act } from "react";
import { createRoot, type Root } from "react-dom/client";
import { afterEach, describe, expect, it, vi } from "vitest";
import { AppContext, TransportContext } from "../app/context";
import type { ApplyReport, BoardAgent, CheckpointInfo, Command, FileReview, SessionInfo, WorktreeInfo } from "../protocol";
import { ServerError } from "../transport";
import { fakeApp } from "../test/fakeApp";
import { FakeTransport } from "../test/fakeTransport";
import { settle } from "../test/settle";
import { TRIAL_POLL_MS, TrialView } from "./TrialView";

const wt = (letter: string, session_id: number | null): WorktreeInfo => ({
  id: session_id ?? 9,
  name: `paper-try1-${letter}`,
  session_id,
  source: "/home/me/paper",
  root: `/d/paper-try1-${letter}`,
  working_dir: `/d/paper-try1-${letter}`,
  kind: "copy",
  status: "active",
  created_at: 1,
  trial: "paper-try1",
});
const chat = (id: number, over: Partial<SessionInfo> = {}): SessionInfo => ({ id, title: `Trial (${id})`, agent_id: "main", kind: "interactive", working_dir: "/w", created_at: 1, updated_at: 1, running: false, mode: "act", ...over });
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
const draft = (answer: string): FileReview => ({ path: "draft.md", status: "modified", binary: false, hunks: [{ index: 0, old_start: 1, new_start: 1, removed: ["the draft\n"], added: [`${answer}\n`] }] });

class FakeServer extends FakeTransport {
  diffs: Record<string, FileReview[]> = { "paper-try1-a": [draft("answer A")], "paper-try1-b": [draft("answer B\u202e")], "paper-try1-c": [] };
  board: BoardAgent[] = [row(1, { last_message: "I wrote answer A." }), row(2, { last_message: "I wrote **answer B**.", model: "openai/o3-mini" }), row(3, { state: "working" })];
  report: ApplyReport = { written: ["draft.md"], unchanged: [], conflicts: [], checkpoint_id: 31 };
  discardRefusals: Record<string, string> = {};
  override answer(c: Command): unknown {
    switch (c.cmd) {
      case "board":
        return { cmd: c.cmd, agents: this.board };
      case "worktree_diff":
        return { cmd: c.cmd, files: this.diffs[c.name] ?? [], snapshot: `snap-${c.name}` };
      case "apply_worktree":
        return { cmd: c.cmd, report: this.report };
      case "discard_worktree":
        if (this.discardRefusals[c.name]) throw new ServerError(this.discardRefusals[c.name]!);
        return { cmd: c.cmd };
      case "restore_checkpoint": {
        const checkpoint: CheckpointInfo = { id: 32, session_id: 2, tool_call_id: null, kind: "restore", folder: "/home/me/paper", before: "b", after: "a", changes: { files: [], total: 0 }, note: "", restored_to: c.id, created_at: 2 };
        return { cmd: c.cmd, checkpoint, fork: null };
      }
      default:
        return super.answer(c);
    }
  }
}

let container: HTMLDivElement;
let root: Root;
let events: string[];

async function render(t: FakeServer, over: { worktrees?: WorktreeInfo[]; sessions?: SessionInfo[] } = {}) {
  container = document.createElement("div");
  document.body.appendChild(container);
  root = createRoot(container);
  events = [];
  const app = fakeApp({
    worktrees: over.worktrees ?? [wt("b", 2), wt("a", 1), wt("c", 3), { ...wt("x", 8), trial: "other-try1" }],
    sessions: over.sessions ?? [chat(1), chat(2, { model: "openai/o3-mini" }), chat(3, { running: true })],
    openSession: (id) => events.push(`open ${id}`),
    reviewWorktree: (name) => events.push(`review ${name}`),
    refreshWorktrees: () => events.push("refresh"),
  });
  await act(async () => {
    root.render(
      <TransportContext.Provider value={t}>
        <AppContext.Provider value={app}>
          <TrialView trial="paper-try1" backLabel="Back to the worktrees" onBack={() => events.push("back")} />
        </AppContext.Provider>
      </TransportContext.Provider>,
    );
  });
  await settle();
}

afterEach(async () => {
  vi.useRealTimers();
  await act(async () => root.unmount());
  container.remove();
});

const q = (sel: string) => document.querySelector(sel) as HTMLElement | null;
const qa = (sel: string) => [...document.querySelectorAll<HTMLElement>(sel)];
const col = (letter: string) => q(`[data-testid='trial-column'][data-worktree='paper-try1-${letter}']`)!;
const inCol = (letter: string, sel: string) => col(letter).querySelector(sel) as HTMLElement | null;

async function click(el: HTMLElement | null) {
  expect(el).not.toBeNull();
  await act(async () => el!.click());
  await settle();
}

describe("a trial side by side", () => {
  it("shows one column per agent, by letter: its model, its state, its last answer and its diff", async () => {
    const t = new FakeServer();
    await render(t);
    expect(q("h1")!.textContent).toBe("Best of 3: paper-try1");
    expect(document.activeElement).toBe(q("h1"));
    expect(qa("[data-testid='trial-column']").map((c) => [c.dataset.worktree, c.dataset.state])).toEqual([
      ["paper-try1-a", "done"],
      ["paper-try1-b", "done"],
      ["paper-try1-c", "working"],
    ]);
    // The configured model is named once list_models says which it is.
    expect(inCol("a", "[data-testid='trial-model']")!.textContent).toBe("openai/gpt-4.1");
    expect(inCol("a", ".trial-model-line")!.textContent).toBe("openai/gpt-4.1 (configured)");
    expect(inCol("b", "[data-testid='trial-model']")!.textContent).toBe("openai/o3-mini");
    expect(inCol("a", "[data-testid='trial-state']")!.textContent).toBe("done");
    expect(inCol("c", "[data-testid='trial-state']")!.textContent).toBe("working");
    expect(inCol("a", "[data-testid='trial-answer']")!.textContent).toBe("I wrote answer A.");
    // Text, not Markdown or HTML; a bidi control shown escaped.
    expect(inCol("b", "[data-testid='trial-answer']")!.textContent).toBe("I wrote **answer B**.");
    expect(inCol("b", "[data-testid='trial-file'] .diff-add .code")!.textContent).toContain("\\u{202e}");
    // A working agent has no last answer yet, and says it has no changes yet.
    expect(inCol("c", "[data-testid='trial-answer']")).toBeNull();
    expect(inCol("c", "[data-testid='trial-diff']")!.textContent).toBe("No changes yet.");
    expect(inCol("a", "[data-testid='trial-stat']")!.textContent).toBe("1 file +1 −1");
    expect([...col("a").querySelectorAll(".diff-row")].map((r) => r.textContent)).toEqual(["1/1 · line 1", "1-the draft", "1+answer A"]);
    expect(t.sent("worktree_diff").map((c) => c.name).sort()).toEqual(["paper-try1-a", "paper-try1-b", "paper-try1-c"]);
  });

  it("reads a working agent's changes again every few seconds and after each of its checkpoints", async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    const t = new FakeServer();
    await render(t);
    const reads = (name: string) => t.sent("worktree_diff").filter((c) => c.name === name).length;
    expect(reads("paper-try1-c")).toBe(1);
    t.diffs["paper-try1-c"] = [draft("answer C")];
    await act(async () => {
      vi.advanceTimersByTime(TRIAL_POLL_MS + 10);
    });
    await settle();
    expect(reads("paper-try1-c")).toBe(2);
    expect(reads("paper-try1-a")).toBe(1);
    expect(inCol("c", "[data-testid='trial-file']")).not.toBeNull();
    await act(async () => t.emit(3, { type: "checkpoint", checkpoint: { id: 5, session_id: 3, tool_call_id: "x", kind: "call", folder: "/d", before: "a", after: "b", changes: { files: [], total: 1 }, note: "", restored_to: null, created_at: 1 } }));
    await settle();
    expect(reads("paper-try1-c")).toBe(3);
    expect(reads("paper-try1-a")).toBe(1);
  });

  it("applies one agent's changes whole, with Undo; a working one is not applied", async () => {
    const t = new FakeServer();
    await render(t);
    const applyC = inCol("c", "[data-testid='trial-apply']")!;
    expect(applyC.getAttribute("aria-disabled")).toBe("true");
    expect(applyC.title).toContain("still working");
    await click(applyC);
    expect(t.count("apply_worktree")).toBe(0);

    await click(inCol("b", "[data-testid='trial-apply']"));
    expect(t.sent("apply_worktree")).toEqual([{ cmd: "apply_worktree", name: "paper-try1-b", snapshot: "snap-paper-try1-b" }]);
    expect(inCol("b", "[data-testid='apply-written']")!.textContent).toBe("Applied to your folder (1 file): draft.md");
    expect(events).toContain("refresh");
    await click(inCol("b", "[data-testid='apply-undo']"));
    expect(t.sent("restore_checkpoint")).toEqual([{ cmd: "restore_checkpoint", id: 31 }]);
    expect(inCol("b", "[data-testid='apply-report']")!.dataset.undone).toBe("1");
    // Undone, there is nothing to discard the others for.
    expect(inCol("b", "[data-testid='trial-discard-others']")).toBeNull();
  });

  it("after an apply, discards the others once confirmed, and says which could not be", async () => {
    const t = new FakeServer();
    t.discardRefusals["paper-try1-c"] = "worktree paper-try1-c's chat is running; stop it before discarding its worktree";
    await render(t);
    expect(q("[data-testid='trial-discard-others']")).toBeNull();
    await click(inCol("a", "[data-testid='trial-apply']"));
    const others = inCol("a", "[data-testid='trial-discard-others']")!;
    expect(others.textContent!.trim()).toBe("Discard the others (B, C)");
    await click(others);
    const dialog = q("[data-testid='trial-discard-dialog']")!;
    expect(dialog.textContent).toContain("Discard the other 2 agents' worktrees?");
    expect(dialog.textContent).toContain("paper-try1-b");
    expect(dialog.textContent).toContain("paper-try1-c — still working");
    expect(dialog.textContent).toContain("Their chats stay.");
    await click(q("[data-testid='trial-discard-dialog-cancel']"));
    expect(t.count("discard_worktree")).toBe(0);
    await click(inCol("a", "[data-testid='trial-discard-others']"));
    await click(q("[data-testid='trial-discard-dialog-confirm']"));
    expect(t.sent("discard_worktree").map((c) => c.name)).toEqual(["paper-try1-b", "paper-try1-c"]);
    expect(inCol("a", "[data-testid='trial-discard-errors']")!.textContent).toBe(`Could not discard paper-try1-c: ${t.discardRefusals["paper-try1-c"]}`);
  });

  it("a conflict writes nothing and offers no discard; Review hunk by hunk and the chat open from a column", async () => {
    const t = new FakeServer();
    t.report = { written: [], unchanged: [], conflicts: [{ path: "draft.md", markers: "<<<<<<< yours\nmine\n=======\nanswer A\n>>>>>>> the agent's\n" }] };
    await render(t);
    await click(inCol("a", "[data-testid='trial-apply']"));
    expect(inCol("a", "[data-testid='apply-report']")!.dataset.result).toBe("conflicts");
    expect(inCol("a", "[data-testid='conflict-markers']")!.textContent).toContain("<<<<<<< yours");
    expect(inCol("a", "[data-testid='trial-discard-others']")).toBeNull();
    await click(inCol("b", "[data-testid='trial-review']"));
    await click(inCol("b", "[data-testid='trial-open-chat']"));
    await click(q("[data-testid='trial-back']"));
    expect(events.filter((e) => e !== "refresh")).toEqual(["review paper-try1-b", "open 2", "back"]);
  });

  it("an agent waiting for an approval says so, with the way to the Inbox", async () => {
    const t = new FakeServer();
    t.board = [row(1), row(2), row(3, { state: "waiting", waiting: 1 })];
    const gone: string[] = [];
    container = document.createElement("div");
    document.body.appendChild(container);
    root = createRoot(container);
    events = [];
    const app = fakeApp({ worktrees: [wt("a", 1), wt("c", 3)], sessions: [chat(1), chat(3, { running: true })], go: (v) => gone.push(v) });
    await act(async () => {
      root.render(
        <TransportContext.Provider value={t}>
          <AppContext.Provider value={app}>
            <TrialView trial="paper-try1" backLabel="Back" onBack={() => {}} />
          </AppContext.Provider>
        </TransportContext.Provider>,
      );
    });
    await settle();
    expect(col("c").dataset.state).toBe("waiting");
    expect(inCol("c", "[data-testid='trial-state']")!.textContent).toBe("waiting for you");
    await click(inCol("c", "[data-testid='trial-waiting'] button"));
    expect(gone).toEqual(["inbox"]);
  });

  it("says so when every worktree of the trial is gone", async () => {
    const t = new FakeServer();
    await render(t, { worktrees: [] });
    expect(container.textContent).toContain("No agents left");
  });
});
