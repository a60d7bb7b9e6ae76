// The chat header's context view: the AGENTS.md chip, its panel (the project root, each
// file with whose it is, its size and why it was cut or not read, the skills), the empty
// state, live updates from a turn's `context` event, focus and Escape, names shown as
// text, and a project's hooks file waiting for approval (the chip's dot, Approve).

import { act, useState } from "react";
import { createRoot, type Root } from "react-dom/client";
import { afterEach, describe, expect, it } from "vitest";
import { AppContext, TransportContext } from "../app/context";
import type { Command, TurnContext } from "../protocol";
import { ServerError } from "../transport";
import { fakeApp } from "../test/fakeApp";
import { FakeTransport } from "../test/fakeTransport";
import { settle } from "../test/settle";
import { ContextButton } from "./ContextView";

let opened: string[] = [];
const app = fakeApp({
  openViewer(path) {
    opened.push(path);
  },
});

const CUT = "cut to 1200 of 40000 bytes: the AGENTS.md files together are limited to 32 KiB";
const LINK = "not read: it is a link to a file outside the project";

const PAPER: TurnContext = {
  project_root: "/home/me/paper",
  instructions: [
    { path: "/home/me/.config/skald/AGENTS.md", source: "user", bytes: 120, included: 120, note: "" },
    { path: "/home/me/paper/AGENTS.md", source: "project", bytes: 40_000, included: 1200, note: CUT },
    { path: "/home/me/paper/chapters/AGENTS.md", source: "project", bytes: 2100, included: 2100, note: "" },
  ],
  skills: [
    { name: "release", description: "Cut a release", path: "/home/me/paper/.agents/skills/release/SKILL.md", source: "project" },
    { name: "notes", description: "Keep notes", path: "/home/me/.agents/skills/notes/SKILL.md", source: "user" },
  ],
};

const EMPTY: TurnContext = { project_root: "/home/me/scratch", instructions: [], skills: [] };

/** Answers `session_context` with `context` (or fails, or waits); records each call; pushes events. */
class FakeServer extends FakeTransport {
  context: TurnContext = PAPER;
  error: string | null = null;
  /** Replies held back until released, when set. */
  held: ((reply: unknown) => void)[] | null = null;
  /** What `approve_hooks` answers: an error, or the context with the hooks approved. */
  approveError: string | null = null;
  override answer(c: Command): unknown {
    if (c.cmd === "approve_hooks") {
      if (this.approveError) throw new ServerError(this.approveError);
      const h = this.context.project_hooks!;
      this.context = { ...this.context, project_hooks: { ...h, approved: true } };
      return { cmd: c.cmd, context: this.context };
    }
    if (c.cmd !== "session_context") return super.answer(c);
    if (this.error) throw new ServerError(this.error);
    const reply = { cmd: c.cmd, context: this.context };
    if (this.held) {
      const held = this.held;
      return new Promise((ok) => held.push(() => ok(reply)));
    }
    return reply;
  }
}

let container: HTMLDivElement;
let root: Root;

/** Opens and closes the panel from outside, as the shell's shortcut and palette do. */
let setOpenFromOutside: (open: boolean) => void = () => {};
function Controlled({ sessionId }: { sessionId: number }) {
  const [open, setOpen] = useState(false);
  setOpenFromOutside = setOpen;
  return <ContextButton sessionId={sessionId} open={open} onOpenChange={setOpen} />;
}

async function render(t: FakeServer, sessionId = 1, controlled = false) {
  opened = [];
  container = document.createElement("div");
  document.body.appendChild(container);
  root = createRoot(container);
  await act(async () => {
    root.render(
      <TransportContext.Provider value={t}>
        <AppContext.Provider value={app}>
          {controlled ? <Controlled sessionId={sessionId} /> : <ContextButton sessionId={sessionId} />}
          <button type="button" data-testid="elsewhere">
            elsewhere
          </button>
        </AppContext.Provider>
      </TransportContext.Provider>,
    );
  });
  await settle();
}

const q = (sel: string) => document.querySelector(sel) as HTMLElement | null;
const qa = (sel: string) => [...document.querySelectorAll<HTMLElement>(sel)];
const chip = () => q("[data-testid='context-chip']")!;
const panel = () => q("[data-testid='context-panel']");
const contextCalls = (t: FakeServer) => t.commands.filter((c) => c.cmd === "session_context");

