// A chat's mode (docs/agent-loop.md "Plan mode"): act, or plan — the agent reads, searches
// and asks, and changes nothing until the person approves its plan. The chat's
// `SessionInfo.mode`, then each `set_session_mode` reply; shared by the header's toggle and
// the composer (Shift+Tab, `/plan`, `/act`, and its plan-mode look).
//
// An approved plan (`exit_plan_mode`) makes the engine switch the chat to act: `refresh`
// reads the chat again so the header follows.

import { useCallback, useEffect, useRef, useState } from "react";
import type { ChatMode, SessionInfo } from "../protocol";
import { useTransport } from "./context";

export interface ChatModeControl {
  mode: ChatMode;
  /** Switches the chat (from its next round). Throws the engine's refusal. */
  setMode(mode: ChatMode): Promise<ChatMode>;
  /** Act → plan → act (Shift+Tab). Throws the engine's refusal. */
  cycle(): Promise<ChatMode>;
  /** Reads the chat's mode again (the engine changed it: an approved plan). */
  refresh(): void;
}

export const MODE_TITLES: Record<ChatMode, string> = { act: "Act", plan: "Plan" };

/** What a mode means, in a sentence (the toggle's tooltip, the composer's note). */
export const MODE_DETAIL: Record<ChatMode, string> = {
  act: "The agent changes files and runs commands as your rules allow.",
  plan: "The agent reads, searches and asks, and changes nothing until you approve its plan.",
};

export const otherMode = (m: ChatMode): ChatMode => (m === "plan" ? "act" : "plan");

/**
 * `session`: the chat as the sessions list has it; `onSession` is told the chat as the
 * engine answered (the list keeps it).
 */
export function useChatMode(sessionId: number, session: SessionInfo | undefined, onSession?: (s: SessionInfo) => void): ChatModeControl {
  const t = useTransport();
  const [mode, setModeState] = useState<ChatMode>(session?.mode ?? "act");
  // The latest mode, for Shift+Tab pressed twice before the first answer rendered.
  const modeRef = useRef(mode);
  const keep = (m: ChatMode) => {
    modeRef.current = m;
    setModeState(m);
  };

  // The list's copy of the chat wins when it changes (an approved plan read again, a reload).
  const listed = session?.mode;
  useEffect(() => {
    if (listed) keep(listed);
  }, [listed]);

  const onSessionRef = useRef(onSession);
  onSessionRef.current = onSession;

  const setMode = useCallback(
    async (next: ChatMode) => {
      const r = await t.call({ cmd: "set_session_mode", session_id: sessionId, mode: next });
      const answered = r.session?.mode ?? next;
      keep(answered);
      if (r.session) onSessionRef.current?.(r.session);
      return answered;
    },
    [t, sessionId],
  );

  const refresh = useCallback(() => {
    t.call({ cmd: "list_sessions" }).then(
      (r) => {
        const s = r.sessions.find((x) => x.id === sessionId);
        if (!s) return;
        keep(s.mode);
        onSessionRef.current?.(s);
      },
      // The header keeps what it shows; the turn's `done` reads the list again.
      () => {},
    );
  }, [t, sessionId]);

  return { mode, setMode, cycle: () => setMode(otherMode(modeRef.current)), refresh };
}
