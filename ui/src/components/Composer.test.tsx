// MCP prompts and resources in the chat's composer: the "/" menu (listing and filtering
// the prompts, picking one from the keyboard or with a click, Enter still sending when it
// is closed or empty), the picked prompt's argument hint, the "Attach resource" picker,
// and a resource link in an MCP tool's result putting its mention into the message.

import { act, useReducer } from "react";
import { createRoot, type Root } from "react-dom/client";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AppContext, TransportContext } from "../app/context";
import { chatReducer, emptyChat, type Item, type ToolView } from "../chat/state";
import type { Command, McpPromptInfo, McpResourceInfo } from "../protocol";
import { fakeApp } from "../test/fakeApp";
import { FakeTransport } from "../test/fakeTransport";
import { settle } from "../test/settle";
import { ChatView } from "./ChatView";

const PROMPTS: McpPromptInfo[] = [
  {
    server: "git",
    name: "review",
    title: "Review a file",
    description: "Reviews one file",
    arguments: [
      { name: "file", description: "the file to review", required: true },
      { name: "style", description: "how strict", required: false },
    ],
  },
  { server: "git", name: "commit-msg", title: null, description: "Writes a commit message", arguments: [] },
  { server: "docs", name: "summarise", title: null, description: "", arguments: [{ name: "topic", description: "", required: false }] },
];

const RESOURCES: McpResourceInfo[] = [
  { server: "docs", uri: "file:///guide.md", name: "guide.md", title: "The guide", description: "How to use it", mime_type: "text/markdown" },
  { server: "docs", uri: "file:///faq.md", name: "faq.md", title: null, description: "", mime_type: null },
  { server: "db", uri: "db://tables/users", name: "users", title: "Users table", description: "", mime_type: null },
];

/** Answers the chat's commands; the MCP lists are what the test sets. */
class FakeServer extends FakeTransport {
  prompts: McpPromptInfo[] = PROMPTS;
  resources: McpResourceInfo[] = RESOURCES;
  override answer(c: Command): unknown {
    switch (c.cmd) {
      case "list_mcp_prompts":
        return { cmd: c.cmd, prompts: this.prompts };
      case "list_mcp_resources":
        return { cmd: c.cmd, resources: this.resources };
      case "send_message":
        return { cmd: c.cmd, queued: false };
      case "stop":
        return { cmd: c.cmd };
      default:
        return super.answer(c);
    }
  }
  /** The messages sent, in order. */
  messages() {
    return this.sent("send_message").map((c) => c.text);
  }
}

const app = fakeApp();

function Chat({ items, running }: { items: Item[]; running: boolean }) {
  const [chat, dispatch] = useReducer(chatReducer, undefined, () => ({ ...emptyChat(1), loaded: true, items, running }));
  return <ChatView session={undefined} sessionId={1} chat={chat} dispatch={dispatch} loadError={null} onRetryLoad={() => {}} viewerOpen={false} onToggleViewer={() => {}} />;
}

let container: HTMLDivElement;
let root: Root | null = null;

async function render(server: FakeServer, { items = [], running = false }: { items?: Item[]; running?: boolean } = {}) {
  container = document.createElement("div");
  document.body.appendChild(container);
  root = createRoot(container);
  await act(async () => {
    root!.render(
      <TransportContext.Provider value={server}>
        <AppContext.Provider value={app}>
          <Chat items={items} running={running} />
        </AppContext.Provider>
      </TransportContext.Provider>,
    );
  });
  await settle();
}

const q = (sel: string) => container.querySelector<HTMLElement>(sel);
const qa = (sel: string) => [...container.querySelectorAll<HTMLElement>(sel)];
const box = () => q("[data-testid='composer']") as HTMLTextAreaElement;
const options = () => qa("[data-testid='prompt-option']");
const menu = () => q("[data-testid='prompt-menu']");