async function click(sel: string) {
  const el = q(sel);
  expect(el, `${sel} is on the page`).not.toBeNull();
  await act(async () => el!.click());
  await settle();
}

async function key(el: HTMLElement, k: string) {
  await act(async () => {
    el.dispatchEvent(new KeyboardEvent("keydown", { key: k, bubbles: true, cancelable: true }));
  });
  await settle();
}

afterEach(async () => {
  await act(async () => root.unmount());
  container.remove();
});

describe("the context chip", () => {
  it("asks for the chat's context and counts the AGENTS.md files given, warning of a cut one", async () => {
    const t = new FakeServer();
    await render(t, 7);
    expect(contextCalls(t)).toEqual([{ cmd: "session_context", session_id: 7 }]);
    expect(chip().textContent).toBe("AGENTS.md ×3");
    expect(chip().dataset.count).toBe("3");
    expect(chip().classList.contains("warn")).toBe(true);
    expect(chip().getAttribute("aria-expanded")).toBe("false");
    expect(chip().getAttribute("aria-haspopup")).toBe("dialog");
    expect(chip().getAttribute("aria-label")).toBe("Given to the agent: 3 AGENTS.md files and 2 skills; 1 file cut or not read. Show the context (Ctrl+Shift+X)");
    expect(panel()).toBeNull();
  });

  it("opens a panel listing the project root, the files in order and the skills", async () => {
    const t = new FakeServer();
    await render(t);
    await click("[data-testid='context-chip']");
    expect(panel()).not.toBeNull();
    expect(chip().getAttribute("aria-expanded")).toBe("true");
    expect(panel()!.getAttribute("role")).toBe("dialog");
    expect(document.getElementById(panel()!.getAttribute("aria-labelledby")!)!.textContent).toBe("Context");
    // Opening reads it again.
    expect(contextCalls(t)).toHaveLength(2);
    expect(document.activeElement).toBe(panel());

    expect(q("[data-testid='context-root']")!.textContent).toBe("Project~/paper");
    expect(q("[data-testid='context-root'] [title]")!.getAttribute("title")).toBe("/home/me/paper");
    const files = qa("[data-testid='context-file']");
    expect(files.map((f) => f.querySelector(".context-path")!.textContent)).toEqual(["~/.config/skald/AGENTS.md", "AGENTS.md", "chapters/AGENTS.md"]);
    expect(files.map((f) => f.querySelector("[data-testid='context-source']")!.textContent)).toEqual(["yours", "project", "project"]);
    expect(files.map((f) => f.querySelector("[data-testid='context-size']")!.textContent)).toEqual(["120 B", "1.2 kB of 40.0 kB", "2.1 kB"]);
    expect(files.map((f) => f.dataset.state)).toEqual(["whole", "cut", "whole"]);
    // Only the cut file has a note, shown as a warning.
    expect(files.map((f) => f.querySelector("[data-testid='context-note']")?.textContent ?? null)).toEqual([null, CUT, null]);
    expect(files[1]!.querySelector("[data-testid='context-note'] svg")).not.toBeNull();

    const skills = qa("[data-testid='context-skill']");
    expect(skills.map((s) => s.querySelector(".context-name")!.textContent)).toEqual(["release", "notes"]);
    expect(skills.map((s) => s.querySelector(".context-description")!.textContent)).toEqual(["Cut a release", "Keep notes"]);
    expect(skills.map((s) => s.querySelector("[data-testid='context-source']")!.textContent)).toEqual(["project", "yours"]);
    expect(q("[data-testid='context-empty']")).toBeNull();
  });

  it("opens a file in the viewer, but not one that was not read", async () => {
    const t = new FakeServer();
    t.context = { ...PAPER, instructions: [{ path: "/home/me/paper/docs/AGENTS.md", source: "project", bytes: 0, included: 0, note: LINK }, ...PAPER.instructions.slice(2)] };
    await render(t);
    expect(chip().textContent).toBe("AGENTS.md ×1");
    await click("[data-testid='context-chip']");
    const [refused, given] = qa("[data-testid='context-file']");
    expect(refused!.dataset.state).toBe("omitted");
    expect(refused!.querySelector("[data-testid='context-size']")!.textContent).toBe("not given");
    expect(refused!.querySelector("[data-testid='context-note']")!.textContent).toBe(LINK);
    expect(refused!.querySelector("button")).toBeNull();
    await act(async () => given!.querySelector<HTMLElement>("button.context-path")!.click());
    await settle();
    expect(opened).toEqual(["/home/me/paper/chapters/AGENTS.md"]);
    expect(panel()).toBeNull();
  });

  it("explains what would be given when there is nothing", async () => {
    const t = new FakeServer();
    t.context = EMPTY;
    await render(t);
    expect(chip().textContent).toBe("Context");
    expect(chip().classList.contains("quiet")).toBe(true);
    expect(chip().classList.contains("warn")).toBe(false);
    await click("[data-testid='context-chip']");
    const empty = q("[data-testid='context-empty']")!;
    expect(empty.textContent).toContain("No AGENTS.md files or skills here.");
    expect(empty.textContent).toContain("AGENTS.md files, from the project root down to this chat's folder");
    expect(empty.textContent).toContain("~/.config/skald/AGENTS.md");
    expect(q("[data-testid='context-files']")).toBeNull();
    expect(q("[data-testid='context-skills']")).toBeNull();
    expect(q("[data-testid='context-root']")!.textContent).toBe("Project~/scratch");
  });

  it("updates from a context event of the chat's turn, not another chat's", async () => {
    const t = new FakeServer();
    t.context = EMPTY;
    await render(t, 3);
    await click("[data-testid='context-chip']");
    expect(q("[data-testid='context-empty']")).not.toBeNull();

    const given: TurnContext = { ...EMPTY, instructions: [{ path: "/home/me/scratch/AGENTS.md", source: "project", bytes: 300, included: 300, note: "" }] };
    await act(async () => t.emit(4, { type: "context", session_id: 4, context: PAPER }));
    expect(chip().textContent).toBe("Context");
    await act(async () => t.emit(3, { type: "context", session_id: 3, context: given }));
    expect(chip().textContent).toBe("AGENTS.md ×1");
    expect(chip().classList.contains("quiet")).toBe(false);
    expect(q("[data-testid='context-empty']")).toBeNull();
    expect(qa("[data-testid='context-file'] .context-path").map((e) => e.textContent)).toEqual(["AGENTS.md"]);
    expect(q("[data-testid='context-file'] [data-testid='context-size']")!.textContent).toBe("300 B");
  });

  it("keeps an event's context over a reply asked for before it", async () => {
    const t = new FakeServer();
    t.context = EMPTY;
    t.held = [];
    await render(t, 3);
    expect(chip().textContent).toBe("Context");
    await act(async () => t.emit(3, { type: "context", session_id: 3, context: PAPER }));
    expect(chip().textContent).toBe("AGENTS.md ×3");
    await act(async () => t.held!.forEach((release) => release(null)));
    await settle();
    expect(chip().textContent).toBe("AGENTS.md ×3");
  });

  it("closes on Escape and gives the focus back to the chip; Close and a click outside too", async () => {
    const t = new FakeServer();
    await render(t);
    await click("[data-testid='context-chip']");
    await key(panel()!, "Escape");
    expect(panel()).toBeNull();
    expect(chip().getAttribute("aria-expanded")).toBe("false");
    expect(document.activeElement).toBe(chip());

    await click("[data-testid='context-chip']");
    await click("[data-testid='context-close']");
    expect(panel()).toBeNull();
    expect(document.activeElement).toBe(chip());

    await click("[data-testid='context-chip']");
    await act(async () => {
      q("[data-testid='elsewhere']")!.dispatchEvent(new MouseEvent("pointerdown", { bubbles: true }));
    });
    await settle();
    expect(panel()).toBeNull();
  });

  it("opened from outside (the shortcut), gives the focus back to where it was", async () => {
    const t = new FakeServer();
    await render(t, 1, true);
    const elsewhere = q("[data-testid='elsewhere']")!;
    elsewhere.focus();
    await act(async () => setOpenFromOutside(true));
    await settle();
    expect(document.activeElement).toBe(panel());
    expect(contextCalls(t)).toHaveLength(2);
    await key(q("[data-testid='context-refresh']")!, "Escape");
    expect(panel()).toBeNull();
    expect(document.activeElement).toBe(elsewhere);
    // Closed from outside while the focus is in it (the shortcut again): the same.
    await act(async () => setOpenFromOutside(true));
    await settle();
    await act(async () => setOpenFromOutside(false));
    await settle();
    expect(panel()).toBeNull();
    expect(document.activeElement).toBe(elsewhere);
  });

  it("says when the context cannot be read, and reads it again", async () => {
    const t = new FakeServer();
    t.error = "session 1 does not exist";
    await render(t);
    expect(chip().textContent).toBe("Context");
    await click("[data-testid='context-chip']");
    expect(q("[data-testid='context-error']")!.textContent).toBe("Could not read the context: session 1 does not exist");
    t.error = null;
    await click("[data-testid='context-refresh']");
    expect(q("[data-testid='context-error']")).toBeNull();
    expect(qa("[data-testid='context-file']")).toHaveLength(3);
    expect(chip().textContent).toBe("AGENTS.md ×3");
  });

  it("shows a hostile name, description and note as text", async () => {
    const t = new FakeServer();
    const name = "<img src=x onerror=alert(1)>";
    t.context = {
      project_root: "/home/me/paper",
      instructions: [{ path: "/home/me/paper/a\u202egnp/AGENTS.md", source: "project", bytes: 10, included: 10, note: "" }],
      skills: [{ name, description: "<b>bold</b>\u200b", path: "/home/me/paper/.agents/skills/x/SKILL.md", source: "project" }],
    };
    await render(t);
    await click("[data-testid='context-chip']");
    expect(panel()!.querySelector("img")).toBeNull();
    expect(panel()!.querySelector("b")).toBeNull();
    expect(q("[data-testid='context-skill'] .context-name")!.textContent).toBe(name);
    expect(q("[data-testid='context-file'] .context-path")!.textContent).toBe("a\\u{202e}gnp/AGENTS.md");
    expect(q("[data-testid='context-skill'] .context-description")!.textContent).toBe("<b>bold</b>\\u{200b}");
  });
});

