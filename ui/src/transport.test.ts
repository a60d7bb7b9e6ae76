import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ServerError, WebSocketTransport, timeoutFor, type SocketLike, type ConnectionStatus } from "./transport";
import type { Event } from "./protocol";

/** A scriptable stand-in for the browser's WebSocket. */
class FakeSocket implements SocketLike {
  static all: FakeSocket[] = [];
  readyState = 0;
  sent: string[] = [];
  onopen: ((ev: unknown) => void) | null = null;
  onclose: ((ev: unknown) => void) | null = null;
  onerror: ((ev: unknown) => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;
  constructor(public url: string) {
    FakeSocket.all.push(this);
  }
  send(data: string) {
    if (this.readyState !== 1) throw new Error("not open");
    this.sent.push(data);
  }
  close() {
    this.drop();
  }
  open() {
    this.readyState = 1;
    this.onopen?.({});
  }
  drop() {
    this.readyState = 3;
    this.onclose?.({});
  }
  receive(msg: unknown) {
    this.onmessage?.({ data: JSON.stringify(msg) });
  }
  lastRequest(): { id: number; command: { cmd: string } } {
    return JSON.parse(this.sent[this.sent.length - 1]!);
  }
}

function make() {
  const t = new WebSocketTransport({ url: "ws://test/api/ws", socketFactory: (u) => new FakeSocket(u), minBackoffMs: 100, maxBackoffMs: 1000 });
  const statuses: ConnectionStatus[] = [];
  t.onStatus((s) => statuses.push(s));
  return { t, statuses, sock: () => FakeSocket.all[FakeSocket.all.length - 1]! };
}

beforeEach(() => {
  FakeSocket.all = [];
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("WebSocketTransport", () => {
  it("connects to the given url and reports status", () => {
    const { sock, statuses } = make();
    expect(sock().url).toBe("ws://test/api/ws");
    expect(statuses).toEqual(["connecting"]);
    sock().open();
    expect(statuses).toEqual(["connecting", "open"]);
  });

  it("matches replies to calls by id, whatever the order", async () => {
    const { t, sock } = make();
    sock().open();
    const a = t.call({ cmd: "list_sessions" });
    const b = t.call({ cmd: "stop", session_id: 3 });
    const [ra, rb] = sock().sent.map((s) => JSON.parse(s) as { id: number; command: unknown });
    expect(ra!.id).not.toBe(rb!.id);
    expect(rb!.command).toEqual({ cmd: "stop", session_id: 3 });
    sock().receive({ type: "reply", id: rb!.id, reply: { cmd: "stop", stopped: true } });
    sock().receive({ type: "reply", id: ra!.id, reply: { cmd: "list_sessions", sessions: [] } });
    await expect(b).resolves.toEqual({ cmd: "stop", stopped: true });
    await expect(a).resolves.toEqual({ cmd: "list_sessions", sessions: [] });
  });

  it("queues calls made before the socket opens", async () => {
    const { t, sock } = make();
    const p = t.call({ cmd: "inbox" });
    expect(sock().sent).toHaveLength(0);
    sock().open();
    expect(sock().sent).toHaveLength(1);
    sock().receive({ type: "reply", id: sock().lastRequest().id, reply: { cmd: "inbox", items: [] } });
    await expect(p).resolves.toEqual({ cmd: "inbox", items: [] });
  });

  it("rejects a failure with the server's message", async () => {
    const { t, sock } = make();
    sock().open();
    const p = t.call({ cmd: "delete_session", session_id: 9 });
    sock().receive({ type: "failure", id: sock().lastRequest().id, error: "no session 9" });
    await expect(p).rejects.toBeInstanceOf(ServerError);
    await expect(p).rejects.toThrow("no session 9");
  });

  it("times out calls that get no answer", async () => {
    const { t, sock } = make();
    sock().open();
    const p = t.call({ cmd: "list_sessions" });
    const check = expect(p).rejects.toThrow(/did not answer "list_sessions" within 30 s/);
    vi.advanceTimersByTime(30_001);
    await check;
  });

  it("gives latex builds a longer timeout", () => {
    expect(timeoutFor({ cmd: "latex_build", path: "/a.tex" })).toBe(180_000);
    expect(timeoutFor({ cmd: "history", session_id: 1 })).toBe(30_000);
  });

  it("gives building the offline TeX bundle fifteen minutes", () => {
    expect(timeoutFor({ cmd: "build_tex_bundle" })).toBe(15 * 60_000);
  });

  it("gives model downloads an hour", async () => {
    expect(timeoutFor({ cmd: "pull_model", name: "smollm2-135m" })).toBe(60 * 60_000);
    expect(timeoutFor({ cmd: "local_models" })).toBe(30_000);
    // The default timeoutFor is the one a transport uses: still waiting after 30 s.
    const t = new WebSocketTransport({ url: "ws://test/api/ws", socketFactory: (u) => new FakeSocket(u) });
    const sock = FakeSocket.all[FakeSocket.all.length - 1]!;
    sock.open();
    let settled = false;
    const p = t.call({ cmd: "pull_model", name: "smollm2-135m" });
    p.then(
      () => (settled = true),
      () => (settled = true),
    );
    vi.advanceTimersByTime(5 * 60_000);
    await Promise.resolve();
    expect(settled).toBe(false);
    sock.receive({ type: "reply", id: sock.lastRequest().id, reply: { cmd: "pull_model", model: "local/smollm2-135m" } });
    await expect(p).resolves.toEqual({ cmd: "pull_model", model: "local/smollm2-135m" });
    t.close();
  });

  it("delivers events with their session id", () => {
    const { t, sock } = make();
    sock().open();
    const got: [number | null, Event][] = [];
    const off = t.onEvent((sid, e) => got.push([sid, e]));
    sock().receive({ type: "event", session_id: 3, event: { type: "token_delta", text: "hi" } });
    sock().receive({ type: "event", session_id: null, event: { type: "inbox_resolved", id: 1, session_id: 3, status: "answered" } });
    off();
    sock().receive({ type: "event", session_id: 3, event: { type: "token_delta", text: "ignored" } });
    expect(got).toEqual([
      [3, { type: "token_delta", text: "hi" }],
      [null, { type: "inbox_resolved", id: 1, session_id: 3, status: "answered" }],
    ]);
  });

  it("fails pending calls on disconnect and reconnects with growing backoff", async () => {
    const { t, sock, statuses } = make();
    const first = sock();
    first.open();
    const p = t.call({ cmd: "list_sessions" });
    const check = expect(p).rejects.toThrow(/Disconnected/);
    first.drop();
    await check;
    expect(statuses.at(-1)).toBe("closed");
    expect(FakeSocket.all).toHaveLength(1);
    vi.advanceTimersByTime(100);
    expect(FakeSocket.all).toHaveLength(2);
    expect(statuses.at(-1)).toBe("connecting");
    // The second attempt fails too: the next wait is longer.
    sock().drop();
    vi.advanceTimersByTime(150);
    expect(FakeSocket.all).toHaveLength(2);
    vi.advanceTimersByTime(100);
    expect(FakeSocket.all).toHaveLength(3);
    sock().open();
    expect(statuses.at(-1)).toBe("open");
    // Works again on the new socket.
    const q = t.call({ cmd: "inbox" });
    sock().receive({ type: "reply", id: sock().lastRequest().id, reply: { cmd: "inbox", items: [] } });
    await expect(q).resolves.toEqual({ cmd: "inbox", items: [] });
  });

  it("ignores garbage and replies to unknown ids", () => {
    const { sock } = make();
    sock().open();
    expect(() => sock().onmessage?.({ data: "not json" })).not.toThrow();
    expect(() => sock().receive({ type: "reply", id: 999, reply: { cmd: "inbox", items: [] } })).not.toThrow();
  });
});
