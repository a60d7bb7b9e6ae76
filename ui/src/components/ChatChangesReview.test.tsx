// Taking back a chat's own changes: chat_changes hunk by hunk, nothing checked to begin
// with (taking back is the exception), Take back selected sending the checked hunks with
// the reviewed snapshot, its report with Undo, the changes read again after each, the
// clashes with their markers, and the action refused (with its reason) while the chat runs.

import { act } from "react";
import { createRoot, type Root } from "react-dom/client";
import { afterEach, describe, expect, it } from "vitest";
import { AppContext, TransportContext } from "../app/context";
import type { ApplyReport, CheckpointInfo, Command, FileReview } from "../protocol";
import { ServerError } from "../transport";
import { fakeApp } from "../test/fakeApp";
import { FakeTransport } from "../test/fakeTransport";
import { settle } from "../test/settle";
import { ChatChangesReview } from "./ChatChangesReview";

const NOTES: FileReview = {
  path: "notes.md",
  status: "modified",
  binary: false,
  hunks: [
    { index: 0, old_start: 1, new_start: 1, removed: ["one\n"], added: ["ONE\n"] },
    { index: 1, old_start: 5, new_start: 5, removed: ["five\n"], added: ["FIVE\n"] },
  ],
};
const MADE: FileReview = { path: "made.txt", status: "added", binary: false, hunks: [{ index: 0, old_start: 0, new_start: 1, removed: [], added: ["made\n"] }] };

class FakeServer extends FakeTransport {
  files: FileReview[] = [NOTES, MADE];
  snapshot = "snap-1";
  report: ApplyReport = { written: ["notes.md"], unchanged: [], conflicts: [], checkpoint_id: 40 };
  revertError: string | null = null;
  override answer(c: Command): unknown {
    switch (c.cmd) {
      case "chat_changes":
        return { cmd: c.cmd, files: this.files, snapshot: this.snapshot };
      case "revert_changes":
        if (this.revertError) throw new ServerError(this.revertError);
        // Taken back, the chat's changes are one hunk fewer.
        this.files = [{ ...NOTES, hunks: [NOTES.hunks[1]!].map((h) => ({ ...h, index: 0 })) }, MADE];
        this.snapshot = "snap-2";
        return { cmd: c.cmd, report: this.report };
      case "restore_checkpoint": {
        this.files = [NOTES, MADE];
        this.snapshot = "snap-3";
        const checkpoint: CheckpointInfo = { id: 41, session_id: 7, tool_call_id: null, kind: "restore", folder: "/home/me/paper", before: "b", after: "a", changes: { files: [], total: 0 }, note: "", restored_to: c.id, created_at: 2 };
        return { cmd: c.cmd, checkpoint, fork: null };
      }
      default:
        return super.answer(c);
    }
  }
}

let container: HTMLDivElement;
let root: Root;
let back: number;

async function render(t: FakeServer, running = false) {
  container = document.createElement("div");
  document.body.appendChild(container);
  root = createRoot(container);
  back = 0;
  await act(async () => {
    root.render(
      <TransportContext.Provider value={t}>
        <AppContext.Provider value={fakeApp()}>
          <ChatChangesReview sessionId={7} running={running} onBack={() => back++} />
        </AppContext.Provider>
      </TransportContext.Provider>,
    );
  });
  await settle();
}

afterEach(async () => {
  await act(async () => root.unmount());
  container.remove();
});

const q = (sel: string) => document.querySelector(sel) as HTMLElement | null;
const qa = (sel: string) => [...document.querySelectorAll<HTMLElement>(sel)];
const hunkBox = (i: number) => qa("[data-testid='hunk-check']")[i] as HTMLInputElement;

async function click(el: HTMLElement | null) {
  expect(el).not.toBeNull();
  await act(async () => el!.click());
  await settle();
}

