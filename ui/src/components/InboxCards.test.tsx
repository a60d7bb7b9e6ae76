// The approval card's sandbox line: what approving a shell command runs it in.

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
