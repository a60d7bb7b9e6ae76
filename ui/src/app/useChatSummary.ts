// A chat's latest compaction (docs/agent-loop.md "Long conversations"), kept in its state
// for the summary's card: it comes with the history, and is asked for again when the
// engine made one (`context_compacted`) and after an undo or "compact now". `history` with
// one message says it without reloading the chat (a turn may be running).

import { useCallback, useRef } from "react";
import type { ChatAction } from "../chat/state";
import { useEvents, useTransport } from "./context";

export function useChatSummary(sessionId: number, dispatch: (a: ChatAction) => void): () => Promise<void> {
  const t = useTransport();
  // Only the latest answer may set it: an undo's may overtake a compaction's.
  const seq = useRef(0);
  const refresh = useCallback(async () => {
    const n = ++seq.current;
    try {
      const r = await t.call({ cmd: "history", session_id: sessionId, limit: 1 });
      if (n === seq.current) dispatch({ type: "summary", summary: r.summary ?? null });
    } catch {
      // The card stays as it was; the next history load says it.
    }
  }, [t, sessionId, dispatch]);
  useEvents((sid, e) => {
    if (e.type === "context_compacted" && (e.session_id === sessionId || sid === sessionId)) void refresh();
  });
  return refresh;
}
