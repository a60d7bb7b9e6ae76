// The one fake transport of the UI's unit tests: it records every command, answers each
// with what a test's subclass computes (or never), can hold replies back to deliver them
// out of order, and pushes events and connection statuses to the app's listeners.
//
//   class Server extends FakeTransport {
//     tex = OFFLINE;
//     override answer(c: Command): unknown {
//       if (c.cmd === "settings") return { cmd: c.cmd, ...SETTINGS, tex: this.tex };
//       return super.answer(c); // no reply, ever
//     }
//   }
//
// Images (docs/images.md) are kept as the engine keeps them: `attach_image` checks the bytes
// are an image and answers its `ChatImage` (with `imageWarning`, when set, as the chat's
// model not seeing images; else the warning for a chat whose own model is listed as not
// seeing), `get_image` answers a kept image's bytes.
//
// Chats' models (docs/models.md "A model per chat") too: `list_models` answers `models`,
// `set_session_model` keeps each chat's model and effort and answers the chat with them,
// refusing as the engine does an effort that is not low, medium or high, an effort for a
// model whose `takes_effort` is false, and the models of `unusable` (with their reason).
//
// Chats' modes (docs/agent-loop.md "Plan mode"): `set_session_mode` keeps each chat's mode
// (refusing with `modeRefusal` when set). Forks (docs/store.md "Forks") of the chats in
// `sessions`, whose messages are in `stored`: `fork_session` copies a chat up to and
// including a message, `edit_message` up to before a message the person wrote and sends
// the edited text there (failing with `sendRefusal` when set, the fork removed again), each
// refusing as the service does a message the chat does not have, one the person did not
// write, and an empty edit. The copies get new ids, and the model, effort and mode of the
// original. `usage` answers `usage` (the chat's, today's; `cost` sets what a chat cost).

import type { ChatImage, ChatMessage, ChatMode, Command, Event, ModelOption, OpenTarget, Reply, SessionInfo, ToolCallInfo } from "../protocol";
import { ServerError, type ConnectionStatus, type EventHandler, type ReplyOf, type StatusHandler, type Transport } from "../transport";

/** A reply that never comes: a request left pending. */
export function pending(): Promise<never> {
  return new Promise(() => {});
}

export class FakeTransport implements Transport {
  /** Every command, in the order sent. */
  commands: Command[] = [];
  /**
   * Delays replies: a reply is computed when its request arrives (as the service does) and
   * delivered once the promise this returns settles; `null` (from here or for every
   * request) delivers it at once.
   */
  hold: ((command: Command) => Promise<void> | null) | null = null;
  /** The status a listener is told at once when it subscribes; `null`: none is reported. */
  status: ConnectionStatus | null = null;
  private eventHandlers: EventHandler[] = [];
  private statusHandlers: StatusHandler[] = [];
  private openHandlers: ((target: OpenTarget) => void)[] = [];

  /** The images kept (attached, or put here by a test), by SHA-256. */
  images = new Map<string, { image: ChatImage; data: string }>();
  /** What `attach_image` warns of (the chat's model cannot see images); none when null. */
  imageWarning: string | null = null;

  /** What `list_models` offers: the configured model first. */
  models: ModelOption[] = [
    { label: "openai/gpt-4.1", sees_images: true, takes_effort: false, default: true },
    { label: "openai/o3-mini", sees_images: false, takes_effort: true, default: false },
    { label: "local/qwen3-4b", sees_images: false, takes_effort: true, default: false },
  ];
  /** Each chat's own model and effort, as `set_session_model` left them. */
  chatModels = new Map<number, { model?: string; effort?: string }>();
  /** Models `set_session_model` refuses, with the reason after "cannot be used: ". */
  unusable: Record<string, string> = {};