describe("a project's hooks", () => {
  const HOOKS = { path: "/home/me/paper/.skald/hooks.json", sha256: "9f2c", approved: false, hooks: 2, files: [".skald/hooks.json"] };
  const section = () => q("[data-testid='context-hooks']");

  it("mark the chip while they wait, and the panel says what they are, with the file and Approve", async () => {
    const t = new FakeServer();
    t.context = { ...PAPER, project_hooks: HOOKS };
    await render(t, 5);
    expect(chip().dataset.hooks).toBe("pending");
    expect(chip().classList.contains("attention")).toBe(true);
    expect(q("[data-testid='context-hooks-dot']")).not.toBeNull();
    expect(chip().getAttribute("aria-label")).toBe(
      "Given to the agent: 3 AGENTS.md files and 2 skills; 1 file cut or not read; the project's 2 hooks wait for your approval. Show the context (Ctrl+Shift+X)",
    );
    await click("[data-testid='context-chip']");
    expect(section()!.dataset.state).toBe("pending");
    expect(q("[data-testid='context-hooks-notice']")!.textContent).toContain(
      "This project has 2 hooks in .skald/hooks.json. They are code from the repository and do not run until you approve this file's content.",
    );
    await click("[data-testid='context-hooks-open']");
    expect(opened).toEqual(["/home/me/paper/.skald/hooks.json"]);
    expect(panel()).toBeNull();
    expect(t.commands.some((c) => c.cmd === "approve_hooks")).toBe(false);
  });

  it("name every other file in .skald/ the approval covers, each one click from the viewer", async () => {
    const t = new FakeServer();
    t.context = { ...PAPER, project_hooks: { ...HOOKS, files: [".skald/fmt.sh", ".skald/hooks.json"] } };
    await render(t, 5);
    await click("[data-testid='context-chip']");
    expect(q("[data-testid='context-hooks-files']")!.textContent).toBe(
      "Approving also covers the other files in .skald/, which its hooks may run:.skald/fmt.sh",
    );
    await click("[data-testid='context-hooks-file']");
    expect(opened).toEqual(["/home/me/paper/.skald/fmt.sh"]);
  });

  it("are approved as shown (their SHA-256), and the reply is the context from then on", async () => {
    const t = new FakeServer();
    t.context = { ...PAPER, project_hooks: HOOKS };
    await render(t, 5);
    await click("[data-testid='context-chip']");
    await click("[data-testid='context-hooks-approve']");
    expect(t.commands.filter((c) => c.cmd === "approve_hooks")).toEqual([{ cmd: "approve_hooks", session_id: 5, sha256: "9f2c" }]);
    expect(section()!.dataset.state).toBe("approved");
    expect(q("[data-testid='context-hooks-status']")!.textContent).toBe("Project hooks: 2, approved.skald/hooks.json");
    expect(q("[data-testid='context-hooks-approve']")).toBeNull();
    expect(chip().dataset.hooks).toBe("approved");
    expect(q("[data-testid='context-hooks-dot']")).toBeNull();
    expect(chip().getAttribute("aria-label")).toContain("the project's 2 hooks approved");
    // The focus stays in the panel: Escape still closes it.
    expect(document.activeElement).toBe(panel());
    await click("[data-testid='context-hooks-file']");
    expect(opened).toEqual(["/home/me/paper/.skald/hooks.json"]);
  });

  it("say why an approval was refused, and read the file again", async () => {
    const t = new FakeServer();
    t.context = { ...PAPER, project_hooks: HOOKS };
    t.approveError = "/home/me/paper/.skald/hooks.json changed since it was shown; look at it again before approving";
    await render(t);
    await click("[data-testid='context-chip']");
    const reads = contextCalls(t).length;
    t.context = { ...PAPER, project_hooks: { ...HOOKS, sha256: "77aa", hooks: 3 } };
    await click("[data-testid='context-hooks-approve']");
    expect(q("[data-testid='context-hooks-error']")!.textContent).toBe(`Could not approve: ${t.approveError}`);
    expect(contextCalls(t).length).toBe(reads + 1);
    expect(q("[data-testid='context-hooks-notice']")!.textContent).toContain("This project has 3 hooks");
    expect(chip().dataset.hooks).toBe("pending");
    t.approveError = null;
    await click("[data-testid='context-hooks-approve']");
    expect(t.commands.filter((c) => c.cmd === "approve_hooks").map((c) => (c as { sha256: string }).sha256)).toEqual(["9f2c", "77aa"]);
    expect(q("[data-testid='context-hooks-error']")).toBeNull();
    expect(section()!.dataset.state).toBe("approved");
  });

  it("name the chip when there is nothing else, and ask nothing of a file with no hooks", async () => {
    const t = new FakeServer();
    t.context = { ...EMPTY, project_hooks: { ...HOOKS, path: "/home/me/scratch/.skald/hooks.json" } };
    await render(t);
    expect(chip().textContent).toBe("Hooks ×2");
    expect(chip().classList.contains("quiet")).toBe(false);
    await act(async () => root.unmount());
    container.remove();

    t.context = { ...EMPTY, project_hooks: { ...HOOKS, path: "/home/me/scratch/.skald/hooks.json", hooks: 0 } };
    await render(t);
    expect(chip().textContent).toBe("Context");
    expect(chip().dataset.hooks).toBeUndefined();
    await click("[data-testid='context-chip']");
    expect(section()!.dataset.state).toBe("none");
    expect(q("[data-testid='context-hooks-status']")!.textContent).toBe("Project hooks: none configured.skald/hooks.json");
    expect(q("[data-testid='context-hooks-approve']")).toBeNull();
  });

  it("show a hostile file name as text", async () => {
    const t = new FakeServer();
    t.context = { ...PAPER, project_hooks: { ...HOOKS, path: "/home/me/paper/.skald/hooks\u202e.json" } };
    await render(t);
    await click("[data-testid='context-chip']");
    expect(q("[data-testid='context-hooks-notice']")!.textContent).toContain("in .skald/hooks\\u{202e}.json.");
  });
});
