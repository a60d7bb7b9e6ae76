// A worktree's review: its files and hunks with their line numbers, the hunks taken by
// default and left out one by one or per file, "Apply selected" sending what is checked,
// its report (what was written, with Undo; or the conflicts, with nothing written),
// Refresh, Discard after a confirm, the keyboard, and the agent's names shown as text.

import { act } from "react";
import { createRoot, type Root } from "react-dom/client";
import { afterEach, describe, expect, it } from "vitest";
import { AppContext, TransportContext } from "../app/context";
import type { ApplyReport, CheckpointInfo, Command, FileReview, SessionInfo, WorktreeInfo } from "../protocol";
import { ServerError } from "../transport";
import { fakeApp } from "../test/fakeApp";
import { FakeTransport } from "../test/fakeTransport";
import { settle } from "../test/settle";
import { WorktreeReview } from "./WorktreeReview";

const WORKTREE: WorktreeInfo = {
  id: 1,
  name: "paper-1",
  session_id: 4,
  source: "/home/me/paper",
  root: "/home/me/.local/share/skald-worktrees/paper-1",
  working_dir: "/home/me/.local/share/skald-worktrees/paper-1",
  kind: "copy",
  status: "active",
  created_at: 1,
};
const CHAT: SessionInfo = { id: 4, title: "Tidy the draft", agent_id: "main", kind: "interactive", working_dir: WORKTREE.working_dir, created_at: 1, updated_at: 1, running: false, mode: "act" };

const DRAFT: FileReview = {
  path: "draft.md",
  status: "modified",
  binary: false,
  hunks: [
    { index: 0, old_start: 1, new_start: 1, removed: ["one\n"], added: ["ONE\n"] },
    { index: 1, old_start: 5, new_start: 5, removed: ["five\n"], added: ["FIVE\n"] },
  ],
};
const MADE: FileReview = { path: "out/made.txt", status: "added", binary: false, hunks: [{ index: 0, old_start: 0, new_start: 1, removed: [], added: ["made\n"] }] };
const LOGO: FileReview = { path: "logo.png", status: "modified", binary: true, hunks: [] };

/** The worktree commands, as the service answers them; records each call. */
class FakeServer extends FakeTransport {
  files: FileReview[] = [DRAFT, MADE, LOGO];
  report: ApplyReport = { written: ["draft.md"], unchanged: [], conflicts: [], checkpoint_id: 12 };
  applyError: string | null = null;
  discardError: string | null = null;
  restoreError: string | null = null;
  override answer(c: Command): unknown {
    switch (c.cmd) {
      case "worktree_diff":
        if (c.name !== "paper-1") throw new ServerError(`there is no worktree named ${c.name}`);
        return { cmd: c.cmd, files: this.files, snapshot: "snap-1" };
      case "apply_worktree":
        if (this.applyError) throw new ServerError(this.applyError);
        return { cmd: c.cmd, report: this.report };
      case "restore_checkpoint": {
        if (this.restoreError) throw new ServerError(this.restoreError);
        const checkpoint: CheckpointInfo = {
          id: 13,
          session_id: 4,
          tool_call_id: null,
          kind: "restore",
          folder: WORKTREE.source,
          before: "b",
          after: "a",
          changes: { files: [], total: 0 },
          note: "",
          restored_to: c.id,
          created_at: 2,
        };
        return { cmd: c.cmd, checkpoint, fork: null };
      }
      case "discard_worktree":
        if (this.discardError) throw new ServerError(this.discardError);
        return { cmd: c.cmd };
      default:
        return super.answer(c);
    }
  }
}

let container: HTMLDivElement;
let root: Root;
let events: string[];

async function render(t: FakeServer, chat: SessionInfo = CHAT) {
  container = document.createElement("div");
  document.body.appendChild(container);
  root = createRoot(container);
  events = [];
  const app = fakeApp({
    worktrees: [WORKTREE],
    sessions: [chat],
    openSession: (id) => events.push(`open ${id}`),
    refreshWorktrees: () => events.push("refresh"),
  });
  await act(async () => {
    root.render(
      <TransportContext.Provider value={t}>
        <AppContext.Provider value={app}>
          <WorktreeReview name="paper-1" backLabel="Back to the chat" onBack={() => events.push("back")} onDiscarded={() => events.push("discarded")} />
        </AppContext.Provider>
      </TransportContext.Provider>,
    );
  });
  await settle();
}

const q = (sel: string) => document.querySelector(sel) as HTMLElement | null;
const qa = (sel: string) => [...document.querySelectorAll<HTMLElement>(sel)];
const box = (sel: string) => q(sel) as HTMLInputElement;

