// The approval card's sandbox line: what approving a shell command runs it in. The question
// card of a question Skald asks itself (the daily budget's), answered with its buttons only.

import { act } from "react";
import { createRoot, type Root } from "react-dom/client";
import { afterEach, describe, expect, it } from "vitest";
import { AppContext, TransportContext } from "../app/context";
import type { InboxEntry, SandboxInfo } from "../protocol";
import { fakeApp } from "../test/fakeApp";
import { FakeTransport } from "../test/fakeTransport";
import { InboxCard } from "./InboxCards";

/** No reply ever comes. */
const transport = new FakeTransport();

const app = fakeApp();

const approval = (sandbox: SandboxInfo | null): InboxEntry => ({
  id: 7,
  session_id: 1,
  session_title: "Chat",
  tool_call_id: "c1",
  agent_id: "main",
  depth: 0,
  title: "execute_cmd",
  created_at: 1,
  kind: "approval",
  payload: {
    tool: "execute_cmd",
    arguments: { command: "make" },
    label: "make",
    reason: "commands ask",
    category: "shell",
    write: null,
    sandbox,
  },
});

const sandbox = (over: Partial<SandboxInfo>): SandboxInfo => ({
  mode: "workspace-write",
  network: false,
  available: true,
  always_ask: true,
  note: "Sandbox workspace-write: commands write only this chat's folder; each asks first.",
  ...over,
});

let container: HTMLDivElement;
let root: Root;

async function render(entry: InboxEntry) {
  container = document.createElement("div");
  document.body.appendChild(container);
  root = createRoot(container);
  await act(async () => {
    root.render(
      <TransportContext.Provider value={transport}>
        <AppContext.Provider value={app}>
          <InboxCard entry={entry} />
        </AppContext.Provider>
      </TransportContext.Provider>,
    );
  });
}

afterEach(async () => {
  await act(async () => root.unmount());
  container.remove();
});

const line = () => container.querySelector("[data-testid='approval-sandbox']");

describe("the approval card's sandbox line", () => {
  it("says how a sandboxed command will run, not as a warning", async () => {
    await render(approval(sandbox({})));
    expect(line()?.textContent).toBe("Sandbox workspace-write: commands write only this chat's folder; each asks first.");
    expect(line()?.className).not.toContain("warn");
  });

  it("warns when approving runs the command unconfined", async () => {
    await render(approval(sandbox({ mode: "off", note: "Approving runs this command with no sandbox, as you." })));
    expect(line()?.textContent).toBe("Approving runs this command with no sandbox, as you.");
    expect(line()?.className).toContain("warn");
  });

  it("warns when the machine cannot sandbox", async () => {
    await render(approval(sandbox({ available: false, note: "Sandbox workspace-write is not available here (no Landlock): every command asks and runs as you." })));
    expect(line()?.className).toContain("warn");
  });

  it("escapes controls in the agent's words that a grant's note quotes", async () => {
    await render(approval(sandbox({ note: "Approving lets it use the network (the agent says: fine\u202eexe.pdf); Sandbox …" })));
    expect(line()?.textContent).not.toContain("\u202e");
    expect(line()?.querySelector(".esc")).not.toBeNull();
  });

  it("is absent for a call that is not a shell command", async () => {
    await render(approval(null));
    expect(line()).toBeNull();
    expect(container.querySelector("[data-testid='approval-card']")).not.toBeNull();
  });
});

describe("a question Skald asks outside any tool call", () => {
  const question = (tool_call_id: string | null): InboxEntry => ({
    id: 9,
    session_id: 1,
    session_title: "Chat",
    tool_call_id,
    agent_id: "main",
    depth: 0,
    title: "Daily budget",
    created_at: 1,
    kind: "question",
    payload: {
      question: "Today's model calls have cost $10.00 of your $5.00 daily budget, and this turn's next request would add about $0.0003. Run it anyway?",
      suggested_answers: ["Run it", "Stop"],
      title: "Daily budget",
    },
  });
  const card = () => container.querySelector<HTMLElement>("[data-testid='question-card']")!;

  it("shows its title and is answered with one of its answers only", async () => {
    await render(question(null));
    expect(card().dataset.from).toBe("skald");
    expect(card().getAttribute("aria-label")).toBe("Daily budget: a question from Skald");
    expect(card().querySelector(".card-title")?.textContent).toBe("QuestionDaily budget");
    expect(card().querySelector(".question")?.textContent).toContain("of your $5.00 daily budget");
    const buttons = [...card().querySelectorAll<HTMLButtonElement>("[data-testid='suggested-answer']")];
    expect(buttons.map((b) => b.textContent)).toEqual(["Run it", "Stop"]);
    // Words of one's own would only mean Stop: no box for them.
    expect(card().querySelector("[data-testid='answer-input']")).toBeNull();
    await act(async () => buttons[0]!.click());
    expect(transport.sent("answer").at(-1)).toEqual({ cmd: "answer", inbox_id: 9, answer: { decision: "text", text: "Run it" } });
  });

  it("an agent's question keeps the box for an answer in words", async () => {
    await render(question("c2"));
    expect(card().dataset.from).toBe("agent");
    expect(card().getAttribute("aria-label")).toBe("Question from the agent");
    expect(card().querySelector("[data-testid='answer-input']")).not.toBeNull();
  });
});
