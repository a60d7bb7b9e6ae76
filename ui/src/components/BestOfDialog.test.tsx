// The Best of N dialog: the prompt in focus, 2 to 4 agents each with a model (the
// configured one, a listed one, or one typed in), what is wrong said before anything is
// sent, the command it sends, the engine's refusal shown with everything kept, Escape and
// Cancel, Ctrl+Enter.

import { act } from "react";
import { createRoot, type Root } from "react-dom/client";
import { afterEach, describe, expect, it } from "vitest";
import { TransportContext } from "../app/context";
import type { Command } from "../protocol";
import { ServerError } from "../transport";
import { FakeTransport } from "../test/fakeTransport";
import { settle } from "../test/settle";
import { BestOfDialog } from "./BestOfDialog";

type BestOfCommand = Extract<Command, { cmd: "best_of" }>;

let container: HTMLDivElement;
let root: Root;
let started: BestOfCommand[];
let closed: boolean[];
let refusal: string | null;

async function render() {
  container = document.createElement("div");
  document.body.appendChild(container);
  root = createRoot(container);
  started = [];
  closed = [];
  refusal = null;
  const t = new FakeTransport();
  await act(async () => {
    root.render(
      <TransportContext.Provider value={t}>
        <BestOfDialog
          onStart={async (c) => {
            started.push(c);
            if (refusal) throw new ServerError(refusal);
          }}
          onClose={(cancelled) => closed.push(cancelled)}
        />
      </TransportContext.Provider>,
    );
  });
  await settle();
  return t;
}

afterEach(async () => {
  await act(async () => root.unmount());
  container.remove();
});

const q = (sel: string) => document.querySelector(sel) as HTMLElement | null;
const qa = (sel: string) => [...document.querySelectorAll<HTMLElement>(sel)];
const dialog = () => q("[data-testid='best-of-dialog']")!;

async function click(el: HTMLElement | null) {
  expect(el).not.toBeNull();
  await act(async () => el!.click());
  await settle();
}

async function type(el: HTMLElement | null, value: string) {
  const proto = el instanceof HTMLTextAreaElement ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
  await act(async () => {
    Object.getOwnPropertyDescriptor(proto, "value")!.set!.call(el, value);
    el!.dispatchEvent(new Event("input", { bubbles: true }));
  });
}

async function choose(select: HTMLElement | undefined, value: string) {
  await act(async () => {
    (select as HTMLSelectElement).value = value;
    select!.dispatchEvent(new Event("change", { bubbles: true }));
  });
  await settle();
}

async function key(el: Element, k: string, init: KeyboardEventInit = {}) {
  await act(async () => {
    el.dispatchEvent(new KeyboardEvent("keydown", { key: k, bubbles: true, cancelable: true, ...init }));
  });
  await settle();
}