/** Types into a text box as the browser does: the value (caret at its end), then `input`. */
async function type(el: HTMLTextAreaElement | HTMLInputElement, value: string) {
  await act(async () => {
    el.focus();
    const proto = el instanceof HTMLTextAreaElement ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
    Object.getOwnPropertyDescriptor(proto, "value")!.set!.call(el, value);
    el.dispatchEvent(new Event("input", { bubbles: true }));
  });
}

async function key(el: HTMLElement, k: string, init: KeyboardEventInit = {}) {
  let ev!: KeyboardEvent;
  await act(async () => {
    ev = new KeyboardEvent("keydown", { key: k, bubbles: true, cancelable: true, ...init });
    el.dispatchEvent(ev);
  });
  await settle();
  return ev;
}

async function click(el: HTMLElement | null) {
  expect(el).not.toBeNull();
  await act(async () => el!.click());
  await settle();
}

beforeEach(() => localStorage.clear());
afterEach(async () => {
  if (!root) return;
  await act(async () => root!.unmount());
  root = null;
  container.remove();
});

describe("the prompt menu", () => {
  it("lists the prompts after a / and filters them by server:name", async () => {
    const server = new FakeServer();
    await render(server);
    expect(menu()).toBeNull();

    await type(box(), "/");
    const list = q("[role='listbox'][aria-label='Commands and prompts']")!;
    expect(list).not.toBeNull();
    expect(options().map((o) => o.querySelector(".prompt-command")!.textContent)).toEqual(["/git:review", "/git:commit-msg", "/docs:summarise"]);
    // Each row: its title and description, and its arguments (required ones marked).
    expect(options()[0]!.textContent).toContain("Review a file — Reviews one file");
    expect(options()[0]!.querySelector(".prompt-args")!.textContent).toBe("file* (required)style");
    expect(options()[1]!.textContent).toContain("Writes a commit message");
    // The box points at the first row.
    expect(box().getAttribute("aria-controls")).toBe(list.id);
    expect(box().getAttribute("aria-activedescendant")).toBe(options()[0]!.id);
    expect(options()[0]!.getAttribute("aria-selected")).toBe("true");

    await type(box(), "/GIT:");
    expect(options().map((o) => o.querySelector(".prompt-command")!.textContent)).toEqual(["/git:review", "/git:commit-msg"]);
    await type(box(), "/sum");
    expect(options().map((o) => o.querySelector(".prompt-command")!.textContent)).toEqual(["/docs:summarise"]);
    // Nothing matches, or a space was typed: no menu.
    await type(box(), "/nothing");
    expect(menu()).toBeNull();
    await type(box(), "/git review");
    expect(menu()).toBeNull();
    await type(box(), "a /git");
    expect(menu()).toBeNull();
  });

  it("moves with Up and Down, and Enter puts the command in the box, keeping the focus", async () => {
    const server = new FakeServer();
    await render(server);
    await type(box(), "/git");
    await key(box(), "ArrowDown");
    expect(options()[1]!.getAttribute("aria-selected")).toBe("true");
    expect(box().getAttribute("aria-activedescendant")).toBe(options()[1]!.id);
    await key(box(), "ArrowDown");
    // It wraps around.
    expect(options()[0]!.getAttribute("aria-selected")).toBe("true");
    await key(box(), "ArrowUp");
    expect(options()[1]!.getAttribute("aria-selected")).toBe("true");

    const ev = await key(box(), "Enter");
    expect(ev.defaultPrevented).toBe(true);
    expect(box().value).toBe("/git:commit-msg ");
    expect(document.activeElement).toBe(box());
    expect(box().selectionStart).toBe("/git:commit-msg ".length);
    expect(menu()).toBeNull();
    expect(server.count("send_message")).toBe(0);
  });

  it("picks with Tab, or a click on a row", async () => {
    const server = new FakeServer();
    await render(server);
    await type(box(), "/sum");
    await key(box(), "Tab");
    expect(box().value).toBe("/docs:summarise ");

    await type(box(), "/");
    await click(options()[1]!);
    expect(box().value).toBe("/git:commit-msg ");
    expect(document.activeElement).toBe(box());
    expect(server.count("send_message")).toBe(0);
  });

  it("closes with Escape (not stopping the agent), and Enter then sends", async () => {
    const server = new FakeServer();
    await render(server, { running: true });
    await type(box(), "/git:review");
    expect(menu()).not.toBeNull();
    await key(box(), "Escape");
    expect(menu()).toBeNull();
    expect(server.count("stop")).toBe(0);
    await key(box(), "Enter");
    expect(server.messages()).toEqual(["/git:review"]);
  });

  it("leaves Enter to send while it is closed or empty", async () => {
    const server = new FakeServer();
    await render(server);
    await type(box(), "/nothing-matches");
    expect(menu()).toBeNull();
    await key(box(), "Enter");
    await type(box(), "/git:review src/main.rs strict");
    await key(box(), "Enter");
    await type(box(), "hello");
    await key(box(), "Enter");
    expect(server.messages()).toEqual(["/nothing-matches", "/git:review src/main.rs strict", "hello"]);
    expect(box().value).toBe("");
  });

  it("shows the picked prompt's arguments under the composer", async () => {
    const server = new FakeServer();
    await render(server);
    await type(box(), "/git:rev");
    expect(q("[data-testid='prompt-hint']")).toBeNull();
    await key(box(), "Enter");
    const hint = q("[data-testid='prompt-hint']")!;
    expect(hint).not.toBeNull();
    expect(hint.textContent).toContain("file* — the file to review · style — how strict");
    expect(hint.textContent).toContain("key=value pairs, or words in order");
    expect(hint.textContent).toContain("* required");
    expect(box().getAttribute("aria-describedby")).toBe(hint.id);

    // Typing the arguments keeps it; another text removes it.
    await type(box(), "/git:review file=a.rs");
    expect(q("[data-testid='prompt-hint']")).not.toBeNull();
    await type(box(), "/git:commit-msg ");
    expect(q("[data-testid='prompt-hint']")!.textContent).toBe("/git:commit-msg takes no arguments");
    await type(box(), "hello");
    expect(q("[data-testid='prompt-hint']")).toBeNull();
    expect(box().getAttribute("aria-describedby")).toBeNull();
  });

  it("lists only the chat's own commands without prompts, and follows the servers' changes", async () => {
    const server = new FakeServer();
    server.prompts = [];
    await render(server);
    await type(box(), "/");
    expect(options()).toEqual([]);
    expect(qa("[data-testid='command-option'] .prompt-command").map((o) => o.textContent)).toEqual(["/model", "/effort", "/plan", "/act"]);
    await type(box(), "/x");
    expect(menu()).toBeNull();
    await key(box(), "Enter");
    expect(server.messages()).toEqual(["/x"]);

    server.prompts = PROMPTS.slice(1, 2);
    const before = server.count("list_mcp_prompts");
    await act(async () => server.emit(null, { type: "mcp_status", server: "git", status: { state: "ready", tools: 1 } }));
    await settle();
    expect(server.count("list_mcp_prompts")).toBe(before + 1);
    expect(server.count("list_mcp_resources")).toBeGreaterThan(1);
    await type(box(), "/");
    expect(options().map((o) => o.querySelector(".prompt-command")!.textContent)).toEqual(["/git:commit-msg"]);
  });
});

