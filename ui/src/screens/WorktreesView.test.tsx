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
  /** Worktrees whose discard is refused, with the reason. */
  refusals: Record<string, string> = {};
  override answer(c: Command): unknown {
    if (c.cmd === "discard_worktree") {
      if (this.discardError) throw new ServerError(this.discardError);
      if (this.refusals[c.name]) throw new ServerError(this.refusals[c.name]!);
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
    openTrial: (trial) => events.push(`trial ${trial}`),
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

const DAY = 24 * 3600 * 1000;

describe("disk use and cleaning up", () => {
  const now = Date.now();
  const OLD = [
    worktree({ id: 2, name: "fix-build", session_id: 5, kind: "git", repo: "/home/me/code", branch: "skald/fix-build", source: "/home/me/code", last_used_at: now - 30 * DAY, disk_bytes: 2_500_000 }),
    worktree({ id: 3, name: "essay-1", session_id: 6, last_used_at: now - 20 * DAY, disk_bytes: 1_200_000_000 }),
    worktree({ id: 4, name: "notes-1", session_id: null, last_used_at: now - 15 * DAY, disk_bytes: 40_000 }),
    worktree({ id: 5, name: "paper-1", last_used_at: now - 60_000, disk_bytes: 7_000 }),
  ];
  const rowOf = (name: string) => q(`[data-testid='worktree-row'][data-worktree='${name}']`)!;

  it("shows each worktree's size and when it was last used, and marks old ones — not one whose chat runs", async () => {
    const t = new FakeServer();
    // fix-build's chat (5) is running: never old.
    await render(t, { worktrees: OLD, cleanAfterDays: 14 });
    expect(rowOf("paper-1").querySelector("[data-testid='worktree-use']")!.textContent).toBe("7.0 kB · used today");
    expect(rowOf("essay-1").querySelector("[data-testid='worktree-use']")!.textContent).toBe("1.2 GB · unused for 20 days");
    expect(qa("[data-testid='worktree-row'][data-old='1']").map((r) => r.dataset.worktree)).toEqual(["essay-1", "notes-1"]);
    expect(rowOf("essay-1").querySelector("[data-testid='worktree-old']")!.textContent).toBe("old");
    expect(rowOf("fix-build").querySelector("[data-testid='worktree-old']")).toBeNull();
    expect(q("[data-testid='cleanup-text']")!.textContent).toBe("2 worktrees unused for 14 days or more take 1.2 GB");
  });

  it("offers nothing with clean_after_days 0, or when none is old", async () => {
    const t = new FakeServer();
    await render(t, { worktrees: OLD, cleanAfterDays: 0 });
    expect(q("[data-testid='cleanup-banner']")).toBeNull();
    expect(qa("[data-testid='worktree-old']")).toHaveLength(0);
    await act(async () => root.unmount());
    container.remove();
    await render(t, { worktrees: [OLD[3]!], cleanAfterDays: 14 });
    expect(q("[data-testid='cleanup-banner']")).toBeNull();
  });

  it("cleans up only after a confirm listing them, all checked, with their sizes and the warning; only what stays checked goes", async () => {
    const t = new FakeServer();
    await render(t, { worktrees: OLD, cleanAfterDays: 14 });
    await click(q("[data-testid='cleanup-open']"));
    const dialog = q("[data-testid='cleanup-dialog']")!;
    expect(dialog.textContent).toContain("Clean up worktrees unused for 14 days or more?");
    expect(qa("[data-testid='cleanup-item']").map((i) => [i.dataset.worktree, (i.querySelector("[data-testid='cleanup-check']") as HTMLInputElement).checked])).toEqual([
      ["essay-1", true],
      ["notes-1", true],
    ]);
    expect(qa("[data-testid='cleanup-item']")[0]!.textContent).toContain("1.2 GB · unused for 20 days");
    expect(q("[data-testid='cleanup-warning']")!.textContent).toContain("Every change of their agents you have not applied is lost.");
    expect(q("[data-testid='cleanup-dialog-confirm']")!.textContent).toBe("Discard 2 (1.2 GB)");
    // Cancel discards nothing.
    await click(q("[data-testid='cleanup-dialog-cancel']"));
    expect(t.count("discard_worktree")).toBe(0);
    expect(document.activeElement).toBe(q("[data-testid='cleanup-open']"));

    await click(q("[data-testid='cleanup-open']"));
    await click(qa("[data-testid='cleanup-check']")[0]!);
    await click(qa("[data-testid='cleanup-check']")[1]!);
    const confirm = q("[data-testid='cleanup-dialog-confirm']")!;
    expect(confirm.getAttribute("aria-disabled")).toBe("true");
    await click(confirm);
    expect(t.count("discard_worktree")).toBe(0);
    await click(qa("[data-testid='cleanup-check']")[1]!);
    expect(confirm.textContent).toBe("Discard 1 (40.0 kB)");
    await click(confirm);
    expect(t.sent("discard_worktree").map((c) => c.name)).toEqual(["notes-1"]);
    expect(q("[data-testid='cleanup-dialog']")).toBeNull();
    expect(q("[data-testid='cleanup-result']")!.textContent).toBe("Discarded 1 worktree, freeing 40.0 kB.");
    expect(events.filter((e) => e === "reload")).toHaveLength(2);
  });

  it("says which could not be discarded", async () => {
    const t = new FakeServer();
    t.refusals["essay-1"] = "worktree essay-1's chat is running; stop it before discarding its worktree";
    await render(t, { worktrees: OLD, cleanAfterDays: 14 });
    await click(q("[data-testid='cleanup-open']"));
    await click(q("[data-testid='cleanup-dialog-confirm']"));
    expect(t.sent("discard_worktree").map((c) => c.name)).toEqual(["essay-1", "notes-1"]);
    const result = q("[data-testid='cleanup-result']")!;
    expect(result.textContent).toContain("Discarded 1 worktree, freeing 40.0 kB.");
    expect(result.textContent).toContain(`Could not discard essay-1: ${t.refusals["essay-1"]}`);
  });
});

describe("a best-of trial on the Worktrees screen", () => {
  it("lists its worktrees together, by letter, and opens them side by side", async () => {
    const t = new FakeServer();
    const trial = [
      worktree({ id: 7, name: "paper-try1-b", session_id: 8, trial: "paper-try1" }),
      worktree({ id: 9, name: "solo" }),
      worktree({ id: 6, name: "paper-try1-a", session_id: 7, trial: "paper-try1" }),
    ];
    await render(t, { worktrees: trial });
    const group = q("[data-testid='trial-group'][data-trial='paper-try1']")!;
    expect(group.textContent).toContain("Best of 2");
    expect([...group.querySelectorAll<HTMLElement>("[data-testid='worktree-row']")].map((r) => r.dataset.worktree)).toEqual(["paper-try1-a", "paper-try1-b"]);
    expect(group.querySelector("[aria-label='Agent A']")).not.toBeNull();
    // The trial sits where its first worktree was listed.
    expect(qa("[data-testid='worktree-list'] > li").map((li) => li.dataset.trial ?? li.dataset.worktree)).toEqual(["paper-try1", "solo"]);
    await click(group.querySelector<HTMLElement>("[data-testid='trial-open']"));
    expect(events).toEqual(["reload", "trial paper-try1"]);
  });

  it("shows the trial side by side when it is open", async () => {
    const t = new FakeServer();
    await render(t, { opened: { kind: "trial", trial: "paper-try1" } });
    expect(q("[data-testid='trial-view']")!.dataset.trial).toBe("paper-try1");
    expect(q("[data-testid='worktree-list']")).toBeNull();
  });
});

