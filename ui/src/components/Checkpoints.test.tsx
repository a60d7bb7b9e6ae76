// The chat's checkpoint cards: the changed-files line under a tool call, its diff, the
// restore with its confirm dialog, a restore's own line, and names shown as text.

import { act, useMemo, useRef, useState } from "react";
import { createRoot, type Root } from "react-dom/client";
import { afterEach, describe, expect, it } from "vitest";
import { AppContext, TransportContext } from "../app/context";
import type { ToolView } from "../chat/state";
import type { CheckpointInfo, Command, SessionInfo } from "../protocol";
import { ServerError } from "../transport";
import { fakeApp } from "../test/fakeApp";
import { FakeTransport } from "../test/fakeTransport";
import { settle } from "../test/settle";
import { ChatRow, ExpandedContext, type Expanded } from "./ChatItems";
import { CheckpointActions } from "./Checkpoints";

const app = fakeApp();

const DIFF = `diff --git a/notes.md b/notes.md
index 3b18e51..a042389 100644
--- a/notes.md
+++ b/notes.md
@@ -1,2 +1,2 @@
 first line
-second line, old
+second line, new
diff --git a/out/made.txt b/out/made.txt
new file mode 100644
--- /dev/null
+++ b/out/made.txt
@@ -0,0 +1 @@
+made
`;

/** The new chat a rewind makes. */
const FORK: SessionInfo = { id: 2, title: "Thesis (rewound)", agent_id: "main", kind: "interactive", working_dir: "/home/me/thesis", created_at: 5, updated_at: 5, running: false, mode: "act" };

/** Answers the checkpoint commands; records each call. */
class FakeServer extends FakeTransport {
  restoreError: string | null = null;
  override answer(c: Command): unknown {
    switch (c.cmd) {
      case "checkpoint_diff":
        return { cmd: c.cmd, text: c.path === "notes.md" ? DIFF.split("diff --git a/out")[0] : DIFF };
      case "restore_checkpoint":
        if (this.restoreError) throw new ServerError(this.restoreError);
        return { cmd: c.cmd, checkpoint: checkpoint({ id: 9, kind: "restore", tool_call_id: null, restored_to: c.id }), fork: c.rewind ? FORK : null };
      default:
        return super.answer(c);
    }
  }
}

function checkpoint(over: Partial<CheckpointInfo> = {}): CheckpointInfo {
  return {
    id: 4,
    session_id: 1,
    tool_call_id: "w1",
    kind: "call",
    folder: "/home/me/thesis",
    before: "b4",
    after: "a4",
    changes: {
      files: [
        { path: "notes.md", status: "modified", added: 1, removed: 1, binary: false },
        { path: "out/made.txt", status: "added", added: 1, removed: 0, binary: false },
      ],
      total: 2,
    },
    note: "",
    restored_to: null,
    created_at: 1,
    ...over,
  };
}

function tool(cp: CheckpointInfo | null): ToolView {
  return {
    id: "w1",
    name: "write_file",
    arguments: { path: "notes.md" },
    labelShort: "write notes.md",
    labelFull: "write /home/me/thesis/notes.md",
    path: null,
    status: "done",
    result: "ok",
    inboxId: null,
    approval: null,
    question: null,
    progress: null,
    checkpoint: cp,
    hooks: [],
  };
}

/** The chat's expanded-set, as MessageList keeps it. */
function Rows({ children }: { children: React.ReactNode }) {
  const set = useRef(new Set<string>());
  const [v, setV] = useState(0);
  const expanded = useMemo<Expanded>(
    () => ({
      has: (k) => set.current.has(k),
      toggle: (k) => {
        if (!set.current.delete(k)) set.current.add(k);
        setV((x) => x + 1);
      },
    }),
    [v],
  );
  return <ExpandedContext.Provider value={expanded}>{children}</ExpandedContext.Provider>;
}

let container: HTMLDivElement;
let root: Root;
let restored: CheckpointInfo[];
let forks: SessionInfo[];

