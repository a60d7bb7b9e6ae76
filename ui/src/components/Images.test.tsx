// Images in the composer and the chat (docs/images.md): pasted, dropped or chosen images are
// attached at once and shown as thumbnails that can be removed (by keyboard too), a message
// may be images alone, the model's blindness is told before sending, files too large or not
// images are refused with a message; a message's and a tool call's images show in the
// chat, fetched once, and open whole in a lightbox that Escape closes.

import { act, useReducer } from "react";
import { createRoot, type Root } from "react-dom/client";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AppContext, TransportContext } from "../app/context";
import { chatReducer, emptyChat, type Item, type ToolView } from "../chat/state";
import type { ChatImage, Command } from "../protocol";
import { fakeApp } from "../test/fakeApp";
import { FakeTransport } from "../test/fakeTransport";
import { fire, hugeFile, PNG_BASE64, pngFile, transfer } from "../test/files";
import { settle } from "../test/settle";
import { ServerError } from "../transport";
import { ChatView } from "./ChatView";

const BLIND = "openai/text-only cannot see images: it will be told an image was attached, not what it shows.";

/** The chat's server: messages are taken (or refused with `sendError`); images as the fake keeps them. */
class Server extends FakeTransport {
  sendError: string | null = null;
  override answer(c: Command): unknown {
    switch (c.cmd) {
      case "send_message":
        if (this.sendError) throw new ServerError(this.sendError);
        return { cmd: c.cmd, queued: false };
      case "list_mcp_prompts":
        return { cmd: c.cmd, prompts: [] };
      case "list_mcp_resources":
        return { cmd: c.cmd, resources: [] };
      default:
        return super.answer(c);
    }
  }
}

const app = fakeApp();

function Chat({ items }: { items: Item[] }) {
  const [chat, dispatch] = useReducer(chatReducer, undefined, () => ({ ...emptyChat(1), loaded: true, items }));
  return <ChatView session={undefined} sessionId={1} chat={chat} dispatch={dispatch} loadError={null} onRetryLoad={() => {}} viewerOpen={false} onToggleViewer={() => {}} />;
}

let container: HTMLDivElement;
let root: Root | null = null;

async function render(server: Server, items: Item[] = []) {
  container = document.createElement("div");
  document.body.appendChild(container);
  root = createRoot(container);
  await act(async () => {
    root!.render(
      <TransportContext.Provider value={server}>
        <AppContext.Provider value={app}>
          <Chat items={items} />
        </AppContext.Provider>
      </TransportContext.Provider>,
    );
  });
  await settle();
}

async function unmount() {
  if (!root) return;
  await act(async () => root!.unmount());
  root = null;
  container.remove();
}

const q = (sel: string) => container.querySelector<HTMLElement>(sel);
const qa = (sel: string) => [...container.querySelectorAll<HTMLElement>(sel)];
const box = () => q("[data-testid='composer']") as HTMLTextAreaElement;
const sendButton = () => q("[data-testid='send']") as HTMLButtonElement;
const attachments = () => qa("[data-testid='attachment']");
const warning = () => q("[data-testid='image-warning']");
const composerError = () => q("[data-testid='composer-error']")?.textContent ?? null;

async function paste(files: File[], text?: string) {
  let leftToBrowser = true;
  await act(async () => {
    box().focus();
    leftToBrowser = fire(box(), "paste", transfer(files, text));
  });
  await settle(10);
  return leftToBrowser;
}

async function type(value: string) {
  await act(async () => {
    Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, "value")!.set!.call(box(), value);
    box().dispatchEvent(new Event("input", { bubbles: true }));
  });
}

async function key(el: HTMLElement, k: string) {
  await act(async () => {
    el.dispatchEvent(new KeyboardEvent("keydown", { key: k, bubbles: true, cancelable: true }));
  });
  await settle();
}

async function click(el: HTMLElement | null) {
  expect(el).not.toBeNull();
  await act(async () => el!.click());
  await settle();
}

beforeEach(() => localStorage.clear());
afterEach(unmount);

