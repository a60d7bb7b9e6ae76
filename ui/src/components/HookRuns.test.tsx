// Hook runs in the chat: on a call's card (a blocked one standing out, quiet ones folded
// into "2 hooks ran"), in a line of their own, under a blocked message; each row opens
// to the whole command and message; commands and messages shown as text.

import { act, useMemo, useRef, useState } from "react";
import { createRoot, type Root } from "react-dom/client";
import { afterEach, describe, expect, it } from "vitest";
import { AppContext, TransportContext } from "../app/context";
import type { Item, ToolView } from "../chat/state";
import type { HookRun } from "../protocol";
import { fakeApp } from "../test/fakeApp";
import { FakeTransport } from "../test/fakeTransport";
import { ChatRow, ExpandedContext, type Expanded } from "./ChatItems";

const app = fakeApp();

/** No reply ever comes. */
const transport = new FakeTransport();

const run = (over: Partial<HookRun> = {}): HookRun => ({
  event: "PreToolUse",
  command: "sh ~/bin/guard.sh",
  source: "user",
  outcome: "ok",
  message: "",
  duration_ms: 12,
  ...over,
});

function tool(hooks: HookRun[]): ToolView {
  return {
    id: "c1",
    name: "execute_cmd",
    arguments: { command: "rm -rf build" },
    labelShort: "run rm -rf build",
    labelFull: "run rm -rf build",
    path: null,
    status: "rejected",
    result: "A PreToolUse hook blocked this tool call: no rm -rf here",
    inboxId: null,
    approval: null,
    question: null,
    progress: null,
    checkpoint: null,
    hooks,
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

async function render(items: Item[]) {
  container = document.createElement("div");
  document.body.appendChild(container);
  root = createRoot(container);
  await act(async () => {
    root.render(
      <TransportContext.Provider value={transport}>
        <AppContext.Provider value={app}>
          <Rows>
            {items.map((it) => (
              <ChatRow key={it.key} item={it} onToggleGroup={() => {}} />
            ))}
          </Rows>
        </AppContext.Provider>
      </TransportContext.Provider>,
    );
  });
}

const q = (sel: string, from: ParentNode = document) => from.querySelector(sel) as HTMLElement | null;
const qa = (sel: string, from: ParentNode = document) => [...from.querySelectorAll<HTMLElement>(sel)];

async function click(el: HTMLElement | null) {
  expect(el).not.toBeNull();
  await act(async () => el!.click());
}

afterEach(async () => {
  await act(async () => root.unmount());
  container.remove();
});

describe("hook runs on a tool card", () => {
  it("show a blocked run as a row that stands out, and fold quiet ones", async () => {
    const blocked = run({ outcome: "blocked", message: "no rm -rf here", source: "project", command: '"$CLAUDE_PROJECT_DIR"/.claude/hooks/guard.py --strict' });
    await render([{ kind: "tool", key: "t1", tool: tool([run({ command: "sh fmt.sh" }), blocked, run({ event: "PostToolUse", command: "sh log.sh", duration_ms: 3 })]) }]);
    const card = q("[data-testid='tool-card']")!;
    const rows = qa("[data-testid='hook-run']", card);
    expect(rows).toHaveLength(1);
    const row = rows[0]!;
    expect(row.dataset.event).toBe("PreToolUse");
    expect(row.dataset.outcome).toBe("blocked");
    expect(row.dataset.source).toBe("project");
    expect(row.classList.contains("hook-blocked")).toBe(true);
    expect(row.querySelector("button")!.textContent).toBe("PreToolUse hook·guard.pyproject·blocked: no rm -rf here·12 ms");
    expect(q("[data-testid='hook-command']", row)!.getAttribute("title")).toBe('"$CLAUDE_PROJECT_DIR"/.claude/hooks/guard.py --strict');

    const quiet = q("[data-testid='hook-quiet']", card)!;
    expect(quiet.textContent).toBe("2 hooks ran·fmt.sh, log.sh");
    expect(quiet.dataset.count).toBe("2");
    expect(quiet.getAttribute("aria-expanded")).toBe("false");
    expect(quiet.getAttribute("title")).toBe("PreToolUse hook fmt.sh (yours), ok, 12 ms\nPostToolUse hook log.sh (yours), ok, 3 ms");
    await click(quiet);
    expect(quiet.getAttribute("aria-expanded")).toBe("true");
    expect(qa("[data-testid='hook-run']", card).map((r) => `${r.dataset.event} ${r.dataset.outcome}`)).toEqual(["PreToolUse blocked", "PreToolUse ok", "PostToolUse ok"]);
  });

  it("open a row to the whole command and message", async () => {
    const message = "no rm -rf here\nuse git clean instead";
    await render([{ kind: "tool", key: "t1", tool: tool([run({ outcome: "blocked", message })]) }]);
    const row = q("[data-testid='hook-run']")!;
    expect(q("[data-testid='hook-message']", row)!.textContent).toBe("blocked: no rm -rf here …");
    expect(q("[data-testid='hook-detail']", row)).toBeNull();
    await click(row.querySelector("button"));
    expect(row.querySelector("button")!.getAttribute("aria-expanded")).toBe("true");
    expect(q("[data-testid='hook-full-command']", row)!.textContent).toBe("sh ~/bin/guard.sh");
    expect(q("[data-testid='hook-full-message']", row)!.textContent).toBe(message);
    expect(q("[data-testid='hook-detail']", row)!.textContent).toContain("Why it blocked");
  });

  it("show no hook line on a card without runs", async () => {
    await render([{ kind: "tool", key: "t1", tool: tool([]) }]);
    expect(q("[data-testid='hook-runs']")).toBeNull();
  });
});

describe("hook runs in a line of their own", () => {
  it("show failed and timed-out runs in the error colour, one quiet run by name", async () => {
    await render([
      {
        kind: "hooks",
        key: "h1",
        runs: [
          run({ event: "Stop", command: "sh tests.sh", outcome: "error", message: "exit status 1", duration_ms: 1430 }),
          run({ event: "Stop", command: "sh slow.sh", outcome: "timeout", message: "killed after 10 s (its timeout)", duration_ms: 10_004 }),
          run({ event: "PreCompact", command: "notify-send compacting", duration_ms: 4 }),
        ],
      },
    ]);
    const line = q("[data-testid='hook-line']")!;
    const rows = qa("[data-testid='hook-run']", line);
    expect(rows.map((r) => r.className)).toEqual(["hook-run hook-error", "hook-run hook-timeout"]);
    expect(rows.map((r) => q("[data-testid='hook-message']", r)!.textContent)).toEqual(["failed: exit status 1", "timed out: killed after 10 s (its timeout)"]);
    expect(rows[0]!.textContent).toContain("1.4 s");
    expect(q("[data-testid='hook-quiet']", line)!.textContent).toBe("PreCompact hook ran·notify-send·4 ms");
  });

  it("show an ok run that said something as a row", async () => {
    await render([{ kind: "hooks", key: "h1", runs: [run({ message: "allow: the project's own script" })] }]);
    expect(q("[data-testid='hook-message']")!.textContent).toBe("allow: the project's own script");
    expect(q("[data-testid='hook-quiet']")).toBeNull();
  });

  it("show a hostile command and message as text, controls escaped", async () => {
    const command = "sh 'evil\u202egnp.sh'";
    await render([{ kind: "hooks", key: "h1", runs: [run({ command, outcome: "blocked", message: "<img src=x onerror=alert(1)>\u200b" })] }]);
    const row = q("[data-testid='hook-run']")!;
    expect(row.querySelector("img")).toBeNull();
    expect(q("[data-testid='hook-command']", row)!.textContent).toBe("evil\\u{202e}gnp.sh");
    expect(q("[data-testid='hook-command'] .esc", row)).not.toBeNull();
    expect(q("[data-testid='hook-command']", row)!.getAttribute("title")).toBe("sh 'evil\\u{202e}gnp.sh'");
    expect(q("[data-testid='hook-message']", row)!.textContent).toBe("blocked: <img src=x onerror=alert(1)>\\u{200b}");
  });
});

describe("a blocked message", () => {
  it("says it was not sent and why, with its hook's run under it", async () => {
    await render([
      {
        kind: "user",
        key: "k1",
        id: null,
        text: "the key is hunter2",
        state: "blocked",
        error: "no secrets in prompts",
        hooks: [run({ event: "UserPromptSubmit", command: "sh .skald/no-secrets.sh", outcome: "blocked", message: "no secrets in prompts" })],
      },
    ]);
    const m = q("[data-testid='message']")!;
    expect(m.dataset.state).toBe("blocked");
    expect(m.classList.contains("state-blocked")).toBe(true);
    expect(q("[data-testid='blocked-reason']", m)!.textContent).toBe("Not sent: a hook blocked it — no secrets in prompts");
    expect(q("[data-testid='hook-run']", m)!.dataset.event).toBe("UserPromptSubmit");
  });
});