  /** Chats the fake knows by more than their id (a test's, and the forks it made). */
  sessions: SessionInfo[] = [];
  /** The next chat's id (a fork's). */
  nextId = 100;
  /** Stored chats' messages and calls, by chat. */
  stored: Record<number, { messages: ChatMessage[]; tool_calls: ToolCallInfo[] }> = {};
  /** The next copied message's id. */
  nextMessageId = 10_000;
  /** Each chat's mode, as `set_session_mode` left it (absent: act, or the listed chat's). */
  chatModes = new Map<number, ChatMode>();
  /** What `set_session_mode` refuses with; none when null. */
  modeRefusal: string | null = null;
  /** What sending an edited message fails with (no model configured, say); none when null. */
  sendRefusal: string | null = null;
  /** What `usage` answers, by chat: its calls and cost; `today` is every chat's since midnight. */
  usage = new Map<number, Omit<Extract<Reply, { cmd: "usage" }>, "cmd" | "today_cost_usd">>();
  today = 0;

  /** A chat as the engine describes it, with its own model, effort and mode. */
  sessionInfo(id: number): SessionInfo {
    const known = this.sessions.find((s) => s.id === id) ?? {
      id,
      title: `Chat ${id}`,
      agent_id: "main",
      kind: "interactive" as const,
      working_dir: "/w",
      created_at: id,
      updated_at: id,
      running: false,
      mode: "act" as const,
    };
    const mode = this.chatModes.get(id);
    return { ...known, ...this.chatModels.get(id), ...(mode ? { mode } : {}) };
  }

  /** The stored message `messageId` of chat `sessionId`, refused as the service refuses it. */
  messageOf(sessionId: number, messageId: number): ChatMessage {
    const m = this.stored[sessionId]?.messages.find((x) => x.id === messageId);
    if (!m) throw new ServerError(`chat ${sessionId} has no message ${messageId}`);
    return m;
  }

  /**
   * A new chat with a copy of `sessionId`'s messages below `bound` (and their calls), new
   * ids, the original's model, effort and mode, titled "… (how)", as `Store::fork_session`.
   */
  forkChat(sessionId: number, bound: number, how: "fork" | "edited"): SessionInfo {
    const original = this.sessionInfo(sessionId);
    const from = this.stored[sessionId] ?? { messages: [], tool_calls: [] };
    const copied = from.messages.filter((m) => m.id < bound);
    const ids = new Map<number, number>();
    const messages = copied.map((m) => {
      const id = this.nextMessageId++;
      ids.set(m.id, id);
      return { ...m, id };
    });
    const tool_calls = from.tool_calls.flatMap((t) => (t.message_id != null && ids.has(t.message_id) ? [{ ...t, message_id: ids.get(t.message_id)! }] : []));
    const id = this.nextId++;
    this.stored[id] = { messages, tool_calls };
    const last = copied[copied.length - 1]?.id;
    const fork: SessionInfo = {
      ...original,
      id,
      title: `${original.title.trim() || "Chat"} (${how})`,
      created_at: 1000 + id,
      updated_at: 1000 + id,
      running: false,
      forked_from: sessionId,
      ...(last != null ? { forked_after: last } : {}),
    };
    if (last == null) delete fork.forked_after;
    this.sessions.push(fork);
    const model = this.chatModels.get(sessionId);
    if (model) this.chatModels.set(id, { ...model });
    if (this.chatModes.has(sessionId)) this.chatModes.set(id, this.chatModes.get(sessionId)!);
    return this.sessionInfo(id);
  }

  /** `edit_message`, as the service does it (crates/skald-service/src/chats.rs). */
  editMessage(c: Extract<Command, { cmd: "edit_message" }>): Extract<Reply, { cmd: "edit_message" }> {
    this.sessionInfo(c.session_id);
    const m = this.messageOf(c.session_id, c.message_id);
    if (m.role !== "user" || m.stack_id != null || m.synthetic) throw new ServerError("only a message the person wrote can be edited");
    if (c.text.trim() === "" && !c.images?.length) throw new ServerError("the message is empty");
    const fork = this.forkChat(c.session_id, c.message_id, "edited");
    if (this.sendRefusal) {
      this.sessions = this.sessions.filter((s) => s.id !== fork.id);
      delete this.stored[fork.id];
      throw new ServerError(this.sendRefusal);
    }
    const sent: ChatMessage = {
      id: this.nextMessageId++,
      stack_id: null,
      role: "user",
      content: c.text,
      html: null,
      reasoning: null,
      status: "complete",
      synthetic: false,
      created_at: 2000 + fork.id,
      ...(c.images?.length ? { images: c.images } : {}),
    };
    this.stored[fork.id]!.messages.push(sent);
    // The turn runs in the new chat.
    this.sessions = this.sessions.map((s) => (s.id === fork.id ? { ...s, running: true } : s));
    return { cmd: "edit_message", session: this.sessionInfo(fork.id), queued: false };
  }

