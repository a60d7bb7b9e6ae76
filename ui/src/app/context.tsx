// App-wide plumbing: the transport, and hooks to call commands and listen to events.

import { createContext, useCallback, useContext, useEffect, useRef, useState } from "react";
import type { Command, Event, InboxEntry, SessionInfo, WorktreeInfo } from "../protocol";
import type { ReplyOf, Transport } from "../transport";
import { errorText } from "../lib/format";

export const TransportContext = createContext<Transport | null>(null);

export function useTransport(): Transport {
  const t = useContext(TransportContext);
  if (!t) throw new Error("useTransport outside TransportContext");
  return t;
}

/** Calls `fn` for every pushed event while mounted (always the latest `fn`). */
export function useEvents(fn: (sessionId: number | null, e: Event) => void) {
  const t = useTransport();
  const ref = useRef(fn);
  ref.current = fn;
  useEffect(() => t.onEvent((sid, e) => ref.current(sid, e)), [t]);
}

export type Loadable<T> =
  | { state: "loading" }
  | { state: "error"; error: string }
  | { state: "ready"; value: T };

/** Runs a command on mount (and on `reload()`), keeping the last good value while reloading. */
export function useCommand<C extends Command>(command: C | null, deps: unknown[]) {
  const t = useTransport();
  const [data, setData] = useState<Loadable<ReplyOf<C>>>({ state: "loading" });
  const [tick, setTick] = useState(0);
  const cmdRef = useRef(command);
  cmdRef.current = command;
  useEffect(() => {
    const c = cmdRef.current;
    if (!c) return;
    let live = true;
    t.call(c).then(
      (r) => live && setData({ state: "ready", value: r }),
      (e: unknown) => live && setData({ state: "error", error: errorText(e) }),
    );
    return () => {
      live = false;
    };
  }, [t, tick, ...deps]);
  const reload = useCallback(() => setTick((x) => x + 1), []);
  return [data, reload] as const;
}

/** What screens need from the shell: navigation, the viewer and the worktrees. */
export interface AppActions {
  openSession(id: number): void;
  /** A chat the server made (a rewind's new chat): added to the list and opened. */
  openFork(session: SessionInfo): void;
  openViewer(path: string, line?: number): void;
  go(view: AppView): void;
  sessions: SessionInfo[];
  inbox: InboxEntry[];
  refreshInbox(): void;
  currentSessionId: number | null;
  /** The chats' worktrees (empty until read). */
  worktrees: WorktreeInfo[];
  /** Reads the worktrees again (after an apply or a discard). */
  refreshWorktrees(): void;
  /** Opens a worktree's review. */
  reviewWorktree(name: string): void;
  /** Opens a best-of-N trial's agents side by side (docs/worktrees.md, "Best of N"). */
  openTrial(trial: string): void;
}

export type AppView = "chat" | "inbox" | "agents" | "tasks" | "worktrees" | "settings";

export const AppContext = createContext<AppActions | null>(null);

export function useApp(): AppActions {
  const a = useContext(AppContext);
  if (!a) throw new Error("useApp outside AppContext");
  return a;
}
