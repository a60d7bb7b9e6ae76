// The transport inside the desktop app: each call is the `request` command over Tauri's
// IPC, answered with the same `ServerMessage` `skald serve` sends over its WebSocket, and
// engine events arrive as `skald://message` events. IPC has no connection to lose, so
// the status is always "open".

import type { Command, Event, OpenTarget, Reply, Request, ServerMessage } from "./protocol";
import { ServerError, timeoutFor, type EventHandler, type ReplyOf, type StatusHandler, type Transport } from "./transport";

/** The two Tauri calls this needs, so tests can hand in fakes. */
export interface TauriApi {
  invoke<T>(cmd: string, args: Record<string, unknown>): Promise<T>;
  listen<T>(event: string, handler: (e: { payload: T }) => void): Promise<() => void>;
}

export const MESSAGE_EVENT = "skald://message";
/** The shell asks to show something: a clicked notification's Inbox item. */
export const OPEN_EVENT = "skald://open";

export class TauriTransport implements Transport {
  private nextId = 1;
  private handlers = new Set<EventHandler>();
  private openHandlers = new Set<(target: OpenTarget) => void>();
  private unlisten: Promise<() => void>;
  private unlistenOpen: Promise<() => void>;

  constructor(private api: TauriApi) {
    this.unlisten = api.listen<ServerMessage>(MESSAGE_EVENT, (e) => {
      const m = e.payload;
      if (m.type !== "event") return;
      for (const h of this.handlers) h(m.session_id, m.event as Event);
    });
    this.unlistenOpen = api.listen<OpenTarget>(OPEN_EVENT, (e) => {
      for (const h of this.openHandlers) h(e.payload);
    });
  }

  async call<C extends Command>(command: C): Promise<ReplyOf<C>> {
    const request: Request = { id: this.nextId++, command };
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`Skald did not answer "${command.cmd}" in time`)), timeoutFor(command));
    });
    try {
      const m = await Promise.race([this.api.invoke<ServerMessage>("request", { request }), timeout]);
      if (m.type === "failure") throw new ServerError(m.error);
      if (m.type !== "reply") throw new Error("Skald answered with an event instead of a reply");
      return m.reply as Reply as ReplyOf<C>;
    } catch (e) {
      // Tauri rejects with the command's error text.
      throw e instanceof Error ? e : new ServerError(String(e));
    } finally {
      clearTimeout(timer);
    }
  }

  onEvent(fn: EventHandler): () => void {
    this.handlers.add(fn);
    return () => this.handlers.delete(fn);
  }

  onOpen(fn: (target: OpenTarget) => void): () => void {
    this.openHandlers.add(fn);
    return () => this.openHandlers.delete(fn);
  }

  onStatus(fn: StatusHandler): () => void {
    fn("open");
    return () => {};
  }

  /** The OS folder picker; `null` when cancelled. */
  pickFolder(): Promise<string | null> {
    return this.api.invoke<string | null>("pick_folder", {});
  }

  close(): void {
    this.handlers.clear();
    this.openHandlers.clear();
    void this.unlisten.then((f) => f());
    void this.unlistenOpen.then((f) => f());
  }
}

/** Tauri's own API, loaded only inside the desktop app. */
export async function tauriApi(): Promise<TauriApi> {
  const [core, event] = await Promise.all([import("@tauri-apps/api/core"), import("@tauri-apps/api/event")]);
  return {
    invoke: (cmd, args) => core.invoke(cmd, args),
    listen: (name, handler) => event.listen(name, handler),
  };
}
