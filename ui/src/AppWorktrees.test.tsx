// Worktrees in the shell: "New chat in a worktree" from the sidebar (its name, the engine's
// refusal), the chat header's badge for a chat in one (its branch, its folders), the review
// opened from the badge and Back to the chat, and the sidebar's Worktrees screen.

import { act } from "react";
import { createRoot, type Root } from "react-dom/client";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { App } from "./App";
import { TransportContext } from "./app/context";
import type { CheckpointInfo, Command, SessionInfo, WorktreeInfo } from "./protocol";
import { ServerError, type ConnectionStatus } from "./transport";
import { FakeTransport } from "./test/fakeTransport";
import { settle as settleRounds } from "./test/settle";

const FOLDER = "/home/me/paper";

/** Chats and their worktrees, as the service makes them (crates/skald-service/src/chats.rs). */
class FakeServer extends FakeTransport {
  override status: ConnectionStatus | null = "open";
  override nextId = 1;
  worktrees: WorktreeInfo[] = [];
  /** What the next worktree is: a copy, or a git worktree on a branch. */
  kind: "copy" | "git" = "copy";
  checkpoints: CheckpointInfo[] = [];
  override answer(c: Command): unknown {
    switch (c.cmd) {
      case "list_sessions":
        return { cmd: c.cmd, sessions: this.sessions };
      case "create_session": {
        const id = this.nextId++;
        let dir = FOLDER;
        if (c.worktree != null) {
          const name = c.worktree.trim() || `paper-${this.worktrees.length + 1}`;
          if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,47}$/.test(name)) throw new ServerError(`\`${name}\` cannot name a worktree: use 1 to 48 letters, digits, \`.\`, \`_\` or \`-\`, starting with a letter or digit`);
          if (this.worktrees.some((w) => w.name === name)) throw new ServerError(`there is a worktree named ${name} already; discard it or choose another name`);
          dir = `/d-worktrees/${name}`;
          this.worktrees.unshift({
            id,
            name,
            session_id: id,
            source: FOLDER,
            root: dir,
            working_dir: dir,
            kind: this.kind,
            ...(this.kind === "git" ? { repo: FOLDER, branch: `skald/${name}`, base_commit: "abc" } : {}),
            status: "active",
            created_at: id,
          });
        }
        const s: SessionInfo = { id, title: "New chat", agent_id: "main", kind: "interactive", working_dir: dir, created_at: id, updated_at: id, running: false, mode: "act" };
        this.sessions.push(s);
        return { cmd: c.cmd, session: s };
      }
      case "list_worktrees":
        return { cmd: c.cmd, worktrees: this.worktrees, clean_after_days: 14 };
      case "best_of": {
        if (c.models.some((m) => m === "anthropic/claude-x")) throw new ServerError("anthropic/claude-x cannot be used: anthropic has no key; configure it in Settings");
        const trial = "paper-try1";
        const sessions = c.models.map((m, i) => {
          const id = this.nextId++;
          const letter = "abcd"[i]!;
          const name = `${trial}-${letter}`;
          this.worktrees.unshift({ id, name, session_id: id, source: FOLDER, root: `/d-worktrees/${name}`, working_dir: `/d-worktrees/${name}`, kind: "copy", status: "active", created_at: id, trial });
          const s: SessionInfo = { id, title: `${c.text} (${letter.toUpperCase()}: ${m ?? "configured model"})`, agent_id: "main", kind: "interactive", working_dir: `/d-worktrees/${name}`, created_at: id, updated_at: id, running: true, mode: "act", ...(m ? { model: m } : {}) };
          this.sessions.push(s);
          return s;
        });
        return { cmd: c.cmd, trial, sessions };
      }
      case "board":
        return { cmd: c.cmd, agents: [] };
      case "chat_changes":
        return { cmd: c.cmd, files: [], snapshot: "s" };
      case "history": {
        const s = this.sessions.find((x) => x.id === c.session_id);
        if (!s) throw new ServerError(`session ${c.session_id} does not exist`);
        return { cmd: c.cmd, session: s, messages: [], tool_calls: [], has_more: false };
      }
      case "worktree_diff":
        return { cmd: c.cmd, files: [], snapshot: "snap-0" };
      case "settings":
        return { cmd: c.cmd, models: ["openai/scripted-model"] };
      case "inbox":
        return { cmd: c.cmd, items: [] };
      case "checkpoints":
        return { cmd: c.cmd, checkpoints: this.checkpoints.filter((x) => x.session_id === c.session_id) };
      default:
        return super.answer(c);
    }
  }
}

