// The board of agents while it is shown (docs/board.md): `board` read at once, again
// (debounced) when an agent starts, waits in line, asks, is answered, changes files or
// ends, and every few seconds besides — another process (`skald exec`, a crashed app) may
// change it with no event here. Each read remembers when it was asked for, so a running
// turn's time ticks on from there.

import { useCallback, useEffect, useRef, useState } from "react";
import type { BoardAgent, Event } from "../protocol";
import { errorText } from "../lib/format";
import { useEvents, useTransport } from "./context";

/** The events after which the board is read again. */
const REFRESH_ON: ReadonlySet<Event["type"]> = new Set(["turn_running", "turn_queued", "done", "inbox_requested", "inbox_resolved", "checkpoint", "turn_usage", "task_update"]);
/** How long a burst of events is waited out before reading. */
export const BOARD_DEBOUNCE_MS = 300;
/** How often the board is read while shown, events or not. */
export const BOARD_POLL_MS = 5000;

export interface Board {
  /** The agents, newest activity first; null until first read. */
  agents: BoardAgent[] | null;
  /** When the agents shown were asked for (ms since the epoch). */
  fetchedAt: number;
  /** Why the last read failed (the agents shown are then the last good ones). */
  error: string | null;
  loading: boolean;
  reload(): void;
}

export function useBoard(): Board {
  const t = useTransport();
  const [state, setState] = useState<{ agents: BoardAgent[] | null; fetchedAt: number; error: string | null }>({ agents: null, fetchedAt: 0, error: null });
  const [loading, setLoading] = useState(true);
  // One read at a time; a read asked for meanwhile runs once the current one is back.
  const busy = useRef(false);
  const again = useRef(false);
  const live = useRef(true);
  const read = useCallback(async () => {
    if (busy.current) {
      again.current = true;
      return;
    }
    busy.current = true;
    setLoading(true);
    try {
      do {
        again.current = false;
        const at = Date.now();
        try {
          const r = await t.call({ cmd: "board" });
          if (live.current) setState({ agents: r.agents, fetchedAt: at, error: null });
        } catch (e) {
          if (live.current) setState((s) => ({ ...s, error: errorText(e) }));
        }
      } while (again.current && live.current);
    } finally {
      busy.current = false;
      if (live.current) setLoading(false);
    }
  }, [t]);

  useEffect(() => {
    live.current = true;
    void read();
    const poll = setInterval(() => void read(), BOARD_POLL_MS);
    return () => {
      live.current = false;
      clearInterval(poll);
    };
  }, [read]);

  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  useEffect(
    () => () => {
      if (timer.current) clearTimeout(timer.current);
    },
    [],
  );
  useEvents((_sid, e) => {
    if (!REFRESH_ON.has(e.type) || timer.current) return;
    timer.current = setTimeout(() => {
      timer.current = null;
      void read();
    }, BOARD_DEBOUNCE_MS);
  });

  return { ...state, loading, reload: () => void read() };
}
