import { describe, expect, it } from "vitest";
import { TauriTransport, MESSAGE_EVENT, OPEN_EVENT, type TauriApi } from "./tauriTransport";
import type { OpenTarget, ServerMessage } from "./protocol";

function fakeApi(answer: (args: Record<string, unknown>) => ServerMessage) {
  const calls: { cmd: string; args: Record<string, unknown> }[] = [];
  const handlers = new Map<string, (e: { payload: unknown }) => void>();
  const api: TauriApi = {
    invoke: async <T,>(cmd: string, args: Record<string, unknown>) => {
      calls.push({ cmd, args });
      return answer(args) as T;
    },
    listen: async <T,>(event: string, h: (e: { payload: T }) => void) => {
      expect([MESSAGE_EVENT, OPEN_EVENT]).toContain(event);
      handlers.set(event, h as (e: { payload: unknown }) => void);
      return () => {
        handlers.delete(event);
      };
    },
  };
  return {
    api,
    calls,
    push: (m: ServerMessage) => handlers.get(MESSAGE_EVENT)?.({ payload: m }),
    open: (t: OpenTarget) => handlers.get(OPEN_EVENT)?.({ payload: t }),
    listening: () => [...handlers.keys()],
  };
}

describe("TauriTransport", () => {
  it("sends each command as a protocol request and returns its reply", async () => {
    const f = fakeApi((a) => ({ type: "reply", id: (a.request as { id: number }).id, reply: { cmd: "stop", stopped: true } }));
    const t = new TauriTransport(f.api);
    const r = await t.call({ cmd: "stop", session_id: 4 });
    expect(r.stopped).toBe(true);
    expect(f.calls[0]).toEqual({ cmd: "request", args: { request: { id: 1, command: { cmd: "stop", session_id: 4 } } } });
  });

  it("turns a failure into an error with the engine's words", async () => {
    const f = fakeApi(() => ({ type: "failure", id: 1, error: "no session 9" }));
    const t = new TauriTransport(f.api);
    await expect(t.call({ cmd: "history", session_id: 9 })).rejects.toThrow("no session 9");
  });

  it("passes engine events to subscribers until they leave", async () => {
    const f = fakeApi(() => ({ type: "failure", id: 0, error: "" }));
    const t = new TauriTransport(f.api);
    await Promise.resolve();
    const seen: unknown[] = [];
    const off = t.onEvent((sid, e) => seen.push([sid, e.type]));
    f.push({ type: "event", session_id: 3, event: { type: "token_delta", text: "hi" } });
    off();
    f.push({ type: "event", session_id: 3, event: { type: "token_delta", text: "again" } });
    expect(seen).toEqual([[3, "token_delta"]]);
    const statuses: string[] = [];
    t.onStatus((s) => statuses.push(s));
    expect(statuses).toEqual(["open"]);
  });

  it("passes the shell's open requests (a clicked notification) on, and stops listening on close", async () => {
    const f = fakeApi(() => ({ type: "failure", id: 0, error: "" }));
    const t = new TauriTransport(f.api);
    await Promise.resolve();
    const seen: OpenTarget[] = [];
    t.onOpen((target) => seen.push(target));
    f.open({ what: "inbox_item", inbox_id: 7, session_id: 2 });
    expect(seen).toEqual([{ what: "inbox_item", inbox_id: 7, session_id: 2 }]);
    t.close();
    await new Promise((r) => setTimeout(r, 0));
    expect(f.listening()).toEqual([]);
  });
});
