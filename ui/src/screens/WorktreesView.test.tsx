// The Worktrees screen: every worktree with its kind and branch, the person's folder, its
// chat (opened on a click) and when it was made; Review and Discard (confirmed); the list
// read again when shown; an empty list and a failed one.

import { act } from "react";
import { createRoot, type Root } from "react-dom/client";
import { afterEach, describe, expect, it } from "vitest";
import { AppContext, TransportContext } from "../app/context";
import type { Command, SessionInfo, WorktreeInfo } from "../protocol";
import { ServerError } from "../transport";
import { fakeApp } from "../test/fakeApp";
import { FakeTransport } from "../test/fakeTransport";
import { settle } from "../test/settle";
import { WorktreesView } from "./WorktreesView";

const worktree = (over: Partial<WorktreeInfo>): WorktreeInfo => ({
  id: 1,
  name: "paper-1",
  session_id: 4,
  source: "/home/me/paper",
  root: "/home/me/.local/share/skald-worktrees/paper-1",
  working_dir: "/home/me/.local/share/skald-worktrees/paper-1",
  kind: "copy",
  status: "active",
  created_at: 1,
  ...over,
});
const LIST = [
  worktree({ id: 2, name: "fix-build", session_id: 5, kind: "git", repo: "/home/me/code", branch: "skald/fix-build", source: "/home/me/code" }),
  worktree({}),
  worktree({ id: 0, name: "orphan", session_id: null }),
];
const chat = (id: number, title: string, running = false): SessionInfo => ({ id, title, agent_id: "main", kind: "interactive", working_dir: "/w", created_at: 1, updated_at: 1, running, mode: "act" });

class FakeServer extends FakeTransport {
  discardError: string | null = null;
  override answer(c: Command): unknown {
    if (c.cmd === "discard_worktree") {
      if (this.discardError) throw new ServerError(this.discardError);
      return { cmd: c.cmd };
    }
    return super.answer(c);
  }
}

let container: HTMLDivElement;
let root: Root;
let events: string[];

async function render(t: FakeServer, props: Partial<Parameters<typeof WorktreesView>[0]> = {}) {
  container = document.createElement("div");
  document.body.appendChild(container);
  root = createRoot(container);
  events = [];
  const app = fakeApp({
    worktrees: LIST,
    sessions: [chat(4, "Tidy the draft"), chat(5, "Fix the build", true)],
    openSession: (id) => events.push(`open ${id}`),
    reviewWorktree: (name) => events.push(`review ${name}`),
    refreshWorktrees: () => events.push("refresh"),
  });
  await act(async () => {
    root.render(
      <TransportContext.Provider value={t}>
        <AppContext.Provider value={app}>
          <WorktreesView worktrees={LIST} error={null} onReload={() => events.push("reload")} opened={null} backLabel="Back" onCloseReview={() => events.push("close")} {...props} />
        </AppContext.Provider>
      </TransportContext.Provider>,
    );
  });
  await settle();
}

const q = (sel: string) => document.querySelector(sel) as HTMLElement | null;
const qa = (sel: string) => [...document.querySelectorAll<HTMLElement>(sel)];
const row = (name: string) => q(`[data-testid='worktree-row'][data-worktree='${name}']`)!;

async function click(el: HTMLElement | null) {
  expect(el).not.toBeNull();
  await act(async () => el!.click());
  await settle();
}

afterEach(async () => {
  await act(async () => root.unmount());
  container.remove();
});

describe("the Worktrees screen", () => {
  it("lists every worktree with its kind, branch, folder and chat, and reads the list again when shown", async () => {
    const t = new FakeServer();
    await render(t);
    expect(events).toEqual(["reload"]);
    expect(qa("[data-testid='worktree-row']").map((r) => r.dataset.worktree)).toEqual(["fix-build", "paper-1", "orphan"]);
    expect(row("fix-build").querySelector("[data-testid='worktree-kind']")!.textContent).toBe("git · skald/fix-build");
    expect(row("paper-1").querySelector("[data-testid='worktree-kind']")!.textContent).toBe("copy");
    expect(row("paper-1").textContent).toContain("Your folder: /home/me/paper");
    expect(row("paper-1").querySelector("[data-testid='worktree-chat']")!.textContent).toBe("Tidy the draft");
    // A chat at work says so.
    expect(row("fix-build").querySelector("[data-testid='worktree-chat'] .dot-running")).not.toBeNull();
    expect(row("orphan").querySelector("[data-testid='worktree-chat']")).toBeNull();
    expect(row("orphan").textContent).toContain("its chat was deleted");
  });

  it("opens a worktree's chat and its review", async () => {
    const t = new FakeServer();
    await render(t);
    await click(row("paper-1").querySelector<HTMLElement>("[data-testid='worktree-chat']"));
    await click(row("paper-1").querySelector<HTMLElement>("[data-testid='worktree-open-review']"));
    expect(events).toEqual(["reload", "open 4", "review paper-1"]);
  });

  it("discards a worktree after a confirm, and shows a refusal", async () => {
    const t = new FakeServer();
    await render(t);
    await click(row("fix-build").querySelector<HTMLElement>("[data-testid='worktree-discard']"));
    const dialog = q("[data-testid='discard-dialog']")!;
    expect(dialog.textContent).toContain("Discard worktree fix-build?");
    expect(dialog.textContent).toContain("and its branch skald/fix-build");
    await click(q("[data-testid='discard-dialog-cancel']"));
    expect(t.count("discard_worktree")).toBe(0);

    t.discardError = "worktree fix-build's chat is running; stop it before discarding its worktree";
    await click(row("fix-build").querySelector<HTMLElement>("[data-testid='worktree-discard']"));
    await click(q("[data-testid='discard-dialog-confirm']"));
    expect(row("fix-build").querySelector("[data-testid='worktree-error']")!.textContent).toBe(`Could not discard: ${t.discardError}`);

    t.discardError = null;
    await click(row("paper-1").querySelector<HTMLElement>("[data-testid='worktree-discard']"));
    await click(q("[data-testid='discard-dialog-confirm']"));
    expect(t.sent("discard_worktree").map((c) => c.name)).toEqual(["fix-build", "paper-1"]);
    expect(events).toEqual(["reload", "refresh"]);
  });

  it("says when there is none, and when the list cannot be read", async () => {
    const t = new FakeServer();
    await render(t, { worktrees: [] });
    expect(container.textContent).toContain("No worktrees");
    await act(async () => root.unmount());
    container.remove();
    await render(t, { worktrees: null, error: "the store is locked" });
    expect(q("[role='alert']")!.textContent).toContain("Could not list the worktrees: the store is locked");
    await click(q("[role='alert'] button"));
    expect(events).toEqual(["reload", "reload"]);
  });

  it("shows the review of the worktree under review instead", async () => {
    const t = new FakeServer();
    await render(t, { opened: { kind: "review", name: "paper-1" } });
    expect(q("[data-testid='worktree-review']")!.dataset.worktree).toBe("paper-1");
    expect(q("[data-testid='worktree-list']")).toBeNull();
    expect(t.sent("worktree_diff")).toEqual([{ cmd: "worktree_diff", name: "paper-1" }]);
  });
});
