// How the UI talks to the Skald engine. Everything above this module sees only the
// `Transport` interface, so the same screens run in a browser against `skald serve`
// (WebSocket) and inside the desktop app's webview (Tauri IPC, tauriTransport.ts).

import type { Command, Event, OpenTarget, Reply, Request, ServerMessage } from "./protocol";

/** The reply type that belongs to a command: replies are tagged with the command's name. */
export type ReplyOf<C extends Command> = Extract<Reply, { cmd: C["cmd"] }>;

export type ConnectionStatus = "connecting" | "open" | "closed";

export type EventHandler = (sessionId: number | null, event: Event) => void;
export type StatusHandler = (status: ConnectionStatus) => void;

export interface Transport {
  call<C extends Command>(command: C): Promise<ReplyOf<C>>;
  /** Subscribe to pushed events; returns the unsubscribe function. */
  onEvent(fn: EventHandler): () => void;
  /** Subscribe to connection status; called at once with the current status. */
  onStatus(fn: StatusHandler): () => void;
  close(): void;
  /** The OS folder picker, where there is one (the desktop app); `null` when cancelled. */
  pickFolder?(): Promise<string | null>;
  /** What the shell asks to show (the desktop app: a clicked notification). */
  onOpen?(fn: (target: OpenTarget) => void): () => void;
}

/** A failure the server reported for one call (its message is the server's words). */
export class ServerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ServerError";
  }
}

export const DEFAULT_TIMEOUT_MS = 30_000;
/** A cold LaTeX build can fetch packages and run several passes. */
export const LATEX_TIMEOUT_MS = 180_000;
/** Downloading a local model answers only when the whole file is in and checked. */
export const PULL_MODEL_TIMEOUT_MS = 60 * 60_000;
/** Building the offline TeX bundle answers once its ~15,000 files are zipped (about a minute). */
export const TEX_BUNDLE_TIMEOUT_MS = 15 * 60_000;

export function timeoutFor(command: Command): number {
  switch (command.cmd) {
    case "latex_build":
      return LATEX_TIMEOUT_MS;
    case "pull_model":
      return PULL_MODEL_TIMEOUT_MS;
    case "build_tex_bundle":
      return TEX_BUNDLE_TIMEOUT_MS;
    default:
      return DEFAULT_TIMEOUT_MS;
  }
}

/** The minimal WebSocket surface we use, so tests can hand in a fake class. */
export interface SocketLike {
  readyState: number;
  onopen: ((ev: unknown) => void) | null;
  onclose: ((ev: unknown) => void) | null;
  onerror: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  send(data: string): void;
  close(): void;
}
export type SocketFactory = (url: string) => SocketLike;

const OPEN = 1;

interface Pending {
  resolve: (r: Reply) => void;
  reject: (e: Error) => void;
  timer: ReturnType<typeof setTimeout>;
  cmd: string;
}

export interface WebSocketTransportOptions {
  url?: string;
  socketFactory?: SocketFactory;
  /** Reconnect delays grow from `minBackoffMs` doubling up to `maxBackoffMs`. */
  minBackoffMs?: number;
  maxBackoffMs?: number;
  timeoutFor?: (c: Command) => number;
}

export function defaultWsUrl(): string {
  const proto = location.protocol === "https:" ? "wss:" : "ws:";
  return `${proto}//${location.host}/api/ws`;
}

export class WebSocketTransport implements Transport {
  private socket: SocketLike | null = null;
  private nextId = 1;
  private pending = new Map<number, Pending>();
  /** Calls made while disconnected wait here and go out when the socket opens. */
  private outbox: string[] = [];
  private eventHandlers = new Set<EventHandler>();
  private statusHandlers = new Set<StatusHandler>();
  private status: ConnectionStatus = "connecting";
  private attempts = 0;
  private reconnectTimer: ReturnType<typeof setTimeout> | null = null;
  private closed = false;
  private readonly url: string;
  private readonly factory: SocketFactory;
  private readonly minBackoff: number;
  private readonly maxBackoff: number;
  private readonly timeoutOf: (c: Command) => number;

  constructor(opts: WebSocketTransportOptions = {}) {
    this.url = opts.url ?? defaultWsUrl();
    this.factory = opts.socketFactory ?? ((u) => new WebSocket(u) as unknown as SocketLike);
    this.minBackoff = opts.minBackoffMs ?? 500;
    this.maxBackoff = opts.maxBackoffMs ?? 10_000;
    this.timeoutOf = opts.timeoutFor ?? timeoutFor;
    this.connect();
  }