  /** The engine's warning for an image attached in a chat whose own model is listed as blind. */
  blindWarning(sessionId: number | undefined): string | null {
    const own = sessionId == null ? undefined : this.chatModels.get(sessionId)?.model;
    if (!own || this.models.find((m) => m.label === own)?.sees_images !== false) return null;
    return `${own} cannot see images: it will be told an image was attached, not what it shows.`;
  }

  /** `set_session_model`, checked as the engine checks it (crates/skald-service/src/models.rs). */
  setSessionModel(c: Extract<Command, { cmd: "set_session_model" }>): SessionInfo {
    const model = c.model?.trim() || undefined;
    const effort = c.effort?.trim().toLowerCase() || undefined;
    if (model && this.unusable[model]) throw new ServerError(`${model} cannot be used: ${this.unusable[model]}`);
    if (model && !/^[^/\s]+\/\S+$/.test(model)) throw new ServerError(`${model} cannot be used: name a provider and a model, as provider/model`);
    if (effort) {
      if (!["low", "medium", "high"].includes(effort)) throw new ServerError(`the effort is low, medium or high, not \`${effort}\``);
      const label = model ?? this.models.find((m) => m.default)?.label;
      if (this.models.find((m) => m.label === label)?.takes_effort === false) throw new ServerError(`${label} takes no reasoning effort`);
    }
    this.chatModels.set(c.session_id, { ...(model ? { model } : {}), ...(effort ? { effort } : {}) });
    return this.sessionInfo(c.session_id);
  }

  /**
   * The reply to `command`: a reply, a promise of one, or a throw (a failure — throw a
   * `ServerError` for the server's own). Images, chats' models and modes, forks and usage
   * are answered (see above); by default nothing else ever is.
   */
  answer(command: Command): unknown {
    switch (command.cmd) {
      case "attach_image": {
        const image = this.keepImage(command.data, command.name);
        const warning = this.imageWarning ?? this.blindWarning(command.session_id);
        return { cmd: command.cmd, image, ...(warning ? { warning } : {}) };
      }
      case "get_image": {
        const kept = this.images.get(command.sha256);
        if (!kept) throw new ServerError(`no image ${command.sha256} is kept`);
        return { cmd: command.cmd, media_type: kept.image.media_type, data: kept.data };
      }
      case "list_models":
        return { cmd: command.cmd, models: this.models };
      case "set_session_model":
        return { cmd: command.cmd, session: this.setSessionModel(command) };
      case "set_session_mode":
        if (this.modeRefusal) throw new ServerError(this.modeRefusal);
        this.chatModes.set(command.session_id, command.mode);
        return { cmd: command.cmd, session: this.sessionInfo(command.session_id) };
      case "fork_session":
        this.messageOf(command.session_id, command.message_id);
        return { cmd: command.cmd, session: this.forkChat(command.session_id, command.message_id + 1, "fork") };
      case "edit_message":
        return this.editMessage(command);
      case "usage": {
        const u = this.usage.get(command.session_id) ?? { requests: 0, input_tokens: 0, output_tokens: 0, cost_usd: 0, unpriced: 0 };
        return { cmd: command.cmd, ...u, today_cost_usd: this.today };
      }
      default:
        return pending();
    }
  }