async function render(t: FakeServer, ui: React.ReactNode) {
  container = document.createElement("div");
  document.body.appendChild(container);
  root = createRoot(container);
  restored = [];
  forks = [];
  await rerender(t, ui);
}

async function rerender(t: FakeServer, ui: React.ReactNode) {
  await act(async () => {
    root.render(
      <TransportContext.Provider value={t}>
        <AppContext.Provider value={app}>
          <CheckpointActions.Provider value={{ restored: (c) => restored.push(c), forked: (s) => forks.push(s) }}>
            <Rows>{ui}</Rows>
          </CheckpointActions.Provider>
        </AppContext.Provider>
      </TransportContext.Provider>,
    );
  });
}

/** Queries the whole document: the confirm dialog is in a portal. */
const q = (sel: string) => document.querySelector(sel) as HTMLElement | null;
const qa = (sel: string) => [...document.querySelectorAll<HTMLElement>(sel)];

async function click(sel: string) {
  const el = q(sel);
  expect(el, `${sel} is on the page`).not.toBeNull();
  await act(async () => el!.click());
  await settle();
}

afterEach(async () => {
  await act(async () => root.unmount());
  container.remove();
});

const card = (cp: CheckpointInfo | null) => <ChatRow item={{ kind: "tool", key: "t-w1", tool: tool(cp) }} onToggleGroup={() => {}} />;