describe("the resource picker", () => {
  it("is not offered without resources", async () => {
    const server = new FakeServer();
    server.resources = [];
    await render(server);
    expect(q("[data-testid='attach-resource']")).toBeNull();
  });

  it("lists and filters the resources, and puts the picked one's mention at the caret", async () => {
    const server = new FakeServer();
    await render(server);
    await type(box(), "Summarise please");
    await act(async () => box().setSelectionRange(9, 9));

    const button = q("[data-testid='attach-resource']")!;
    expect(button.getAttribute("aria-label")).toBe("Attach resource");
    await click(button);
    expect(button.getAttribute("aria-expanded")).toBe("true");
    const picker = q("[data-testid='resource-picker']")!;
    expect(picker.getAttribute("role")).toBe("dialog");
    const filter = q("[data-testid='resource-filter']") as HTMLInputElement;
    expect(document.activeElement).toBe(filter);
    const rows = () => qa("[data-testid='resource-option']");
    expect(rows().map((r) => r.textContent)).toEqual([
      "The guidedocsfile:///guide.mdHow to use it",
      "faq.mddocsfile:///faq.md",
      "Users tabledbdb://tables/users",
    ]);

    await type(filter, "md");
    expect(rows()).toHaveLength(2);
    await type(filter, "DB");
    expect(rows().map((r) => r.querySelector("strong")!.textContent)).toEqual(["Users table"]);
    await type(filter, "");
    await key(filter, "ArrowDown");
    expect(rows()[1]!.getAttribute("aria-selected")).toBe("true");
    expect(filter.getAttribute("aria-activedescendant")).toBe(rows()[1]!.id);
    await key(filter, "Enter");

    expect(q("[data-testid='resource-picker']")).toBeNull();
    expect(box().value).toBe("Summarise @docs:file:///faq.md please");
    expect(document.activeElement).toBe(box());
    expect(box().selectionStart).toBe("Summarise @docs:file:///faq.md ".length);
    expect(server.count("send_message")).toBe(0);
  });

  it("takes a click on a row, and closes with Escape", async () => {
    const server = new FakeServer();
    await render(server, { running: true });
    const button = q("[data-testid='attach-resource']")!;
    await click(button);
    await key(q("[data-testid='resource-filter']")!, "Escape");
    expect(q("[data-testid='resource-picker']")).toBeNull();
    expect(document.activeElement).toBe(button);
    expect(server.count("stop")).toBe(0);

    await click(button);
    await click(qa("[data-testid='resource-option']")[2]!);
    expect(box().value).toBe("@db:db://tables/users ");
  });
});