describe("the Best of N dialog", () => {
  it("opens with the prompt in focus and two agents on the configured model; lists the models to choose", async () => {
    await render();
    expect(dialog().getAttribute("role")).toBe("dialog");
    expect(dialog().getAttribute("aria-modal")).toBe("true");
    expect(document.activeElement).toBe(q("[data-testid='best-of-text']"));
    expect(qa("[data-testid='best-of-agent']")).toHaveLength(2);
    const options = [...(qa("[data-testid='best-of-model']")[0] as HTMLSelectElement).options].map((o) => o.textContent);
    expect(options).toEqual(["Configured model (openai/gpt-4.1)", "openai/o3-mini", "local/qwen3-4b", "Another model…"]);
    expect(qa("[data-testid='best-of-model']").map((s) => s.getAttribute("aria-label"))).toEqual(["Agent A's model", "Agent B's model"]);
    expect(q("[data-testid='best-of-start']")!.textContent).toBe("Start 2 agents");
  });

  it("takes 2 to 4 agents: Add agent stops at four, remove at two", async () => {
    await render();
    const removes = () => qa("[data-testid='best-of-remove']") as HTMLButtonElement[];
    expect(removes().every((b) => b.disabled)).toBe(true);
    await click(q("[data-testid='best-of-add']"));
    await click(q("[data-testid='best-of-add']"));
    expect(qa("[data-testid='best-of-agent']")).toHaveLength(4);
    expect((q("[data-testid='best-of-add']") as HTMLButtonElement).disabled).toBe(true);
    expect(dialog().textContent).toContain("At most 4 agents.");
    expect(q("[data-testid='best-of-start']")!.textContent).toBe("Start 4 agents");
    await choose(qa("[data-testid='best-of-model']")[2], "openai/o3-mini");
    await click(removes()[1]!);
    expect(qa("[data-testid='best-of-agent']")).toHaveLength(3);
    // The rows are lettered again; the removed one's choice went with it.
    expect(qa("[data-testid='best-of-model']").map((s) => [s.getAttribute("aria-label"), (s as HTMLSelectElement).value])).toEqual([
      ["Agent A's model", "configured"],
      ["Agent B's model", "openai/o3-mini"],
      ["Agent C's model", "configured"],
    ]);
  });

  it("says what is wrong before anything is sent, then sends the prompt with each agent's model", async () => {
    await render();
    await click(q("[data-testid='best-of-start']"));
    expect(started).toEqual([]);
    expect(q("[data-testid='best-of-text-problem']")!.textContent).toBe("Write the prompt the agents are given.");
    expect(document.activeElement).toBe(q("[data-testid='best-of-text']"));
    await type(q("[data-testid='best-of-text']"), "Write the introduction\nin two paragraphs");
    await choose(qa("[data-testid='best-of-model']")[1], "typed");
    await type(q("[data-testid='best-of-typed']"), "gpt-5");
    await click(q("[data-testid='best-of-start']"));
    expect(started).toEqual([]);
    expect(q("[data-testid='best-of-agent-problem']")!.textContent).toBe("Name a provider and a model, as provider/model (not “gpt-5”).");
    expect(document.activeElement).toBe(q("[data-testid='best-of-typed']"));
    await type(q("[data-testid='best-of-typed']"), "openai/other-model");
    await click(q("[data-testid='best-of-add']"));
    await choose(qa("[data-testid='best-of-model']")[2], "openai/o3-mini");
    await click(q("[data-testid='best-of-start']"));
    expect(started).toEqual([{ cmd: "best_of", text: "Write the introduction\nin two paragraphs", models: [null, "openai/other-model", "openai/o3-mini"] }]);
    expect(closed).toEqual([false]);
  });

  it("shows the engine's refusal and keeps what was typed", async () => {
    await render();
    refusal = "anthropic/claude-x cannot be used: anthropic has no key; configure it in Settings";
    await type(q("[data-testid='best-of-text']"), "Fix the build");
    await choose(qa("[data-testid='best-of-model']")[0], "typed");
    await type(q("[data-testid='best-of-typed']"), "anthropic/claude-x");
    await click(q("[data-testid='best-of-start']"));
    expect(started).toHaveLength(1);
    expect(q("[data-testid='best-of-error']")!.textContent).toBe(`Could not start: ${refusal}`);
    expect(q("[data-testid='best-of-error']")!.getAttribute("role")).toBe("alert");
    expect((q("[data-testid='best-of-text']") as HTMLTextAreaElement).value).toBe("Fix the build");
    expect((q("[data-testid='best-of-typed']") as HTMLInputElement).value).toBe("anthropic/claude-x");
    expect(closed).toEqual([]);
    // Fixed, it starts.
    refusal = null;
    await choose(qa("[data-testid='best-of-model']")[0], "configured");
    await key(q("[data-testid='best-of-text']")!, "Enter", { ctrlKey: true });
    expect(started[1]).toEqual({ cmd: "best_of", text: "Fix the build", models: [null, null] });
    expect(closed).toEqual([false]);
  });

  it("Escape and Cancel close it without sending", async () => {
    await render();
    await type(q("[data-testid='best-of-text']"), "x");
    await key(q("[data-testid='best-of-text']")!, "Escape");
    expect(closed).toEqual([true]);
    await click(q("[data-testid='best-of-cancel']"));
    expect(closed).toEqual([true, true]);
    expect(started).toEqual([]);
  });
});