describe("the changed files under a tool call", () => {
  it("says what the call changed and expands to its files", async () => {
    const t = new FakeServer();
    await render(t, card(checkpoint()));
    const summary = q("[data-testid='checkpoint-summary']")!;
    expect(summary.textContent).toBe("2 files changed: notes.md +1 −1, out/made.txt (new)");
    expect(summary.getAttribute("aria-expanded")).toBe("false");
    expect(q("[data-testid='checkpoint-files']")).toBeNull();
    await click("[data-testid='checkpoint-summary']");
    expect(summary.getAttribute("aria-expanded")).toBe("true");
    expect(qa("[data-testid='checkpoint-file']").map((b) => [b.dataset.status, b.querySelector(".checkpoint-path")!.textContent])).toEqual([
      ["modified", "notes.md"],
      ["added", "out/made.txt"],
    ]);
  });

  it("shows a file's diff with added and removed lines coloured, and the whole diff", async () => {
    const t = new FakeServer();
    await render(t, card(checkpoint()));
    await click("[data-testid='checkpoint-summary']");
    await click("[data-testid='checkpoint-file'][data-status='modified']");
    expect(t.commands).toContainEqual({ cmd: "checkpoint_diff", id: 4, path: "notes.md" });
    const diff = q("[data-testid='checkpoint-diff']")!;
    expect(diff).not.toBeNull();
    expect(qa(".diff-del .code").map((e) => e.textContent)).toEqual(["second line, old"]);
    expect(qa(".diff-add .code").map((e) => e.textContent)).toEqual(["second line, new"]);
    expect(qa(".diff-ctx .code").map((e) => e.textContent)).toEqual(["first line"]);
    expect(qa(".diff-file").map((e) => e.textContent)).toEqual(["diff --git a/notes.md b/notes.md"]);
    expect(q(".diff-hunk")!.textContent).toBe("@@ -1,2 +1,2 @@");
    // The diff is text in a monospace, scrolling box, never markup.
    expect(diff.className).toContain("diff");

    await click("[data-testid='checkpoint-show-diff']");
    expect(t.commands).toContainEqual({ cmd: "checkpoint_diff", id: 4 });
    expect(qa(".diff-add .code").map((e) => e.textContent)).toEqual(["second line, new", "made"]);
    expect(q("[data-testid='checkpoint-show-diff']")!.textContent).toBe("Hide diff");
  });

  it("restores after a confirm that says what happens; Escape cancels", async () => {
    const t = new FakeServer();
    await render(t, card(checkpoint()));
    await click("[data-testid='checkpoint-restore']");
    const dialog = q("[data-testid='restore-dialog']")!;
    expect(dialog).not.toBeNull();
    expect(dialog.getAttribute("role")).toBe("alertdialog");
    expect(dialog.textContent).toContain("write notes.md");
    expect(dialog.textContent).toContain("every later call");
    expect(dialog.textContent).toContain("you can undo it");
    expect(document.activeElement).toBe(q("[data-testid='restore-dialog-cancel']"));
    await act(async () => {
      dialog.dispatchEvent(new KeyboardEvent("keydown", { key: "Escape", bubbles: true }));
    });
    expect(q("[data-testid='restore-dialog']")).toBeNull();
    expect(document.activeElement).toBe(q("[data-testid='checkpoint-restore']"));
    expect(t.commands.some((c) => c.cmd === "restore_checkpoint")).toBe(false);

    await click("[data-testid='checkpoint-restore']");
    await click("[data-testid='restore-dialog-confirm']");
    expect(q("[data-testid='restore-dialog']")).toBeNull();
    expect(t.commands).toContainEqual({ cmd: "restore_checkpoint", id: 4 });
    expect(restored.map((c) => [c.id, c.kind, c.restored_to])).toEqual([[9, "restore", 4]]);
  });

  it("offers to rewind the conversation too, unchecked: a plain restore sends no rewind", async () => {
    const t = new FakeServer();
    await render(t, card(checkpoint()));
    await click("[data-testid='checkpoint-restore']");
    const box = q("[data-testid='restore-dialog-rewind']") as HTMLInputElement;
    expect(box).not.toBeNull();
    expect(box.type).toBe("checkbox");
    expect(box.checked).toBe(false);
    expect(box.closest("label")!.textContent).toBe("Also rewind the conversation to before this call");
    const hint = document.getElementById(box.getAttribute("aria-describedby")!)!;
    expect(hint.textContent).toBe("You continue in a new chat; this chat keeps every message.");
    expect(q("[data-testid='restore-dialog-confirm']")!.textContent).toBe("Restore");
    await click("[data-testid='restore-dialog-confirm']");
    const sent = t.commands.filter((c) => c.cmd === "restore_checkpoint");
    expect(sent).toHaveLength(1);
    expect("rewind" in sent[0]!).toBe(false);
    expect(forks).toEqual([]);
  });

  it("with the box checked, sends rewind and hands the new chat on", async () => {
    const t = new FakeServer();
    await render(t, card(checkpoint()));
    await click("[data-testid='checkpoint-restore']");
    await click("[data-testid='restore-dialog-rewind']");
    expect((q("[data-testid='restore-dialog-rewind']") as HTMLInputElement).checked).toBe(true);
    expect(q("[data-testid='restore-dialog-confirm']")!.textContent).toBe("Restore and rewind");
    await click("[data-testid='restore-dialog-confirm']");
    expect(t.commands.filter((c) => c.cmd === "restore_checkpoint")).toEqual([{ cmd: "restore_checkpoint", id: 4, rewind: true }]);
    expect(restored.map((c) => c.id)).toEqual([9]);
    expect(forks).toEqual([FORK]);

    // Opened again, the box starts unchecked.
    await click("[data-testid='checkpoint-restore']");
    expect((q("[data-testid='restore-dialog-rewind']") as HTMLInputElement).checked).toBe(false);
  });

  it("keeps the rewind box in the dialog's Tab order", async () => {
    const t = new FakeServer();
    await render(t, card(checkpoint()));
    await click("[data-testid='checkpoint-restore']");
    const dialog = q("[data-testid='restore-dialog']")!;
    const tab = async (shiftKey = false) =>
      act(async () => {
        dialog.dispatchEvent(new KeyboardEvent("keydown", { key: "Tab", shiftKey, bubbles: true, cancelable: true }));
      });
    // Cancel has the focus; from the last button Tab wraps to the box, Shift+Tab back.
    q("[data-testid='restore-dialog-confirm']")!.focus();
    await tab();
    expect(document.activeElement).toBe(q("[data-testid='restore-dialog-rewind']"));
    await tab(true);
    expect(document.activeElement).toBe(q("[data-testid='restore-dialog-confirm']"));
  });

  it("shows a failed restore on the card", async () => {
    const t = new FakeServer();
    t.restoreError = "the chat's turn is running; stop it before restoring its folder";
    await render(t, card(checkpoint()));
    await click("[data-testid='checkpoint-restore']");
    await click("[data-testid='restore-dialog-confirm']");
    expect(q("[data-testid='checkpoint-error']")!.textContent).toBe("Could not restore: the chat's turn is running; stop it before restoring its folder");
    expect(restored).toEqual([]);
  });

  it("updates when the checkpoint arrives after the call", async () => {
    const t = new FakeServer();
    await render(t, card(null));
    expect(q("[data-testid='checkpoint']")).toBeNull();
    await rerender(t, card(checkpoint()));
    expect(q("[data-testid='checkpoint-summary']")!.textContent).toMatch(/^2 files changed/);
  });

  it("shows a checkpoint that could not be taken as a note, with no restore", async () => {
    const t = new FakeServer();
    const note = "The folder is too large to checkpoint: more than 50000 files (the limit is `[checkpoints] max_files` in config.toml)";
    await render(t, card(checkpoint({ before: null, after: null, changes: { files: [], total: 0 }, note })));
    expect(q("[data-testid='checkpoint-note']")!.textContent).toBe(note);
    expect(q("[data-testid='checkpoint-restore']")).toBeNull();
    expect(q("[data-testid='checkpoint-summary']")).toBeNull();
  });

  it("shows a hostile file name as text", async () => {
    const t = new FakeServer();
    const name = "<img src=x onerror=alert(1)>.md";
    await render(
      t,
      card(checkpoint({ changes: { files: [{ path: name, status: "added", added: 1, removed: 0, binary: false }, { path: "a\u202egnp.exe", status: "added", added: 0, removed: 0, binary: true }], total: 2 } })),
    );
    await click("[data-testid='checkpoint-summary']");
    expect(container.querySelector("img")).toBeNull();
    expect(q("[data-testid='checkpoint-summary']")!.textContent).toContain(`${name} (new)`);
    expect(qa("[data-testid='checkpoint-file'] .checkpoint-path").map((e) => e.textContent)).toEqual([name, "a\\u{202e}gnp.exe"]);
  });
});