async function click(sel: string | HTMLElement) {
  const el = typeof sel === "string" ? q(sel) : sel;
  expect(el, `${String(sel)} is on the page`).not.toBeNull();
  await act(async () => el!.click());
  await settle();
}

async function key(key: string, init: KeyboardEventInit = {}) {
  const el = document.activeElement as HTMLElement;
  await act(async () => {
    el.dispatchEvent(new KeyboardEvent("keydown", { key, bubbles: true, cancelable: true, ...init }));
  });
  await settle();
}

const hunk = (i: number) => qa("[data-testid='review-hunk']")[i]!;
const hunkBox = (i: number) => hunk(i).querySelector<HTMLInputElement>("[data-testid='hunk-check']")!;
const fileOf = (path: string) => q(`[data-testid='review-file'][data-path='${path}']`)!;
const rows = (el: Element) => [...el.querySelectorAll(".diff-row")].map((r) => [...r.children].map((c) => c.textContent).join("|"));

afterEach(async () => {
  await act(async () => root.unmount());
  container.remove();
});

describe("a worktree's review", () => {
  it("shows each file with its status and counts, and each hunk with its line numbers", async () => {
    const t = new FakeServer();
    await render(t);
    expect(t.commands).toContainEqual({ cmd: "worktree_diff", name: "paper-1" });
    expect(q("#review-h")!.textContent).toBe("Review worktree paper-1");
    expect(q(".review-facts")!.textContent).toContain("/home/me/paper");
    expect(qa("[data-testid='review-file']").map((f) => [f.dataset.path, f.dataset.status, f.querySelector("[data-testid='file-stat']")!.textContent])).toEqual([
      ["draft.md", "modified", "+2 −2"],
      ["out/made.txt", "added", "+1 −0"],
      ["logo.png", "modified", "binary"],
    ]);
    expect(qa("[data-testid='review-hunk']")).toHaveLength(2);
    expect(rows(hunk(0))).toEqual(["1||-|one", "|1|+|ONE"]);
    expect(rows(hunk(1))).toEqual(["5||-|five", "|5|+|FIVE"]);
    expect(hunk(0).textContent).toContain("Change 1 of 2 · line 1");
    // A new file shows its lines but is one choice; a binary one says it is taken whole.
    expect(fileOf("out/made.txt").querySelectorAll("[data-testid='hunk-check']")).toHaveLength(0);
    expect(rows(fileOf("out/made.txt"))).toEqual(["|1|+|made"]);
    expect(fileOf("logo.png").textContent).toContain("A binary file: taken or left whole.");
    expect(q("[data-testid='review-count']")!.textContent).toBe("3 files · 4 of 4 changes taken");
    expect(q("[data-testid='review-help']")!.textContent).toMatch(/j\/k.*Space.*Enter/);
    // Every change is taken to begin with, and the first has the focus.
    expect(qa("[data-testid='hunk-check']").every((b) => (b as HTMLInputElement).checked)).toBe(true);
    expect(document.activeElement).toBe(hunkBox(0));
  });

  it("applies what is checked: a hunk left out, a file left out", async () => {
    const t = new FakeServer();
    await render(t);
    await click(hunkBox(0));
    expect(hunk(0).dataset.taken).toBe("0");
    await click(fileOf("logo.png").querySelector<HTMLElement>("[data-testid='file-check']")!);
    expect(fileOf("logo.png").dataset.taken).toBe("none");
    expect(q("[data-testid='review-count']")!.textContent).toBe("3 files · 2 of 4 changes taken");
    const draftBox = fileOf("draft.md").querySelector<HTMLInputElement>("[data-testid='file-check']")!;
    expect(draftBox.indeterminate).toBe(true);
    await click("[data-testid='review-apply']");
    // With the state reviewed: refused if the agent changed the worktree since.
    expect(t.sent("apply_worktree")).toEqual([{ cmd: "apply_worktree", name: "paper-1", files: [{ path: "draft.md", hunks: [1] }, { path: "out/made.txt" }], snapshot: "snap-1" }]);
    const report = q("[data-testid='apply-report']")!;
    expect(report.dataset.result).toBe("written");
    expect(q("[data-testid='apply-written']")!.textContent).toBe("Applied to your folder (1 file): draft.md");
    expect(events).toContain("refresh");
  });

  it("a file's box takes all of it or none", async () => {
    const t = new FakeServer();
    await render(t);
    const draftBox = () => fileOf("draft.md").querySelector<HTMLInputElement>("[data-testid='file-check']")!;
    expect(draftBox().getAttribute("aria-label")).toBe("Take every change of draft.md");
    await click(draftBox());
    expect([hunkBox(0).checked, hunkBox(1).checked]).toEqual([false, false]);
    await click(hunkBox(1));
    expect(draftBox().indeterminate).toBe(true);
    // Some taken: the box takes all.
    await click(draftBox());
    expect([hunkBox(0).checked, hunkBox(1).checked, draftBox().indeterminate]).toEqual([true, true, false]);
  });

  it("with nothing checked, there is nothing to apply", async () => {
    const t = new FakeServer();
    t.files = [DRAFT];
    await render(t);
    await click(fileOf("draft.md").querySelector<HTMLElement>("[data-testid='file-check']")!);
    expect(q("[data-testid='review-apply']")!.getAttribute("aria-disabled")).toBe("true");
    await click("[data-testid='review-apply']");
    expect(t.count("apply_worktree")).toBe(0);
  });

  it("Undo restores the apply's checkpoint", async () => {
    const t = new FakeServer();
    await render(t);
    await click("[data-testid='review-apply']");
    expect(t.sent("apply_worktree")[0]!.files).toEqual([{ path: "draft.md" }, { path: "out/made.txt" }, { path: "logo.png" }]);
    await click("[data-testid='apply-undo']");
    expect(t.sent("restore_checkpoint")).toEqual([{ cmd: "restore_checkpoint", id: 12 }]);
    expect(q("[data-testid='apply-report']")!.dataset.undone).toBe("1");
    expect(q("[data-testid='apply-written']")!.textContent).toBe("Undone: your folder is back to how it was before the apply of draft.md");
    expect(q("[data-testid='apply-undo']")).toBeNull();
  });

  it("a failed Undo says why and can be tried again", async () => {
    const t = new FakeServer();
    t.restoreError = "the chat's turn is running; stop it before restoring its folder";
    await render(t);
    await click("[data-testid='review-apply']");
    await click("[data-testid='apply-undo']");
    expect(q("[data-testid='apply-undo-error']")!.textContent).toBe("Could not restore: the chat's turn is running; stop it before restoring its folder");
    expect(q("[data-testid='apply-undo']")).not.toBeNull();
  });

  it("shows each conflict with its markers, and says nothing was written", async () => {
    const t = new FakeServer();
    const markers = "<<<<<<< yours\nfive, mine\n=======\nFIVE\n>>>>>>> paper-1\n";
    t.report = { written: [], unchanged: [], conflicts: [{ path: "draft.md", markers }, { path: "logo.png" }] };
    await render(t);
    await click("[data-testid='review-apply']");
    const report = q("[data-testid='apply-report']")!;
    expect(report.dataset.result).toBe("conflicts");
    expect(report.getAttribute("role")).toBe("alert");
    expect(report.textContent).toContain("Nothing was written: 2 files were changed in your folder too, in the same place.");
    expect(qa("[data-testid='apply-conflict']").map((c) => c.dataset.path)).toEqual(["draft.md", "logo.png"]);
    expect(q("[data-testid='conflict-markers']")!.textContent).toBe(markers);
    expect(qa("[data-testid='apply-conflict']")[1]!.textContent).toContain("there is no text to show");
    expect(q("[data-testid='apply-undo']")).toBeNull();
  });

  it("shows a refused apply", async () => {
    const t = new FakeServer();
    t.applyError = "draft.md changed while it was being applied; nothing was written, try again";
    await render(t);
    await click("[data-testid='review-apply']");
    expect(q("[data-testid='apply-report']")!.textContent).toBe("Could not apply: draft.md changed while it was being applied; nothing was written, try again");
  });

  it("Refresh reads the changes again, keeping out a hunk left out while it is the same", async () => {
    const t = new FakeServer();
    t.files = [DRAFT];
    await render(t);
    await click(hunkBox(1));
    t.files = [{ ...DRAFT, hunks: [{ index: 0, old_start: 1, new_start: 1, removed: ["one\n"], added: ["One!\n"] }, { ...DRAFT.hunks[1]! }] }];
    await click("[data-testid='review-refresh']");
    expect(t.count("worktree_diff")).toBe(2);
    expect(rows(hunk(0))).toEqual(["1||-|one", "|1|+|One!"]);
    expect([hunkBox(0).checked, hunkBox(1).checked]).toEqual([true, false]);
  });

  it("says when the agent is still working", async () => {
    const t = new FakeServer();
    await render(t, { ...CHAT, running: true });
    expect(q("[data-testid='review-running']")!.textContent).toContain("Refresh to see its latest changes");
  });

  it("moves between changes with j/k and the arrows, and applies with Enter", async () => {
    const t = new FakeServer();
    await render(t);
    expect(document.activeElement).toBe(hunkBox(0));
    await key("j");
    expect(document.activeElement).toBe(hunkBox(1));
    await key("ArrowDown");
    // The new file is the next choice: its own box.
    expect(document.activeElement).toBe(fileOf("out/made.txt").querySelector("[data-testid='file-check']"));
    await key("j");
    await key("j");
    expect(document.activeElement).toBe(fileOf("logo.png").querySelector("[data-testid='file-check']"));
    await key("k");
    await key("ArrowUp");
    expect(document.activeElement).toBe(hunkBox(1));
    // Only the change in focus takes the Tab stop.
    expect(qa("[data-testid='hunk-check']").map((b) => b.tabIndex)).toEqual([-1, 0]);
    await key("Enter");
    expect(t.count("apply_worktree")).toBe(1);
  });

  it("applies with Ctrl+Enter from anywhere in it; j goes back to the change last in focus", async () => {
    const t = new FakeServer();
    await render(t);
    await key("j");
    q("[data-testid='review-refresh']")!.focus();
    // Enter on a button is the button's.
    await key("Enter");
    expect(t.count("apply_worktree")).toBe(0);
    await key("j");
    expect(document.activeElement).toBe(hunkBox(1));
    q("[data-testid='review-refresh']")!.focus();
    await key("Enter", { ctrlKey: true });
    expect(t.count("apply_worktree")).toBe(1);
  });

  it("discards after a confirm that says what goes; Escape cancels", async () => {
    const t = new FakeServer();
    await render(t);
    await click("[data-testid='review-discard']");
    const dialog = q("[data-testid='discard-dialog']")!;
    expect(dialog.textContent).toContain("Discard worktree paper-1?");
    expect(dialog.textContent).toContain(WORKTREE.root);
    expect(dialog.textContent).toContain("Your folder is not touched.");
    // Keys in the dialog are the dialog's: Enter there applies nothing.
    await key("Enter");
    expect(t.count("apply_worktree")).toBe(0);
    await act(async () => {
      dialog.dispatchEvent(new KeyboardEvent("keydown", { key: "Escape", bubbles: true }));
    });
    expect(q("[data-testid='discard-dialog']")).toBeNull();
    expect(t.count("discard_worktree")).toBe(0);
    await click("[data-testid='review-discard']");
    await click("[data-testid='discard-dialog-confirm']");
    expect(t.sent("discard_worktree")).toEqual([{ cmd: "discard_worktree", name: "paper-1" }]);
    expect(events).toEqual(["refresh", "discarded"]);
  });

  it("shows a refused discard", async () => {
    const t = new FakeServer();
    t.discardError = "worktree paper-1's chat is running; stop it before discarding its worktree";
    await render(t);
    await click("[data-testid='review-discard']");
    await click("[data-testid='discard-dialog-confirm']");
    expect(q("[data-testid='review-error']")!.textContent).toBe("Could not discard the worktree: worktree paper-1's chat is running; stop it before discarding its worktree");
    expect(events).not.toContain("discarded");
  });

  it("goes back, and opens its chat", async () => {
    const t = new FakeServer();
    await render(t);
    expect(q("[data-testid='review-back']")!.getAttribute("aria-label")).toBe("Back to the chat");
    await click("[data-testid='review-back']");
    await click("[data-testid='review-chat']");
    expect(q("[data-testid='review-chat']")!.textContent).toBe("Tidy the draft");
    expect(events).toEqual(["back", "open 4"]);
  });

  it("says when the agent changed nothing, and when the changes cannot be read", async () => {
    const t = new FakeServer();
    t.files = [];
    await render(t);
    expect(container.textContent).toContain("No changes yet");
    expect(q("[data-testid='review-apply']")!.getAttribute("aria-disabled")).toBe("true");
    await act(async () => root.unmount());
    container.remove();
    const gone = new FakeServer();
    gone.answer = (c) => {
      if (c.cmd === "worktree_diff") throw new ServerError("the worktree's folder is gone");
      return FakeServer.prototype.answer.call(gone, c);
    };
    await render(gone);
    expect(q("[data-testid='review-load-error']")!.textContent).toContain("Could not read the worktree's changes: the worktree's folder is gone");
  });

  it("shows a hostile file name and line as text", async () => {
    const t = new FakeServer();
    const name = "<img src=x onerror=alert(1)>.md";
    t.files = [{ path: name, status: "modified", binary: false, hunks: [{ index: 0, old_start: 1, new_start: 1, removed: ["a\u202eb\n"], added: ["<b>bold</b>\n"] }] }];
    await render(t);
    expect(container.querySelector("img")).toBeNull();
    expect(container.querySelector("b")).toBeNull();
    expect(q(".review-path")!.textContent).toBe(name);
    expect(rows(hunk(0))).toEqual(["1||-|a\\u{202e}b", "|1|+|<b>bold</b>"]);
  });
});