  /**
   * Keeps an image (base64) as `attach_image` does, refusing what is not one, and says what
   * the chat is told of it. Its "SHA-256" is a stand-in, the same for the same bytes.
   */
  keepImage(data: string, name?: string): ChatImage {
    const bytes = atob(data);
    const media_type = mediaTypeOf(bytes);
    if (!media_type) throw new ServerError("not a PNG, JPEG, WebP or GIF image");
    const png = media_type === "image/png" && bytes.length >= 24;
    const image: ChatImage = {
      sha256: fakeSha256(bytes),
      media_type,
      width: png ? readU32(bytes, 16) : 640,
      height: png ? readU32(bytes, 20) : 480,
      bytes: bytes.length,
      ...(name ? { name } : {}),
    };
    this.images.set(image.sha256, { image, data });
    return image;
  }

  call<C extends Command>(command: C): Promise<ReplyOf<C>> {
    this.commands.push(command);
    let deliver: () => Promise<unknown>;
    try {
      const reply = this.answer(command);
      deliver = () => Promise.resolve(reply);
    } catch (e) {
      deliver = () => Promise.reject(e);
    }
    const gate = this.hold?.(command);
    return (gate ? gate.then(deliver) : deliver()) as Promise<ReplyOf<C>>;
  }

  /** The commands sent of one kind. */
  sent<K extends Command["cmd"]>(cmd: K): Extract<Command, { cmd: K }>[] {
    return this.commands.filter((c): c is Extract<Command, { cmd: K }> => c.cmd === cmd);
  }

  /** How many commands of one kind were sent. */
  count(cmd: Command["cmd"]): number {
    return this.sent(cmd).length;
  }

  onEvent(fn: EventHandler) {
    this.eventHandlers.push(fn);
    return () => {
      this.eventHandlers = this.eventHandlers.filter((h) => h !== fn);
    };
  }

  /** Pushes an event to every listener, as the server does (`sessionId` null: not a chat's). */
  emit(sessionId: number | null, event: unknown) {
    for (const h of this.eventHandlers) h(sessionId, event as Event);
  }

  onStatus(fn: StatusHandler) {
    this.statusHandlers.push(fn);
    if (this.status) fn(this.status);
    return () => {
      this.statusHandlers = this.statusHandlers.filter((h) => h !== fn);
    };
  }

  /** The connection's status changes (a drop, a reconnect). */
  setStatus(status: ConnectionStatus) {
    this.status = status;
    for (const h of this.statusHandlers) h(status);
  }

  onOpen(fn: (target: OpenTarget) => void) {
    this.openHandlers.push(fn);
    return () => {
      this.openHandlers = this.openHandlers.filter((h) => h !== fn);
    };
  }

  /** What the desktop shell asks to show (a clicked notification). */
  open(target: OpenTarget) {
    for (const h of this.openHandlers) h(target);
  }

  close() {}
}

function mediaTypeOf(bytes: string): string | null {
  if (bytes.startsWith("\x89PNG\r\n\x1a\n")) return "image/png";
  if (bytes.startsWith("\xff\xd8\xff")) return "image/jpeg";
  if (bytes.startsWith("GIF87a") || bytes.startsWith("GIF89a")) return "image/gif";
  if (bytes.startsWith("RIFF") && bytes.slice(8, 12) === "WEBP") return "image/webp";
  return null;
}

function readU32(bytes: string, at: number): number {
  return ((bytes.charCodeAt(at) << 24) | (bytes.charCodeAt(at + 1) << 16) | (bytes.charCodeAt(at + 2) << 8) | bytes.charCodeAt(at + 3)) >>> 0;
}

/** 64 hex digits that depend on every byte (FNV-1a, eight ways seeded). */
function fakeSha256(bytes: string): string {
  let out = "";
  for (let seed = 0; seed < 8; seed++) {
    let h = (0x811c9dc5 ^ seed) >>> 0;
    for (let i = 0; i < bytes.length; i++) h = Math.imul(h ^ bytes.charCodeAt(i), 0x01000193) >>> 0;
    out += h.toString(16).padStart(8, "0");
  }
  return out;
}