let container: HTMLDivElement;
let root: Root;
const settle = () => settleRounds(10);

async function render(server: FakeServer) {
  container = document.createElement("div");
  document.body.appendChild(container);
  root = createRoot(container);
  await act(async () => {
    root.render(
      <TransportContext.Provider value={server}>
        <App />
      </TransportContext.Provider>,
    );
  });
  await settle();
}

const q = (sel: string) => container.querySelector(sel) as HTMLElement | null;

async function click(sel: string) {
  const el = q(sel);
  expect(el, `${sel} is on the page`).not.toBeNull();
  await act(async () => el!.click());
  await settle();
}

async function type(sel: string, value: string) {
  const input = q(sel) as HTMLInputElement;
  await act(async () => {
    Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value")!.set!.call(input, value);
    input.dispatchEvent(new Event("input", { bubbles: true }));
  });
}

beforeEach(() => localStorage.clear());
afterEach(async () => {
  await act(async () => root.unmount());
  container.remove();
});

describe("a new chat in a worktree", () => {
  it("the sidebar's button opens a form with the name in focus; Escape closes it", async () => {
    const server = new FakeServer();
    await render(server);
    const button = q("[data-testid='new-session-worktree']")!;
    expect(button.getAttribute("aria-label")).toBe("New chat in a worktree…");
    expect(button.getAttribute("aria-expanded")).toBe("false");
    await click("[data-testid='new-session-worktree']");
    expect(button.getAttribute("aria-expanded")).toBe("true");
    expect(document.activeElement).toBe(q("[data-testid='worktree-name']"));
    await act(async () => {
      q("[data-testid='worktree-name']")!.dispatchEvent(new KeyboardEvent("keydown", { key: "Escape", bubbles: true }));
    });
    expect(q("[data-testid='worktree-form']")).toBeNull();
    expect(document.activeElement).toBe(button);
    expect(server.count("create_session")).toBe(0);
  });

  it("with no name, makes one after the folder; the chat's header shows its badge", async () => {
    const server = new FakeServer();
    await render(server);
    await click("[data-testid='new-session-worktree']");
    await click("[data-testid='worktree-create']");
    expect(server.sent("create_session")).toEqual([{ cmd: "create_session", worktree: "" }]);
    expect(q("[data-testid='worktree-form']")).toBeNull();
    expect(q("[data-testid='message-list'][data-loaded='1']")).not.toBeNull();
    const badge = q("[data-testid='worktree-badge']")!;
    expect(badge.textContent).toBe("worktree: paper-1");
    expect(badge.title).toContain("Its folder: /d-worktrees/paper-1");
    expect(badge.title).toContain(`Your folder: ${FOLDER}`);
    // A plain new chat has none.
    await click("[data-testid='new-session']");
    expect(server.sent("create_session")[1]).toEqual({ cmd: "create_session" });
    expect(q("[data-testid='worktree-badge']")).toBeNull();
  });

  it("a git worktree's badge names its branch", async () => {
    const server = new FakeServer();
    server.kind = "git";
    await render(server);
    await click("[data-testid='new-session-worktree']");
    await type("[data-testid='worktree-name']", "fix-build");
    await click("[data-testid='worktree-create']");
    expect(server.sent("create_session")).toEqual([{ cmd: "create_session", worktree: "fix-build" }]);
    const badge = q("[data-testid='worktree-badge']")!;
    expect(badge.textContent).toBe("worktree: fix-build· skald/fix-build");
    expect(badge.title).toContain("git branch skald/fix-build");
  });

  it("shows the engine's refusal in the form, which keeps the name", async () => {
    const server = new FakeServer();
    await render(server);
    await click("[data-testid='new-session-worktree']");
    await type("[data-testid='worktree-name']", "paper");
    await click("[data-testid='worktree-create']");
    await click("[data-testid='new-session-worktree']");
    await type("[data-testid='worktree-name']", "paper");
    await click("[data-testid='worktree-create']");
    expect(q("[data-testid='worktree-form-error']")!.textContent).toBe("Could not make the worktree: there is a worktree named paper already; discard it or choose another name");
    expect((q("[data-testid='worktree-name']") as HTMLInputElement).value).toBe("paper");
    await type("[data-testid='worktree-name']", "-bad");
    await click("[data-testid='worktree-create']");
    expect(q("[data-testid='worktree-form-error']")!.textContent).toContain("`-bad` cannot name a worktree");
    expect(server.sessions).toHaveLength(1);
  });
});

