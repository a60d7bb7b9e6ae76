// A chat's model and reasoning effort (docs/models.md "A model per chat", docs/ui.md): the
// chat header's model button and its menu (the listed models with what they can do, a
// typed `provider/model`, "Use the default", the effort where the model takes one, the
// engine's refusals, the keyboard), and the composer's `/model` and `/effort` (run, not
// sent; suggested in the "/" menu; refused with the engine's words where they were typed).

import { act, useReducer, useState } from "react";
import { createRoot, type Root } from "react-dom/client";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AppContext, TransportContext } from "../app/context";
import { chatReducer, emptyChat } from "../chat/state";
import type { Command, SessionInfo } from "../protocol";
import { fakeApp } from "../test/fakeApp";
import { FakeTransport } from "../test/fakeTransport";
import { fire, pngFile, transfer } from "../test/files";
import { settle } from "../test/settle";
import { ChatView } from "./ChatView";

/** The chat's server: messages are taken; models as the fake keeps them (gpt-4.1 the default). */
class Server extends FakeTransport {
  override answer(c: Command): unknown {
    switch (c.cmd) {
      case "send_message":
        return { cmd: c.cmd, queued: false };
      case "list_mcp_prompts":
        return { cmd: c.cmd, prompts: [] };
      case "list_mcp_resources":
        return { cmd: c.cmd, resources: [] };
      default:
        return super.answer(c);
    }
  }
  /** What `set_session_model` was asked, without the chat's id. */
  changes() {
    return this.sent("set_session_model").map(({ cmd: _c, session_id: _s, ...rest }) => rest);
  }
}

/** The sessions list's copy of the chat, which keeps what the engine answered. */
let listed: SessionInfo[] = [];

function Chat({ initial }: { initial: SessionInfo }) {
  const [chat, dispatch] = useReducer(chatReducer, undefined, () => ({ ...emptyChat(1), loaded: true }));
  const [session, setSession] = useState(initial);
  return (
    <>
      <ChatView
        session={session}
        sessionId={1}
        chat={chat}
        dispatch={dispatch}
        loadError={null}
        onRetryLoad={() => {}}
        viewerOpen={false}
        onToggleViewer={() => {}}
        onSession={(s) => {
          listed.push(s);
          setSession(s);
        }}
      />
      <button type="button" data-testid="elsewhere">
        elsewhere
      </button>
    </>
  );
}

let container: HTMLDivElement;
let root: Root | null = null;

async function render(server: Server, own: Partial<SessionInfo> = {}) {
  container = document.createElement("div");
  document.body.appendChild(container);
  root = createRoot(container);
  await act(async () => {
    root!.render(
      <TransportContext.Provider value={server}>
        <AppContext.Provider value={fakeApp()}>
          <Chat initial={{ ...server.sessionInfo(1), ...own }} />
        </AppContext.Provider>
      </TransportContext.Provider>,
    );
  });
  await settle();
}

const q = (sel: string) => container.querySelector<HTMLElement>(sel);
const qa = (sel: string) => [...container.querySelectorAll<HTMLElement>(sel)];
const button = () => q("[data-testid='model-button']")!;
const menu = () => q("[data-testid='model-menu']");
const box = () => q("[data-testid='composer']") as HTMLTextAreaElement;
const modelInput = () => q("[data-testid='model-input']") as HTMLInputElement;
const effortOptions = () => q("[data-testid='effort-options']");
const checkedEffort = () => q("[data-testid='effort-options'] [aria-checked='true']")?.textContent ?? null;
const checkedModel = () => q("[data-testid='model-menu'] [role='radiogroup'][aria-label='Model'] [aria-checked='true']");
const composerError = () => q("[data-testid='composer-error']")?.textContent ?? null;
const note = () => q("[data-testid='composer-note']")?.textContent ?? null;
const commandRows = () => qa("[data-testid='command-option'] .prompt-command").map((o) => o.textContent);

async function type(el: HTMLTextAreaElement | HTMLInputElement, value: string) {
  await act(async () => {
    el.focus();
    const proto = el instanceof HTMLTextAreaElement ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
    Object.getOwnPropertyDescriptor(proto, "value")!.set!.call(el, value);
    el.dispatchEvent(new Event("input", { bubbles: true }));
  });
}

