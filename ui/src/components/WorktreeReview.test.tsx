// A worktree's review: its files and hunks with their line numbers, the hunks taken by
// default and left out one by one or per file, "Apply selected" sending what is checked,
// its report (what was written, with Undo; or the conflicts, with nothing written),
// Refresh, Discard after a confirm, the keyboard, and the agent's names shown as text.
// Comments on lines: made from a line's "+" or with c, listed under the line, removed,
// sent to the worktree's chat as one message.

import { act } from "react";
import { createRoot, type Root } from "react-dom/client";
import { afterEach, describe, expect, it } from "vitest";
import { AppContext, TransportContext } from "../app/context";
import type { ApplyReport, CheckpointInfo, Command, FileReview, MergeReport, SessionInfo, WorktreeInfo } from "../protocol";
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
  sendError: string | null = null;
  /** The chat's turn runs: a message sent joins it. */
  sendQueued = false;
  /** What `commit_worktree` and `merge_worktree` answer, or refuse with. */
  commitError: string | null = null;
  mergeReport: MergeReport = { into: "main", outcome: "fast_forward", commit: "1597066aa0b1c2d3", conflicts: [] };
  mergeError: string | null = null;
  override answer(c: Command): unknown {
    switch (c.cmd) {
      case "commit_worktree":
        if (this.commitError) throw new ServerError(this.commitError);
        return { cmd: c.cmd, commit: "abcdef0123456789" };
      case "merge_worktree":
        if (this.mergeError) throw new ServerError(this.mergeError);
        return { cmd: c.cmd, report: this.mergeReport };
      case "send_message":
        if (this.sendError) throw new ServerError(this.sendError);
        return { cmd: c.cmd, queued: this.sendQueued };
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

async function render(t: FakeServer, chat: SessionInfo = CHAT, worktree: WorktreeInfo = WORKTREE) {
  container = document.createElement("div");
  document.body.appendChild(container);
  root = createRoot(container);
  events = [];
  const app = fakeApp({
    worktrees: [worktree],
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
/** A hunk's rows as "old|new|mark|text" (the line's comment button left out). */
const rows = (el: Element) => [...el.querySelectorAll(".diff-row")].map((r) => [...r.children].filter((c) => !c.matches(".line-comment-btn")).map((c) => c.textContent).join("|"));

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

describe("comments on a review's lines", () => {
  const lineButton = (el: Element, row: number) => el.querySelectorAll<HTMLElement>(".diff-row")[row]!.querySelector<HTMLElement>("[data-testid='line-comment']")!;
  const input = () => q("[data-testid='line-comment-input']") as HTMLTextAreaElement | null;
  const items = () => qa("[data-testid='line-comment-item']").map((i) => i.querySelector(".line-comment-text")!.textContent);
  const sendButton = () => q("[data-testid='review-send-comments']");
  async function write(text: string) {
    await act(async () => {
      Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, "value")!.set!.call(input(), text);
      input()!.dispatchEvent(new Event("input", { bubbles: true }));
    });
  }
  async function comment(button: HTMLElement, text: string) {
    await click(button);
    expect(document.activeElement).toBe(input());
    await write(text);
    await key("Enter");
  }

  it("are written under their line, removed, and sent to the agent as one message", async () => {
    const t = new FakeServer();
    await render(t);
    expect(sendButton()).toBeNull();
    const five = lineButton(hunk(1), 1);
    expect(five.getAttribute("aria-label")).toBe("Comment on draft.md line 5");
    expect(lineButton(hunk(0), 0).getAttribute("aria-label")).toBe("Comment on draft.md removed line 1");
    await click(five);
    expect(five.getAttribute("aria-expanded")).toBe("true");
    expect(input()!.getAttribute("aria-label")).toBe("Comment on draft.md line 5");
    expect(document.activeElement).toBe(input());
    // Shift+Enter is a new line; Enter adds it, and the focus goes back to the line.
    await write("Not shouting, please.");
    await key("Enter", { shiftKey: true });
    expect(input()).not.toBeNull();
    await key("Enter");
    expect(input()).toBeNull();
    expect(document.activeElement).toBe(five);
    expect(items()).toEqual(["Not shouting, please."]);
    expect(hunk(1).querySelector("[data-testid='line-comment-item']")).not.toBeNull();
    expect(q("[data-testid='line-comment-remove']")!.getAttribute("aria-label")).toBe("Remove the comment on draft.md line 5");

    await comment(lineButton(hunk(0), 0), "Keep the first line.");
    await comment(lineButton(fileOf("out/made.txt"), 0), "Why this file?");
    expect(sendButton()!.textContent).toBe(" Send 3 comments to the agent");
    // Removed from its line.
    await click(fileOf("out/made.txt").querySelector<HTMLElement>("[data-testid='line-comment-remove']")!);
    expect(items()).toEqual(["Keep the first line.", "Not shouting, please."]);
    expect(sendButton()!.textContent).toBe(" Send 2 comments to the agent");
    // Comments are not hunks: what is taken stays as it was.
    expect(q("[data-testid='review-count']")!.textContent).toBe("3 files · 4 of 4 changes taken");

    await click(sendButton()!);
    expect(t.sent("send_message")).toEqual([
      {
        cmd: "send_message",
        session_id: 4,
        text: [
          "Review comments on your changes:",
          "",
          "1. `draft.md` line 1 of the old file (a line you removed):",
          "   > one",
          "   Keep the first line.",
          "",
          "2. `draft.md` line 5:",
          "   > FIVE",
          "   Not shouting, please.",
        ].join("\n"),
      },
    ]);
    expect(items()).toEqual([]);
    expect(sendButton()).toBeNull();
    expect(q("[data-testid='comments-sent']")!.textContent).toBe("Sent 2 comments to the agent, as its next message. Open the chat");
    expect(t.count("apply_worktree")).toBe(0);
    await click("[data-testid='comments-open-chat']");
    expect(events).toEqual(["open 4"]);
  });

  it("are written from the keyboard: c on a change opens its first line's; Escape leaves; Ctrl+Enter adds, not applies", async () => {
    const t = new FakeServer();
    await render(t);
    expect(q("[data-testid='review-help']")!.textContent).toContain("c on a change");
    await act(async () => hunkBox(1).focus());
    await key("c");
    expect(input()!.getAttribute("aria-label")).toBe("Comment on draft.md removed line 5");
    await write("Keep five.");
    await key("Escape");
    expect(input()).toBeNull();
    expect(items()).toEqual([]);
    expect(document.activeElement).toBe(lineButton(hunk(1), 0));

    await act(async () => hunkBox(1).focus());
    await key("c");
    await write("Keep five.");
    await key("Enter", { ctrlKey: true });
    expect(items()).toEqual(["Keep five."]);
    expect(t.count("apply_worktree")).toBe(0);

    // An empty comment is not added; one is trimmed.
    await act(async () => hunkBox(0).focus());
    await key("c");
    await key("Enter");
    expect(input()).not.toBeNull();
    expect(q("[data-testid='line-comment-add']")!.getAttribute("aria-disabled")).toBe("true");
    await write("  Lower case.  ");
    await click("[data-testid='line-comment-add']");
    expect(items()).toEqual(["Lower case.", "Keep five."]);
  });

  it("say when the agent is working and reads them at its next step; a failed send keeps them", async () => {
    const t = new FakeServer();
    t.sendError = "session 4 does not exist";
    await render(t);
    await comment(lineButton(hunk(0), 1), "Lower case.");
    await click(sendButton()!);
    expect(q("[data-testid='comments-error']")!.textContent).toBe("Could not send the comments: session 4 does not exist");
    expect(items()).toEqual(["Lower case."]);
    t.sendError = null;
    t.sendQueued = true;
    await click(sendButton()!);
    expect(q("[data-testid='comments-error']")).toBeNull();
    expect(q("[data-testid='comments-sent']")!.textContent).toBe("Sent 1 comment to the agent: it is working, and reads them at its next step. Open the chat");
  });

  it("on a line a refresh no longer shows are listed apart, and still sent", async () => {
    const t = new FakeServer();
    await render(t);
    await comment(lineButton(hunk(1), 1), "Not shouting.");
    t.files = [DRAFT_FIRST_ONLY];
    await click("[data-testid='review-refresh']");
    const orphans = q("[data-testid='comments-orphans']")!;
    expect(orphans.textContent).toContain("Comments on lines the changes no longer show");
    expect(orphans.querySelector(".line-comment-text")!.textContent).toBe("Not shouting.");
    await click(sendButton()!);
    expect(t.sent("send_message")[0]!.text).toBe("Review comments on your changes:\n\n1. `draft.md` line 5:\n   > FIVE\n   Not shouting.");
    expect(q("[data-testid='comments-orphans']")).toBeNull();
  });

  it("cannot be sent when the worktree's chat was deleted", async () => {
    const t = new FakeServer();
    await render(t, CHAT, { ...WORKTREE, session_id: null });
    await comment(lineButton(hunk(0), 1), "Lower case.");
    expect(sendButton()!.getAttribute("aria-disabled")).toBe("true");
    expect(sendButton()!.getAttribute("title")).toMatch(/chat was deleted/);
    await click(sendButton()!);
    expect(t.count("send_message")).toBe(0);
  });
});

const DRAFT_FIRST_ONLY: FileReview = { ...DRAFT, hunks: [DRAFT.hunks[0]!] };

describe("a git worktree's commit and merge", () => {
  const GIT: WorktreeInfo = { ...WORKTREE, kind: "git", repo: "/home/me/paper", branch: "skald/paper-1", base_commit: "0123" };
  const outcome = () => q("[data-testid='git-outcome']")!;
  async function type(sel: string, value: string) {
    const input = q(sel) as HTMLInputElement;
    await act(async () => {
      Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value")!.set!.call(input, value);
      input.dispatchEvent(new Event("input", { bubbles: true }));
    });
  }
  async function merge() {
    await click("[data-testid='git-merge']");
    const dialog = q("[data-testid='merge-dialog']")!;
    expect(dialog.textContent).toContain("Merge skald/paper-1 into your branch?");
    expect(dialog.textContent).toContain("git reset --keep ORIG_HEAD");
    await click("[data-testid='merge-dialog-confirm']");
  }

  it("is offered for a git worktree only", async () => {
    await render(new FakeServer());
    expect(q("[data-testid='git-actions']")).toBeNull();
  });

  it("commits on the worktree's branch with the message typed, or the engine's own; shows a refusal", async () => {
    const t = new FakeServer();
    await render(t, CHAT, GIT);
    const open = q("[data-testid='git-commit-open']")!;
    expect(open.textContent).toBe("Commit on skald/paper-1…");
    await click(open);
    expect(open.getAttribute("aria-expanded")).toBe("true");
    expect(document.activeElement).toBe(q("[data-testid='git-commit-message']"));
    // Empty: the engine's default message.
    await click("[data-testid='git-commit']");
    // With the state reviewed: the commit holds what the review showed, nothing later.
    expect(t.sent("commit_worktree")).toEqual([{ cmd: "commit_worktree", name: "paper-1", snapshot: "snap-1" }]);
    expect(outcome().dataset.result).toBe("committed");
    expect(outcome().textContent).toContain("Committed abcdef0 on skald/paper-1.");
    expect(q("[data-testid='git-commit-form']")).toBeNull();
    await click("[data-testid='git-commit-open']");
    await type("[data-testid='git-commit-message']", "  Tidy the draft ");
    t.commitError = "worktree paper-1 has nothing to commit";
    await click("[data-testid='git-commit']");
    expect(t.sent("commit_worktree")[1]).toEqual({ cmd: "commit_worktree", name: "paper-1", message: "Tidy the draft", snapshot: "snap-1" });
    expect(outcome().dataset.result).toBe("error");
    expect(outcome().getAttribute("role")).toBe("alert");
    expect(outcome().textContent).toBe("Could not commit: worktree paper-1 has nothing to commit");
    // The form stays, with the message, to try again; Escape closes it.
    expect((q("[data-testid='git-commit-message']") as HTMLInputElement).value).toBe("  Tidy the draft ");
    await key("Escape");
    expect(q("[data-testid='git-commit-form']")).toBeNull();
    expect(document.activeElement).toBe(q("[data-testid='git-commit-open']"));
  });

  it("merges after a confirm, and says what happened: a fast-forward, a merge commit, nothing to merge, a clash", async () => {
    const t = new FakeServer();
    await render(t, CHAT, GIT);
    await click("[data-testid='git-merge']");
    await click("[data-testid='merge-dialog-cancel']");
    expect(t.count("merge_worktree")).toBe(0);

    await merge();
    expect(t.sent("merge_worktree")).toEqual([{ cmd: "merge_worktree", name: "paper-1" }]);
    expect(outcome().dataset.result).toBe("fast_forward");
    expect(q("[data-testid='git-merge-text']")!.textContent).toBe("main fast-forwarded to 1597066.");
    expect(outcome().textContent).toContain("To undo it, run git reset --keep ORIG_HEAD in /home/me/paper.");

    t.mergeReport = { into: "main", outcome: "merge_commit", commit: "feedbeef00", conflicts: [] };
    await merge();
    expect(q("[data-testid='git-merge-text']")!.textContent).toBe("Merged into main (feedbee).");
    expect(outcome().textContent).toContain("git reset --keep ORIG_HEAD");

    t.mergeReport = { into: "main", outcome: "up_to_date", conflicts: [] };
    await merge();
    expect(q("[data-testid='git-merge-text']")!.textContent).toBe("main already has everything of skald/paper-1: nothing to merge.");
    expect(outcome().textContent).not.toContain("ORIG_HEAD");

    t.mergeReport = { into: "main", outcome: "conflicts", conflicts: ["draft.md", "notes/\u202e.md"] };
    await merge();
    expect(outcome().dataset.result).toBe("conflicts");
    expect(outcome().getAttribute("role")).toBe("alert");
    expect(q("[data-testid='git-merge-text']")!.textContent).toBe("Not merged: both changed draft.md, notes/\\u{202e}.md — nothing was written.");
    expect(outcome().textContent).toContain("Apply the worktree's changes instead");
  });

  it("shows the engine's refusal to merge", async () => {
    const t = new FakeServer();
    t.mergeError = "worktree paper-1 has changes not committed on skald/paper-1: commit them first, or apply them instead";
    await render(t, CHAT, GIT);
    await merge();
    expect(outcome().dataset.result).toBe("error");
    expect(outcome().textContent).toBe(`Could not merge: ${t.mergeError}`);
  });
});