describe("a restore in the chat", () => {
  const line = (over: Partial<CheckpointInfo> = {}, extra: { target?: string | null; undoes?: boolean; undone?: boolean } = {}) => (
    <ChatRow
      item={{ kind: "restore", key: "r9", checkpoint: checkpoint({ id: 9, kind: "restore", tool_call_id: null, restored_to: 4, ...over }), target: "write notes.md", undoes: false, undone: false, ...extra }}
      onToggleGroup={() => {}}
    />
  );

  it("says what it went back to and undoes it with one click", async () => {
    const t = new FakeServer();
    await render(t, line());
    expect(q("[data-testid='restore-line']")!.textContent).toContain("Folder restored to before write notes.md — 2 files changed");
    await click("[data-testid='restore-line'] [data-testid='checkpoint-summary']");
    expect(qa("[data-testid='checkpoint-file']")).toHaveLength(2);
    await click("[data-testid='restore-undo']");
    // Undoing a restore asks nothing and never rewinds the conversation.
    expect(q("[data-testid='restore-dialog']")).toBeNull();
    expect(t.commands.filter((c) => c.cmd === "restore_checkpoint")).toStrictEqual([{ cmd: "restore_checkpoint", id: 9 }]);
    expect(forks).toEqual([]);
  });

  it("an undone restore offers no undo; an undo says so", async () => {
    const t = new FakeServer();
    await render(t, line({}, { undone: true }));
    expect(q("[data-testid='restore-undo']")).toBeNull();
    expect(q("[data-testid='restore-line']")!.textContent).toContain("undone");
    await rerender(t, line({ restored_to: 8 }, { target: null, undoes: true }));
    expect(q("[data-testid='restore-text']")!.textContent).toBe("Restore undone — ");
    expect(q("[data-testid='restore-undo']")!.textContent).toBe("Redo restore");
  });
});