  call<C extends Command>(command: C): Promise<ReplyOf<C>> {
    if (this.closed) return Promise.reject(new Error("The connection to Skald was closed"));
    const id = this.nextId++;
    const request: Request = { id, command };
    const text = JSON.stringify(request);
    return new Promise<ReplyOf<C>>((resolve, reject) => {
      const ms = this.timeoutOf(command);
      const timer = setTimeout(() => {
        if (this.pending.delete(id)) {
          this.outbox = this.outbox.filter((t) => t !== text);
          reject(new Error(`Skald did not answer "${command.cmd}" within ${Math.round(ms / 1000)} s`));
        }
      }, ms);
      this.pending.set(id, {
        resolve: resolve as (r: Reply) => void,
        reject,
        timer,
        cmd: command.cmd,
      });
      if (this.socket && this.socket.readyState === OPEN) this.socket.send(text);
      else this.outbox.push(text);
    });
  }

  onEvent(fn: EventHandler): () => void {
    this.eventHandlers.add(fn);
    return () => this.eventHandlers.delete(fn);
  }

  onStatus(fn: StatusHandler): () => void {
    this.statusHandlers.add(fn);
    fn(this.status);
    return () => this.statusHandlers.delete(fn);
  }

  getStatus(): ConnectionStatus {
    return this.status;
  }

  close(): void {
    this.closed = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.socket?.close();
    this.failAll(new Error("The connection to Skald was closed"));
    this.setStatus("closed");
  }

  private setStatus(s: ConnectionStatus) {
    if (s === this.status) return;
    this.status = s;
    for (const fn of this.statusHandlers) fn(s);
  }

  private connect() {
    this.setStatus("connecting");
    let socket: SocketLike;
    try {
      socket = this.factory(this.url);
    } catch {
      this.scheduleReconnect();
      return;
    }
    this.socket = socket;
    socket.onopen = () => {
      this.attempts = 0;
      this.setStatus("open");
      const queued = this.outbox;
      this.outbox = [];
      for (const t of queued) socket.send(t);
    };
    socket.onmessage = (ev) => this.handleMessage(ev.data);
    socket.onerror = () => {
      // The close event follows; reconnecting is handled there.
    };
    socket.onclose = () => {
      if (this.socket !== socket) return;
      this.socket = null;
      // Calls sent on the dead socket will never be answered: the server lost them.
      // Fail them now rather than let each wait out its timeout.
      this.failAll(new Error("Disconnected from Skald before it answered"));
      if (this.closed) return;
      this.setStatus("closed");
      this.scheduleReconnect();
    };
  }

  private scheduleReconnect() {
    if (this.closed) return;
    const delay = Math.min(this.maxBackoff, this.minBackoff * 2 ** this.attempts);
    this.attempts++;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      this.connect();
    }, delay);
  }

  private failAll(err: Error) {
    for (const [, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(err);
    }
    this.pending.clear();
    this.outbox = [];
  }

  private handleMessage(data: unknown) {
    if (typeof data !== "string") return;
    let msg: ServerMessage;
    try {
      msg = JSON.parse(data) as ServerMessage;
    } catch {
      console.warn("skald: unparsable message from server", data.slice(0, 200));
      return;
    }
    switch (msg.type) {
      case "reply": {
        const p = this.pending.get(msg.id);
        if (!p) return;
        this.pending.delete(msg.id);
        clearTimeout(p.timer);
        p.resolve(msg.reply);
        return;
      }
      case "failure": {
        const p = this.pending.get(msg.id);
        if (!p) return;
        this.pending.delete(msg.id);
        clearTimeout(p.timer);
        p.reject(new ServerError(msg.error));
        return;
      }
      case "event":
        for (const fn of this.eventHandlers) {
          try {
            fn(msg.session_id, msg.event);
          } catch (e) {
            // One broken handler must not starve the others of events.
            console.error("skald: event handler failed", e);
          }
        }
        return;
    }
  }
}

declare global {
  interface Window {
    __TAURI_INTERNALS__?: unknown;
  }
}

/**
 * The one place that picks a transport: IPC inside the desktop app (Tauri), the
 * WebSocket of `skald serve` in a browser.
 */
export async function createTransport(): Promise<Transport> {
  if (typeof window !== "undefined" && window.__TAURI_INTERNALS__) {
    const { TauriTransport, tauriApi } = await import("./tauriTransport");
    return new TauriTransport(await tauriApi());
  }
  return new WebSocketTransport();
}