describe("a chat's worktree in the shell", () => {
  it("the badge opens the review, Back returns to the chat; the sidebar's Worktrees lists them", async () => {
    const server = new FakeServer();
    await render(server);
    await click("[data-testid='new-session-worktree']");
    await click("[data-testid='worktree-create']");
    await click("[data-testid='worktree-badge']");
    expect(q("[data-testid='worktree-review']")!.dataset.worktree).toBe("paper-1");
    expect(server.sent("worktree_diff")).toEqual([{ cmd: "worktree_diff", name: "paper-1" }]);
    expect(q("[data-testid='review-back']")!.getAttribute("aria-label")).toBe("Back to the chat");
    await click("[data-testid='review-back']");
    expect(q("[data-testid='worktree-review']")).toBeNull();
    expect(q("[data-testid='worktree-badge']")).not.toBeNull();

    // The review left open, the sidebar's Worktrees shows the list.
    await click("[data-testid='worktree-badge']");
    await click("[data-testid='nav-worktrees']");
    expect(q("[data-testid='worktree-review']")).toBeNull();
    expect(q("[data-testid='worktree-row'][data-worktree='paper-1']")).not.toBeNull();
    await click("[data-testid='worktree-row'] [data-testid='worktree-open-review']");
    expect(q("[data-testid='review-back']")!.getAttribute("aria-label")).toBe("Back to the worktrees");
    await click("[data-testid='review-back']");
    expect(q("[data-testid='worktree-list']")).not.toBeNull();
    await click("[data-testid='worktree-chat']");
    expect(q("[data-testid='worktree-badge']")).not.toBeNull();
  });

  it("a chat made elsewhere in a worktree gets its badge once the chats list has it", async () => {
    const server = new FakeServer();
    await render(server);
    await click("[data-testid='new-session']");
    expect(q("[data-testid='worktree-badge']")).toBeNull();
    // `skald exec --worktree` made one meanwhile: the chat's `done` reloads the chats.
    server.worktrees = [{ id: 9, name: "cli-1", session_id: 1, source: FOLDER, root: "/x", working_dir: "/x", kind: "copy", status: "active", created_at: 9 }];
    server.sessions.push({ ...server.sessions[0]!, id: 2, title: "From the CLI" });
    await act(async () => server.emit(1, { type: "done", session_id: 1, outcome: "final", text: "" }));
    await settle();
    expect(q("[data-testid='worktree-badge']")!.textContent).toBe("worktree: cli-1");
  });
});

const dq = (sel: string) => document.querySelector(sel) as HTMLElement | null;

async function typeIn(el: HTMLElement | null, value: string) {
  const proto = el instanceof HTMLTextAreaElement ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
  await act(async () => {
    Object.getOwnPropertyDescriptor(proto, "value")!.set!.call(el, value);
    el!.dispatchEvent(new Event("input", { bubbles: true }));
  });
}

async function press(key: string, init: KeyboardEventInit = {}) {
  await act(async () => {
    (document.activeElement ?? document.body).dispatchEvent(new KeyboardEvent("keydown", { key, bubbles: true, cancelable: true, ...init }));
  });
  await settle();
}