function tool(name: string, result: string): ToolView {
  return {
    id: "c1",
    name,
    arguments: { query: "guide" },
    labelShort: name,
    labelFull: name,
    path: null,
    status: "done",
    result,
    inboxId: null,
    approval: null,
    question: null,
    progress: null,
    checkpoint: null,
    hooks: [],
  };
}

describe("resource links in a tool's result", () => {
  const RESULT = "Found 2 pages:\n[resource link file:///guide.md (The guide)]\n[resource link file:///faq.md (FAQ (old))]\nThat is all.";

  it("show as buttons that put the resource's mention into the composer", async () => {
    const server = new FakeServer();
    await render(server, { items: [{ kind: "tool", key: "t1", tool: tool("mcp__docs__search", RESULT) }] });
    await click(q("[data-testid='tool-card'] .tool-toggle"));
    const result = q("[data-testid='tool-card'] .result")!;
    expect(result.textContent).toBe("Found 2 pages:\nThe guidefile:///guide.md\nFAQ (old)file:///faq.md\nThat is all.");
    const links = qa("[data-testid='resource-link']");
    expect(links.map((l) => l.getAttribute("aria-label"))).toEqual([
      "Attach The guide (file:///guide.md) to your next message",
      "Attach FAQ (old) (file:///faq.md) to your next message",
    ]);

    await type(box(), "Compare");
    await click(links[0]!);
    expect(box().value).toBe("Compare @docs:file:///guide.md ");
    expect(document.activeElement).toBe(box());
    await click(links[1]!);
    expect(box().value).toBe("Compare @docs:file:///guide.md @docs:file:///faq.md ");
    expect(server.count("send_message")).toBe(0);
  });

  it("stay text in a tool that is not an MCP server's", async () => {
    const server = new FakeServer();
    await render(server, { items: [{ kind: "tool", key: "t1", tool: tool("read_file", RESULT) }] });
    await click(q("[data-testid='tool-card'] .tool-toggle"));
    expect(q("[data-testid='tool-card'] .result")!.textContent).toBe(RESULT);
    expect(q("[data-testid='resource-link']")).toBeNull();
  });
});