describe("images in the composer", () => {
  it("attaches a pasted image at once, shows it, and sends it (text may be empty)", async () => {
    const server = new Server();
    await render(server);
    expect(sendButton().disabled).toBe(true);

    expect(await paste([pngFile("shot.png")])).toBe(false);
    // For this chat: the warning is about its model.
    expect(server.sent("attach_image")).toEqual([{ cmd: "attach_image", data: PNG_BASE64, name: "shot.png", session_id: 1 }]);
    expect(attachments()).toHaveLength(1);
    const thumb = attachments()[0]!;
    expect(thumb.dataset.state).toBe("ready");
    expect(thumb.textContent).toContain("shot.png");
    expect(thumb.querySelector("img")!.getAttribute("src")).toMatch(/^blob:/);
    expect(thumb.querySelector("img")!.getAttribute("alt")).toBe("shot.png");
    expect(warning()).toBeNull();
    // The thumbnail is the file itself: no need to fetch it back.
    expect(server.count("get_image")).toBe(0);

    // Images alone make a message.
    expect(sendButton().disabled).toBe(false);
    await key(box(), "Enter");
    const [image] = [...server.images.values()].map((k) => k.image);
    expect(image).toMatchObject({ media_type: "image/png", width: 3, height: 2, name: "shot.png" });
    expect(server.sent("send_message")).toEqual([{ cmd: "send_message", session_id: 1, text: "", images: [image] }]);
    expect(attachments()).toHaveLength(0);
    expect(sendButton().disabled).toBe(true);

    // The chat shows the message with its image, and no empty bubble.
    const message = q("[data-testid='message'][data-role='user']")!;
    expect(message.querySelector(".bubble")).toBeNull();
    const shown = message.querySelectorAll("[data-testid='chat-image']");
    expect(shown).toHaveLength(1);
    expect(shown[0]!.getAttribute("aria-label")).toBe("Open shot.png");
  });

  it("sends the text and the images together, and a text alone as before", async () => {
    const server = new Server();
    await render(server);
    await type("What is on this screen?");
    await paste([pngFile("a.png"), pngFile("b.png")]);
    expect(attachments().map((a) => a.textContent)).toEqual(["a.png", "b.png"]);
    await click(sendButton());
    const sent = server.sent("send_message")[0]!;
    expect(sent.text).toBe("What is on this screen?");
    expect(sent.images!.map((i) => i.name)).toEqual(["a.png", "b.png"]);
    expect(box().value).toBe("");

    await type("and now?");
    await key(box(), "Enter");
    // No images: the message is sent as it always was.
    expect(server.sent("send_message")[1]).toEqual({ cmd: "send_message", session_id: 1, text: "and now?" });
  });

  it("leaves a paste with text to the box (a spreadsheet's cells come with a picture)", async () => {
    const server = new Server();
    await render(server);
    expect(await paste([pngFile()], "A1\tB1")).toBe(true);
    expect(server.count("attach_image")).toBe(0);
    expect(attachments()).toHaveLength(0);
    // Text alone, of course, too.
    expect(await paste([], "hello")).toBe(true);
    expect(server.count("attach_image")).toBe(0);
  });

  it("says before sending that the chat's model cannot see images", async () => {
    const server = new Server();
    server.imageWarning = BLIND;
    await render(server);
    await paste([pngFile("a.png")]);
    await paste([pngFile("b.png")]);
    // Said once, however many images.
    expect(qa("[data-testid='image-warning']")).toHaveLength(1);
    expect(warning()!.textContent).toBe(BLIND);
    expect(warning()!.getAttribute("role")).toBe("status");

    // Still sendable: the model is told an image was there.
    await key(box(), "Enter");
    expect(server.count("send_message")).toBe(1);
    expect(warning()).toBeNull();
  });

  it("removes an attachment with its × or from the keyboard, the focus moving on", async () => {
    const server = new Server();
    server.imageWarning = BLIND;
    await render(server);
    await paste([pngFile("a.png"), pngFile("b.png"), pngFile("c.png")]);
    const removes = () => qa("[data-testid='attachment-remove']");
    expect(removes().map((b) => b.getAttribute("aria-label"))).toEqual(["Remove a.png", "Remove b.png", "Remove c.png"]);

    await click(removes()[0]!);
    expect(attachments().map((a) => a.textContent)).toEqual(["b.png", "c.png"]);
    // From the keyboard: Delete on the focused ×, then the next one has the focus.
    removes()[0]!.focus();
    await key(removes()[0]!, "Delete");
    expect(attachments().map((a) => a.textContent)).toEqual(["c.png"]);
    expect(document.activeElement).toBe(removes()[0]);
    await key(removes()[0]!, "Backspace");
    expect(attachments()).toHaveLength(0);
    // The last one gone: back to the box, and the warning with it.
    expect(document.activeElement).toBe(box());
    expect(warning()).toBeNull();
    expect(sendButton().disabled).toBe(true);
  });

  it("waits for an image on its way, and one removed meanwhile stays out", async () => {
    const server = new Server();
    let release!: () => void;
    server.hold = (c) => (c.cmd === "attach_image" ? new Promise<void>((r) => (release = r)) : null);
    await render(server);
    await type("look");
    await paste([pngFile("slow.png")]);
    expect(attachments()[0]!.dataset.state).toBe("attaching");
    expect(attachments()[0]!.textContent).toContain("Attaching slow.png…");
    // Not sent without it.
    expect(sendButton().disabled).toBe(true);
    await key(box(), "Enter");
    expect(server.count("send_message")).toBe(0);
    await act(async () => release());
    await settle();
    expect(attachments()[0]!.dataset.state).toBe("ready");
    expect(sendButton().disabled).toBe(false);

    await paste([pngFile("gone.png")]);
    await click(qa("[data-testid='attachment-remove']")[1]!);
    await act(async () => release());
    await settle();
    expect(attachments().map((a) => a.textContent)).toEqual(["slow.png"]);
  });

  it("refuses a file too large before reading it, and shows the engine's refusal", async () => {
    const server = new Server();
    await render(server);
    await paste([hugeFile("huge.png", 31 * 1024 * 1024 + 1)]);
    expect(server.count("attach_image")).toBe(0);
    expect(composerError()).toBe("huge.png is too large to attach (31.0 MB; an image may be at most 30 MB).");
    expect(q("[data-testid='composer-error']")!.getAttribute("role")).toBe("alert");

    // An image by its name whose bytes are not one: the engine says so.
    await paste([new File(["not really"], "fake.png", { type: "image/png" })]);
    expect(server.count("attach_image")).toBe(1);
    expect(composerError()).toBe("Could not attach fake.png: not a PNG, JPEG, WebP or GIF image");
    expect(attachments()).toHaveLength(0);

    // A kind of image no provider takes is refused by its type.
    await paste([new File(["<svg/>"], "logo.svg", { type: "image/svg+xml" })]);
    expect(server.count("attach_image")).toBe(1);
    expect(composerError()).toBe("logo.svg cannot be attached: only PNG, JPEG, WebP and GIF images can.");

    // A good one clears the message.
    await paste([pngFile()]);
    expect(composerError()).toBeNull();
  });

  it("attaches the files chosen with the attach button", async () => {
    const server = new Server();
    await render(server);
    const button = q("[data-testid='attach-image']")!;
    expect(button.getAttribute("aria-label")).toBe("Attach images");
    const input = q("[data-testid='attach-image-input']") as HTMLInputElement;
    expect(input.type).toBe("file");
    expect(input.multiple).toBe(true);
    expect(input.accept).toBe("image/png,image/jpeg,image/webp,image/gif");
    let opened = false;
    input.addEventListener("click", (e) => {
      opened = true;
      e.preventDefault();
    });
    await click(button);
    expect(opened).toBe(true);

    await act(async () => {
      Object.defineProperty(input, "files", { configurable: true, value: transfer([pngFile("one.png"), pngFile("two.png")]).files });
      input.dispatchEvent(new Event("change", { bubbles: true }));
    });
    await settle(10);
    expect(server.sent("attach_image").map((c) => c.name)).toEqual(["one.png", "two.png"]);
    expect(attachments().map((a) => a.textContent)).toEqual(["one.png", "two.png"]);
  });

  it("attaches images dropped anywhere on the chat", async () => {
    const server = new Server();
    await render(server);
    const chat = q("section.chat")!;
    const list = q("[data-testid='message-list']")!;
    const files = transfer([pngFile("dropped.png")]);
    await act(async () => {
      fire(chat, "dragenter", files);
      fire(list, "dragenter", files);
      fire(chat, "dragleave", files);
    });
    // Still over the chat (left a child only).
    expect(q("[data-testid='drop-hint']")).not.toBeNull();
    let leftToBrowser = true;
    await act(async () => {
      expect(fire(list, "dragover", files)).toBe(false);
      leftToBrowser = fire(list, "drop", files);
    });
    await settle(10);
    expect(leftToBrowser).toBe(false);
    expect(q("[data-testid='drop-hint']")).toBeNull();
    expect(server.sent("attach_image").map((c) => c.name)).toEqual(["dropped.png"]);
    expect(attachments().map((a) => a.textContent)).toEqual(["dropped.png"]);

    // A drag of text is the browser's.
    await act(async () => {
      expect(fire(list, "dragover", transfer([], "words"))).toBe(true);
    });
  });

  it("puts the images back when the message could not be sent", async () => {
    const server = new Server();
    server.sendError = "Configure a provider in Settings";
    await render(server);
    await type("see this");
    await paste([pngFile("keep.png")]);
    await key(box(), "Enter");
    await settle();
    expect(server.count("send_message")).toBe(1);
    expect(box().value).toBe("see this");
    expect(attachments().map((a) => a.textContent)).toEqual(["keep.png"]);
    expect(composerError()).toBe("Configure a provider in Settings");
  });

  it("gives a blocked message's images back with its text", async () => {
    const server = new Server();
    const image = server.keepImage(PNG_BASE64, "secret.png");
    await render(server, [{ kind: "user", key: "u1", id: null, text: "look", images: [image], state: "blocked", error: "no" }]);
    expect(box().value).toBe("look");
    expect(attachments().map((a) => a.textContent)).toEqual(["secret.png"]);
    await key(box(), "Enter");
    expect(server.sent("send_message")[0]!.images).toEqual([image]);
  });

  it("keeps a chat's attachments while another chat is open", async () => {
    const server = new Server();
    await render(server);
    await paste([pngFile("later.png")]);
    await unmount();
    await render(server);
    expect(attachments().map((a) => a.textContent)).toEqual(["later.png"]);
    // Another transport (another app) has none.
    await unmount();
    await render(new Server());
    expect(attachments()).toHaveLength(0);
  });
});