async function key(el: HTMLElement, k: string) {
  let ev!: KeyboardEvent;
  await act(async () => {
    ev = new KeyboardEvent("keydown", { key: k, bubbles: true, cancelable: true });
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

/** Types a message into the composer and presses Enter. */
async function enter(text: string) {
  await type(box(), text);
  await key(box(), "Enter");
}

const option = (label: string) => q(`[data-testid='model-option'][data-value='${label}']`);

beforeEach(() => {
  localStorage.clear();
  listed = [];
});
afterEach(async () => {
  if (!root) return;
  await act(async () => root!.unmount());
  root = null;
  container.remove();
});

describe("the chat header's model button", () => {
  it("shows the configured model as the default, and its menu lists the models with what each can do", async () => {
    const server = new Server();
    await render(server);
    expect(button().textContent).toBe("gpt-4.1 (default)");
    expect(button().getAttribute("aria-label")).toBe("Model: openai/gpt-4.1 (the default)");
    expect(button().getAttribute("aria-haspopup")).toBe("dialog");
    expect(button().getAttribute("aria-expanded")).toBe("false");

    await click(button());
    expect(button().getAttribute("aria-expanded")).toBe("true");
    expect(menu()!.getAttribute("role")).toBe("dialog");
    // Each opening asks for the list again (local models come and go).
    expect(server.count("list_models")).toBe(2);
    const rows = qa("[data-testid='model-option']");
    expect(rows.map((r) => r.dataset.value)).toEqual(["openai/gpt-4.1", "openai/o3-mini", "local/qwen3-4b"]);
    expect(rows.map((r) => [...r.querySelectorAll(".model-tag")].map((t) => t.textContent))).toEqual([
      ["default", "sees images"],
      ["effort"],
      ["effort"],
    ]);
    // The chat has no model of its own: "Use the default" is checked, and has the focus.
    const fallback = q("[data-testid='model-default']")!;
    expect(fallback.textContent).toContain("Use the default — openai/gpt-4.1");
    expect(fallback.getAttribute("aria-checked")).toBe("true");
    expect(document.activeElement).toBe(fallback);
    // The configured model takes no effort: none is offered.
    expect(effortOptions()).toBeNull();
    expect(menu()!.textContent).toContain("Applies from the next turn.");
  });

  it("gives the chat a listed model, then an effort, and the list keeps the chat's copy", async () => {
    const server = new Server();
    await render(server);
    await click(button());
    await click(option("openai/o3-mini"));
    expect(server.changes()).toEqual([{ model: "openai/o3-mini" }]);
    expect(button().textContent).toBe("o3-mini");
    expect(button().dataset.model).toBe("openai/o3-mini");
    expect(checkedModel()).toBe(option("openai/o3-mini"));
    // It takes an effort: Default (the model's own), Low, Medium, High.
    expect(qa("[data-testid='effort-options'] [role='radio']").map((r) => r.textContent)).toEqual(["Default", "Low", "Medium", "High"]);
    expect(checkedEffort()).toBe("Default");

    await click(q("[data-testid='effort-high']"));
    expect(server.changes()[1]).toEqual({ model: "openai/o3-mini", effort: "high" });
    expect(checkedEffort()).toBe("High");
    expect(button().textContent).toBe("o3-mini · high");
    expect(button().dataset.effort).toBe("high");
    expect(listed.at(-1)).toMatchObject({ id: 1, model: "openai/o3-mini", effort: "high" });

    // Back to the model's own effort: the model stays.
    await click(q("[data-testid='effort-default']"));
    expect(server.changes()[2]).toEqual({ model: "openai/o3-mini" });
    expect(button().textContent).toBe("o3-mini");
  });

  it("keeps the effort for a model that takes one, drops it for one that does not, and gives back the default", async () => {
    const server = new Server();
    await render(server, { model: "openai/o3-mini", effort: "medium" });
    expect(button().textContent).toBe("o3-mini · medium");
    await click(button());
    expect(checkedEffort()).toBe("Medium");
    expect(document.activeElement).toBe(option("openai/o3-mini"));

    await click(option("local/qwen3-4b"));
    expect(server.changes()).toEqual([{ model: "local/qwen3-4b", effort: "medium" }]);
    // gpt-4.1 takes none: it is asked without one (the engine would refuse it).
    await click(option("openai/gpt-4.1"));
    expect(server.changes()[1]).toEqual({ model: "openai/gpt-4.1" });
    expect(button().textContent).toBe("gpt-4.1");
    expect(effortOptions()).toBeNull();

    await click(q("[data-testid='model-default']"));
    expect(server.changes()[2]).toEqual({});
    expect(server.sent("set_session_model")[2]).toEqual({ cmd: "set_session_model", session_id: 1 });
    expect(button().textContent).toBe("gpt-4.1 (default)");
    expect(button().dataset.model).toBe("");
    expect(listed.at(-1)!.model).toBeUndefined();
  });

  it("takes a typed provider/model, offers it an effort, and shows the engine's refusal", async () => {
    const server = new Server();
    server.unusable["anthropic/claude-opus-4-1"] = "anthropic has no key; configure it in Settings";
    await render(server);
    await click(button());

    await type(modelInput(), "anthropic/claude-opus-4-1");
    await click(q("[data-testid='model-input-use']"));
    const error = q("[data-testid='model-error']")!;
    expect(error.getAttribute("role")).toBe("alert");
    expect(error.textContent).toBe("Could not change the model: anthropic/claude-opus-4-1 cannot be used: anthropic has no key; configure it in Settings");
    // Nothing changed; the typed name stays to be corrected.
    expect(button().textContent).toBe("gpt-4.1 (default)");
    expect(modelInput().value).toBe("anthropic/claude-opus-4-1");

    await type(modelInput(), "openai/gpt-5");
    await act(async () => modelInput().form!.requestSubmit());
    await settle();
    expect(server.changes().at(-1)).toEqual({ model: "openai/gpt-5" });
    expect(q("[data-testid='model-error']")).toBeNull();
    expect(modelInput().value).toBe("");
    // Not in the list: shown first, checked, and offered an effort (the engine decides).
    const typed = option("openai/gpt-5")!;
    expect(typed.getAttribute("aria-checked")).toBe("true");
    expect(typed.textContent).toContain("typed in");
    expect(effortOptions()).not.toBeNull();
    await click(q("[data-testid='effort-low']"));
    expect(server.changes().at(-1)).toEqual({ model: "openai/gpt-5", effort: "low" });
    expect(button().textContent).toBe("gpt-5 · low");

    // A bare name of one listed model is that model; it takes an effort, so it keeps it.
    await type(modelInput(), "o3-mini");
    await act(async () => modelInput().form!.requestSubmit());
    await settle();
    expect(server.changes().at(-1)).toEqual({ model: "openai/o3-mini", effort: "low" });
  });

  it("is driven from the keyboard: arrows move among the models, Escape closes and gives the focus back", async () => {
    const server = new Server();
    await render(server);
    await act(async () => button().focus());
    await click(button());
    expect(document.activeElement).toBe(q("[data-testid='model-default']"));
    const group = q("[role='radiogroup'][aria-label='Model']")!;
    await key(document.activeElement as HTMLElement, "ArrowDown");
    expect(document.activeElement).toBe(option("openai/gpt-4.1"));
    await key(document.activeElement as HTMLElement, "ArrowUp");
    await key(document.activeElement as HTMLElement, "ArrowUp");
    // It wraps around.
    expect(document.activeElement).toBe(option("local/qwen3-4b"));
    await key(group, "Home");
    expect(document.activeElement).toBe(q("[data-testid='model-default']"));

    await key(document.activeElement as HTMLElement, "Escape");
    expect(menu()).toBeNull();
    expect(document.activeElement).toBe(button());
    // Escape in the menu does not reach the composer (it would stop the agent).
    expect(server.count("stop")).toBe(0);
  });

  it("closes on a click outside and when the focus leaves it", async () => {
    const server = new Server();
    await render(server);
    await click(button());
    await act(async () => {
      q("[data-testid='message-list']")!.dispatchEvent(new MouseEvent("pointerdown", { bubbles: true }));
    });
    expect(menu()).toBeNull();

    await click(button());
    await act(async () => q("[data-testid='elsewhere']")!.focus());
    expect(menu()).toBeNull();
  });
});

describe("/model and /effort in the composer", () => {
  it("/model alone opens the picker, and Escape gives the focus back to the composer", async () => {
    const server = new Server();
    await render(server);
    await enter("/model");
    expect(server.count("send_message")).toBe(0);
    expect(box().value).toBe("");
    expect(menu()).not.toBeNull();
    expect(document.activeElement).toBe(q("[data-testid='model-default']"));
    await key(document.activeElement as HTMLElement, "Escape");
    expect(menu()).toBeNull();
    expect(document.activeElement).toBe(box());
  });

  it("/model provider/name sets the chat's model, /effort its effort, /model default gives back the default", async () => {
    const server = new Server();
    await render(server);
    await enter("/model openai/o3-mini");
    expect(server.changes()).toEqual([{ model: "openai/o3-mini" }]);
    expect(server.count("send_message")).toBe(0);
    expect(box().value).toBe("");
    expect(note()).toBe("This chat uses openai/o3-mini from its next turn.");
    expect(q("[data-testid='composer-note']")!.getAttribute("role")).toBe("status");
    expect(button().textContent).toBe("o3-mini");

    await enter("/effort HIGH");
    expect(server.changes()[1]).toEqual({ model: "openai/o3-mini", effort: "high" });
    expect(note()).toBe("This chat's model reasons with high effort from its next turn.");
    expect(button().textContent).toBe("o3-mini · high");
    // The note goes once something else is typed.
    await type(box(), "h");
    expect(note()).toBeNull();

    await enter("/effort default");
    expect(server.changes()[2]).toEqual({ model: "openai/o3-mini" });
    await enter("/model default");
    expect(server.changes()[3]).toEqual({});
    expect(note()).toBe("This chat uses the default model (openai/gpt-4.1) again from its next turn.");
    expect(button().textContent).toBe("gpt-4.1 (default)");

    // A listed model's name: Enter completes it from the menu, then runs it.
    await enter("/model qwen3-4b");
    expect(box().value).toBe("/model local/qwen3-4b");
    await key(box(), "Enter");
    expect(server.changes()[4]).toEqual({ model: "local/qwen3-4b" });
    // A message that merely starts with it is a message.
    await enter("/models are fun");
    expect(server.sent("send_message").map((c) => c.text)).toEqual(["/models are fun"]);
  });

  it("shows a refusal above the box, the command left in it", async () => {
    const server = new Server();
    server.unusable["anthropic/x"] = "anthropic has no key; configure it in Settings";
    await render(server);
    // The configured model takes no effort: the engine says so.
    await enter("/effort high");
    expect(server.changes()).toEqual([{ effort: "high" }]);
    expect(composerError()).toBe("Could not change the effort: openai/gpt-4.1 takes no reasoning effort");
    expect(box().value).toBe("/effort high");
    // The "/" menu, which would cover it, is closed until the text changes.
    expect(q("[data-testid='prompt-menu']")).toBeNull();
    expect(note()).toBeNull();

    await enter("/model anthropic/x");
    expect(composerError()).toBe("Could not change the model: anthropic/x cannot be used: anthropic has no key; configure it in Settings");
    expect(box().value).toBe("/model anthropic/x");
    expect(button().textContent).toBe("gpt-4.1 (default)");

    // Malformed: said at once, nothing asked.
    await enter("/effort max");
    expect(composerError()).toBe("/effort takes low, medium, high or default.");
    await enter("/model a/b c/d");
    expect(composerError()).toBe("/model takes one model: provider/model, or default.");
    expect(server.count("set_session_model")).toBe(2);
    expect(server.count("send_message")).toBe(0);
  });

  it("are suggested in the / menu, with the models and the efforts once one is typed", async () => {
    const server = new Server();
    await render(server);
    await type(box(), "/");
    expect(commandRows()).toEqual(["/model", "/effort", "/plan", "/act"]);
    await type(box(), "/eff");
    expect(commandRows()).toEqual(["/effort"]);
    await key(box(), "Tab");
    expect(box().value).toBe("/effort ");
    expect(commandRows()).toEqual(["/effort low", "/effort medium", "/effort high", "/effort default"]);
    const hint = q("[data-testid='command-hint']")!;
    expect(hint.textContent).toContain("/effort default leaves it to the model");
    expect(box().getAttribute("aria-describedby")).toBe(hint.id);

    await type(box(), "/model ");
    expect(commandRows()).toEqual(["/model default", "/model openai/gpt-4.1", "/model openai/o3-mini", "/model local/qwen3-4b"]);
    expect(qa("[data-testid='command-option']")[2]!.textContent).toContain("takes an effort");
    expect(q("[data-testid='command-hint']")!.textContent).toContain("/model alone opens the model picker");
    await type(box(), "/model o3");
    expect(commandRows()).toEqual(["/model openai/o3-mini"]);
    // Enter puts the row in the box; once it is what is typed, Enter runs it.
    await key(box(), "Enter");
    expect(box().value).toBe("/model openai/o3-mini");
    expect(server.count("set_session_model")).toBe(0);
    await key(box(), "Enter");
    expect(server.changes()).toEqual([{ model: "openai/o3-mini" }]);

    // /model typed whole runs with Enter, though the menu shows it.
    await type(box(), "/model");
    expect(commandRows()).toEqual(["/model"]);
    await key(box(), "Enter");
    expect(menu()).not.toBeNull();
    expect(server.count("send_message")).toBe(0);
  });

  it("makes an image's warning about the chat's own model", async () => {
    const server = new Server();
    await render(server);
    await enter("/model openai/o3-mini");
    await act(async () => {
      box().focus();
      fire(box(), "paste", transfer([pngFile("shot.png")]));
    });
    await settle(10);
    expect(server.sent("attach_image")[0]!.session_id).toBe(1);
    expect(q("[data-testid='image-warning']")!.textContent).toBe(
      "openai/o3-mini cannot see images: it will be told an image was attached, not what it shows.",
    );
  });
});