describe("best of N in the shell", () => {
  it("the sidebar's button opens the dialog; started, the trial opens side by side and its chats join the list", async () => {
    const server = new FakeServer();
    await render(server);
    const button = q("[data-testid='new-best-of']")!;
    expect(button.getAttribute("aria-label")).toBe("Best of N…");
    await click("[data-testid='new-best-of']");
    expect(dq("[data-testid='best-of-dialog']")).not.toBeNull();
    // Cancelled, the focus goes back to the button.
    await act(async () => dq("[data-testid='best-of-cancel']")!.click());
    await settle();
    expect(dq("[data-testid='best-of-dialog']")).toBeNull();
    expect(document.activeElement).toBe(button);

    await click("[data-testid='new-best-of']");
    await typeIn(dq("[data-testid='best-of-text']"), "Write the intro");
    await act(async () => dq("[data-testid='best-of-start']")!.click());
    await settle();
    expect(server.sent("best_of")).toEqual([{ cmd: "best_of", text: "Write the intro", models: [null, null] }]);
    expect(dq("[data-testid='best-of-dialog']")).toBeNull();
    expect(q("[data-testid='trial-view']")!.dataset.trial).toBe("paper-try1");
    expect([...container.querySelectorAll<HTMLElement>("[data-testid='trial-column']")].map((c) => c.dataset.worktree)).toEqual(["paper-try1-a", "paper-try1-b"]);
    expect(container.querySelectorAll("[data-testid='session-item']")).toHaveLength(2);
    expect(container.querySelectorAll("[data-testid='session-item'] .dot-running")).toHaveLength(2);
    expect(q("[data-testid='trial-back']")!.getAttribute("aria-label")).toBe("Back to the chat");

    // A column's review goes back to the trial; the trial back to where it was opened from.
    await click("[data-testid='trial-column'] [data-testid='trial-review']");
    expect(q("[data-testid='worktree-review']")!.dataset.worktree).toBe("paper-try1-a");
    expect(q("[data-testid='review-back']")!.getAttribute("aria-label")).toBe("Back to the agents side by side");
    await click("[data-testid='review-back']");
    expect(q("[data-testid='trial-view']")).not.toBeNull();
    await click("[data-testid='trial-back']");
    expect(q("[data-testid='trial-view']")).toBeNull();
    expect(q("[data-testid='message-list']")).not.toBeNull();
  });

  it("from the palette; a refusal stays in the dialog; a trial chat's badge opens the trial", async () => {
    const server = new FakeServer();
    await render(server);
    await press("k", { ctrlKey: true });
    const entry = [...document.querySelectorAll<HTMLElement>("[data-testid='palette'] [role='option']")].find((o) => o.textContent?.includes("Best of N…"));
    expect(entry).toBeDefined();
    await act(async () => entry!.click());
    await settle();
    await typeIn(dq("[data-testid='best-of-text']"), "Fix it");
    const select = document.querySelectorAll<HTMLSelectElement>("[data-testid='best-of-model']")[1]!;
    await act(async () => {
      select.value = "typed";
      select.dispatchEvent(new Event("change", { bubbles: true }));
    });
    await typeIn(dq("[data-testid='best-of-typed']"), "anthropic/claude-x");
    await act(async () => dq("[data-testid='best-of-start']")!.click());
    await settle();
    expect(dq("[data-testid='best-of-error']")!.textContent).toContain("anthropic has no key");
    expect(server.worktrees).toHaveLength(0);
    await typeIn(dq("[data-testid='best-of-typed']"), "openai/o3-mini");
    await act(async () => dq("[data-testid='best-of-start']")!.click());
    await settle();
    expect(q("[data-testid='trial-view']")).not.toBeNull();
    // Agent B's chat: its badge says it is one of a trial, and opens the trial.
    await click("[data-testid='trial-column'][data-worktree='paper-try1-b'] [data-testid='trial-open-chat']");
    const badge = q("[data-testid='worktree-badge']")!;
    expect(badge.dataset.trial).toBe("paper-try1");
    expect(badge.title).toContain("agent B of best-of trial paper-try1");
    await click("[data-testid='worktree-badge']");
    expect(q("[data-testid='trial-view']")!.dataset.trial).toBe("paper-try1");
  });
});

describe("a chat's own changes in the shell", () => {
  const checkpoint = (session_id: number, total: number): CheckpointInfo => ({
    id: session_id * 10,
    session_id,
    tool_call_id: "c1",
    kind: "call",
    folder: FOLDER,
    before: "b",
    after: "a",
    changes: { files: [{ path: "notes.md", status: "modified", added: 1, removed: 1, binary: false }], total },
    note: "",
    restored_to: null,
    created_at: 1,
  });

  it("a chat with changes of its own offers Review changes, which opens its review and comes back", async () => {
    const server = new FakeServer();
    await render(server);
    await click("[data-testid='new-session']");
    expect(q("[data-testid='chat-changes-open']")).toBeNull();
    await act(async () => server.emit(1, { type: "checkpoint", checkpoint: checkpoint(1, 1) }));
    await settle();
    await click("[data-testid='chat-changes-open']");
    expect(q("[data-testid='changes-review']")!.dataset.session).toBe("1");
    expect(server.sent("chat_changes")).toEqual([{ cmd: "chat_changes", session_id: 1 }]);
    await click("[data-testid='review-back']");
    expect(q("[data-testid='changes-review']")).toBeNull();
    expect(q("[data-testid='message-list']")).not.toBeNull();
  });

  it("a chat in a worktree has its worktree's review instead", async () => {
    const server = new FakeServer();
    await render(server);
    await click("[data-testid='new-session-worktree']");
    await click("[data-testid='worktree-create']");
    await act(async () => server.emit(1, { type: "checkpoint", checkpoint: checkpoint(1, 1) }));
    await settle();
    expect(q("[data-testid='worktree-badge']")).not.toBeNull();
    expect(q("[data-testid='chat-changes-open']")).toBeNull();
  });
});