describe("taking back a chat's changes", () => {
  it("shows the chat's changes hunk by hunk, none checked; nothing to take back until one is", async () => {
    const t = new FakeServer();
    await render(t);
    expect(t.sent("chat_changes")).toEqual([{ cmd: "chat_changes", session_id: 7 }]);
    expect(q("#review-h")!.textContent).toBe("Review the chat's changes");
    expect(qa("[data-testid='review-hunk']")).toHaveLength(2);
    expect(qa("[data-testid='hunk-check'], [data-testid='file-check']").every((b) => !(b as HTMLInputElement).checked)).toBe(true);
    expect(q("[data-testid='review-count']")!.textContent).toBe("2 files · 0 of 3 changes to take back");
    expect(q("[data-testid='review-file'][data-path='made.txt'] [data-testid='file-check']")!.getAttribute("aria-label")).toBe("Take back made.txt (new)");
    const act_ = q("[data-testid='review-revert']")!;
    expect(act_.textContent).toBe("Take back selected");
    expect(act_.getAttribute("aria-disabled")).toBe("true");
    await click(act_);
    expect(t.count("revert_changes")).toBe(0);
    // Nothing checked is marked; a checked change is.
    expect(q("[data-testid='review-hunk'].left")).toBeNull();
    await click(hunkBox(0));
    expect(qa("[data-testid='review-hunk']")[0]!.className).toContain("marked");
    expect(q("[data-testid='review-count']")!.textContent).toBe("2 files · 1 of 3 changes to take back");
  });

  it("takes back what is checked, with the reviewed snapshot; Undo brings it back; each reads the changes again", async () => {
    const t = new FakeServer();
    await render(t);
    await click(hunkBox(0));
    await click(q("[data-testid='review-revert']"));
    expect(t.sent("revert_changes")).toEqual([{ cmd: "revert_changes", session_id: 7, files: [{ path: "notes.md", hunks: [0] }], snapshot: "snap-1" }]);
    expect(q("[data-testid='apply-written']")!.textContent).toBe("Taken back (1 file): notes.md");
    expect(t.count("chat_changes")).toBe(2);
    expect(qa("[data-testid='review-hunk']")).toHaveLength(1);
    expect(q("[data-testid='review-count']")!.textContent).toBe("2 files · 0 of 2 changes to take back");
    await click(q("[data-testid='apply-undo']"));
    expect(t.sent("restore_checkpoint")).toEqual([{ cmd: "restore_checkpoint", id: 40 }]);
    expect(q("[data-testid='apply-report']")!.dataset.undone).toBe("1");
    expect(q("[data-testid='apply-written']")!.textContent).toBe("Undone: the changes are back in notes.md");
    expect(t.count("chat_changes")).toBe(3);
    // Taken back again, the new snapshot goes with it; a whole file is sent whole.
    await click(q("[data-testid='review-file'][data-path='made.txt'] [data-testid='file-check']"));
    await click(q("[data-testid='review-revert']"));
    expect(t.sent("revert_changes")[1]).toEqual({ cmd: "revert_changes", session_id: 7, files: [{ path: "made.txt" }], snapshot: "snap-3" });
  });

  it("shows a clash with its markers, nothing written, and a refusal", async () => {
    const t = new FakeServer();
    t.report = { written: [], unchanged: [], conflicts: [{ path: "notes.md", markers: "<<<<<<< yours\none!\n=======\none\n>>>>>>> taken back\n" }] };
    await render(t);
    await click(hunkBox(0));
    await click(q("[data-testid='review-revert']"));
    const report = q("[data-testid='apply-report']")!;
    expect(report.dataset.result).toBe("conflicts");
    expect(report.textContent).toContain("Nothing was written: 1 file was changed again since, in the same place.");
    expect(q("[data-testid='conflict-markers']")!.textContent).toContain("<<<<<<< yours");
    expect(q("[data-testid='apply-undo']")).toBeNull();
    t.revertError = "the chat changed files since the review; review its changes again";
    await click(q("[data-testid='review-revert']"));
    expect(q("[data-testid='apply-report']")!.textContent).toBe(`Could not take back: ${t.revertError}`);
  });

  it("is refused while the chat runs, saying why", async () => {
    const t = new FakeServer();
    await render(t, true);
    await click(hunkBox(0));
    const btn = q("[data-testid='review-revert']")!;
    expect(btn.getAttribute("aria-disabled")).toBe("true");
    expect(q("[data-testid='review-blocked']")!.textContent).toBe("The agent is working: take changes back once it has answered.");
    expect(btn.title).toBe("The agent is working: take changes back once it has answered.");
    await click(btn);
    expect(t.count("revert_changes")).toBe(0);
    await click(q("[data-testid='review-back']"));
    expect(back).toBe(1);
  });

  it("says when the chat changed nothing", async () => {
    const t = new FakeServer();
    t.files = [];
    await render(t);
    expect(container.textContent).toContain("No changes");
  });
});