function keep(server: Server, name?: string): ChatImage {
  return server.keepImage(PNG_BASE64, name);
}

function tool(images: ChatImage[]): ToolView {
  return {
    id: "c1",
    name: "read_file",
    arguments: { path: "chart.png" },
    labelShort: "read_file chart.png",
    labelFull: "read_file chart.png",
    path: null,
    status: "done",
    result: "chart.png: PNG image, 3×2",
    inboxId: null,
    approval: null,
    question: null,
    progress: null,
    checkpoint: null,
    hooks: [],
    images,
  };
}

describe("images in the chat", () => {
  it("shows a message's images, fetched once, and opens one whole until Escape", async () => {
    const server = new Server();
    const image = keep(server, "diagram.png");
    await render(server, [
      { kind: "user", key: "u1", id: 1, text: "Here it is", images: [image], state: "sent" },
      { kind: "user", key: "u2", id: 2, text: "Again", images: [image], state: "sent" },
    ]);
    await settle();
    const thumbs = qa("[data-testid='chat-image']");
    expect(thumbs).toHaveLength(2);
    expect(thumbs[0]!.querySelector("img")!.getAttribute("src")).toMatch(/^blob:/);
    expect(thumbs[0]!.querySelector("img")!.getAttribute("src")).toBe(thumbs[1]!.querySelector("img")!.getAttribute("src"));
    expect(server.sent("get_image")).toEqual([{ cmd: "get_image", sha256: image.sha256 }]);
    // The text still shows beside it.
    expect(q("[data-testid='message'] .bubble")!.textContent).toBe("Here it is");

    thumbs[0]!.focus();
    await click(thumbs[0]!);
    const lightbox = document.querySelector<HTMLElement>("[data-testid='lightbox']")!;
    expect(lightbox).not.toBeNull();
    expect(lightbox.getAttribute("role")).toBe("dialog");
    expect(lightbox.getAttribute("aria-modal")).toBe("true");
    expect(lightbox.textContent).toContain("diagram.png");
    expect(lightbox.textContent).toContain("3×2");
    expect(lightbox.querySelector("img")!.getAttribute("src")).toBe(thumbs[0]!.querySelector("img")!.getAttribute("src"));
    expect(document.activeElement).toBe(document.querySelector("[data-testid='lightbox-close']"));

    await key(lightbox, "Escape");
    expect(document.querySelector("[data-testid='lightbox']")).toBeNull();
    expect(document.activeElement).toBe(thumbs[0]);

    // Its close button closes it too.
    await click(thumbs[1]!);
    await click(document.querySelector<HTMLElement>("[data-testid='lightbox-close']"));
    expect(document.querySelector("[data-testid='lightbox']")).toBeNull();
  });

  it("shows a tool call's images with its result, and one that cannot be loaded as missing", async () => {
    const server = new Server();
    const image = keep(server);
    const gone: ChatImage = { ...image, sha256: "f".repeat(64) };
    await render(server, [{ kind: "tool", key: "t1", tool: tool([image, gone]) }]);
    await settle();
    const card = q("[data-testid='tool-card']")!;
    const thumbs = card.querySelectorAll<HTMLElement>("[data-testid='chat-image']");
    expect(thumbs).toHaveLength(2);
    // No name: what it is.
    expect(thumbs[0]!.getAttribute("aria-label")).toBe("Open PNG image, 3×2");
    expect(thumbs[0]!.querySelector("img")).not.toBeNull();
    expect(thumbs[1]!.querySelector("img")).toBeNull();
    expect(thumbs[1]!.querySelector(".image-missing")).not.toBeNull();
  });

  it("shows a hostile file name as escaped text", async () => {
    const server = new Server();
    const image = keep(server, "cat\u202egnp.exe");
    await render(server, [{ kind: "user", key: "u1", id: 1, text: "", images: [image], state: "sent" }]);
    const thumb = q("[data-testid='chat-image']")!;
    expect(thumb.getAttribute("aria-label")).not.toContain("\u202e");
    expect(thumb.getAttribute("aria-label")).toContain("\\u{202e}");
  });
});
