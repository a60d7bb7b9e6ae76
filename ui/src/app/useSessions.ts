// The chats: the sessions list, the chat shown, each opened chat's event-fed state (its
// history, then live events), and creating, forking, renaming and deleting chats.

import { useCallback, useEffect, useReducer, useRef, useState } from "react";
import type { SessionInfo } from "../protocol";
import { chatReducer, emptyChat, type ChatAction, type ChatState } from "../chat/state";
import { HISTORY_PAGE } from "../components/ChatView";
import { errorText } from "../lib/format";
import { useTransport } from "./context";
import type { Navigation } from "./useNavigation";

type Chats = Record<number, ChatState>;
type ChatsAction = { sid: number; action: ChatAction } | { sid: number; reset: true } | { sid: number; remove: true };

function chatsReducer(state: Chats, a: ChatsAction): Chats {
  if ("reset" in a) return { ...state, [a.sid]: state[a.sid] ?? emptyChat(a.sid) };
  if ("remove" in a) {
    const { [a.sid]: _gone, ...rest } = state;
    return rest;
  }
  const chat = state[a.sid];
  // Events for chats never opened are dropped: opening one loads its history fresh.
  if (!chat) return state;
  const next = chatReducer(chat, a.action);
  return next === chat ? state : { ...state, [a.sid]: next };
}

const LAST_SESSION = "skald.session";

function loadLastSession(): number | null {
  try {
    const v = Number(localStorage.getItem(LAST_SESSION));
    return Number.isFinite(v) && v > 0 ? v : null;
  } catch {
    return null;
  }
}

export function useSessions({ moveTo }: Pick<Navigation, "moveTo">) {
  const t = useTransport();
  const [sessions, setSessions] = useState<SessionInfo[] | null>(null);
  const [sessionsError, setSessionsError] = useState<string | null>(null);
  // The default local model reading a new chat's prompt in the background (at start, or
  // when the default changes): a chat sent meanwhile waits for it, and says so.
  const [preparing, setPreparing] = useState<{ read: number; total: number } | null>(null);
  const [currentId, setCurrentId] = useState<number | null>(loadLastSession);
  const [chats, dispatchChats] = useReducer(chatsReducer, {});
  const [loadErrors, setLoadErrors] = useState<Record<number, string>>({});

  // ---- loading ----
  // Bumped by every create and delete this UI makes: a list the server computed before
  // one of them is out of date (it would drop a chat just created and close it).
  const sessionChanges = useRef(0);
  const loadSessions = useCallback(async () => {
    try {
      let r;
      for (;;) {
        const seen = sessionChanges.current;
        r = await t.call({ cmd: "list_sessions" });
        if (seen === sessionChanges.current) break;
      }
      setSessions(r.sessions);
      setSessionsError(null);
      // e2e tests and the Tauri shell wait on this.
      document.body.dataset.ready = "1";
    } catch (e) {
      setSessionsError(errorText(e));
    }
  }, [t]);

  // Only a chat's latest history request may set its state: an earlier one's reply or
  // failure, arriving late, would overwrite a newer answer.
  const historySeq = useRef(0);
  const historyRequests = useRef(new Map<number, number>());
  // A history read while the chat's turn runs (an edited message's new chat, a reconnect)
  // misses the events that came between the server reading it and the UI getting it: such
  // a chat is read again when its turn ends (or at once, when it ended meanwhile).
  const turnsEnded = useRef(new Map<number, number>());
  const readAgainAtDone = useRef(new Set<number>());
  // A chat read while its turn waits for a place (docs/board.md) is told so by its
  // `queued`, unless the turn started or ended since the read began.
  const turnEvents = useRef(new Map<number, number>());
  const loadHistory = useCallback(
    /** `ended`: read again because the turn an earlier read saw running has ended. */
    async (sid: number, ended = false): Promise<void> => {
      const n = ++historySeq.current;
      historyRequests.current.set(sid, n);
      const latest = () => historyRequests.current.get(sid) === n;
      const endedBefore = turnsEnded.current.get(sid) ?? 0;
      const turnEventsBefore = turnEvents.current.get(sid) ?? 0;
      dispatchChats({ sid, reset: true });
      // The folder's checkpoints, alongside: they go on the tool cards whichever comes first.
      // A server without them (or a failure) leaves the cards as they are.
      t.call({ cmd: "checkpoints", session_id: sid }).then(
        (r) => latest() && dispatchChats({ sid, action: { type: "checkpoints", checkpoints: r.checkpoints ?? [] } }),
        () => {},
      );
      try {
        const reply = await t.call({ cmd: "history", session_id: sid, limit: HISTORY_PAGE });
        if (!latest()) return;
        dispatchChats({ sid, action: { type: "history", reply, ended } });
        setLoadErrors(({ [sid]: _x, ...rest }) => rest);
        if (reply.session.running) {
          if ((turnsEnded.current.get(sid) ?? 0) !== endedBefore) return loadHistory(sid, true);
          readAgainAtDone.current.add(sid);
          if (reply.session.queued && (turnEvents.current.get(sid) ?? 0) === turnEventsBefore) dispatchChats({ sid, action: { type: "queue", ahead: null } });
        }
      } catch (e) {
        if (latest()) setLoadErrors((m) => ({ ...m, [sid]: errorText(e) }));
      }
    },
    [t],
  );

  const currentRef = useRef(currentId);
  currentRef.current = currentId;
  /** Loads the chat shown again (after a reconnect: its events may have been missed). */
  const reloadCurrent = useCallback(() => {
    if (currentRef.current != null) void loadHistory(currentRef.current);
  }, [loadHistory]);

  // Pick a chat once sessions are known: the last one used, else the newest.
  useEffect(() => {
    if (!sessions) return;
    if (currentId != null && sessions.some((s) => s.id === currentId)) return;
    const newest = [...sessions].sort((a, b) => b.updated_at - a.updated_at)[0];
    setCurrentId(newest ? newest.id : null);
  }, [sessions, currentId]);

  // Open the current chat: its history is asked for only once the chat is known to
  // exist. The id remembered from the last run may name no chat here (web storage
  // outlives a data folder): asking then failed with "session 1 does not exist", and
  // that failure stuck to id 1 — so the next new chat, 1 in a new store, opened on it.
  // A chat whose last load failed loads again when it is opened again.
  const chatsRef = useRef(chats);
  chatsRef.current = chats;
  const loadErrorsRef = useRef(loadErrors);
  loadErrorsRef.current = loadErrors;
  const currentKnown = currentId != null && sessions != null && sessions.some((s) => s.id === currentId);
  useEffect(() => {
    if (currentId == null || !currentKnown) return;
    try {
      localStorage.setItem(LAST_SESSION, String(currentId));
    } catch {
      /* storage disabled */
    }
    const chat = chatsRef.current[currentId];
    if (!chat || (!chat.loaded && loadErrorsRef.current[currentId] != null)) void loadHistory(currentId);
  }, [currentId, currentKnown, loadHistory]);

  // ---- events ----
  useEffect(
    () =>
      t.onEvent((sid, e) => {
        if (sid != null) dispatchChats({ sid, action: { type: "event", event: e } });
        if (e.type === "turn_running" || e.type === "turn_queued" || e.type === "done") turnEvents.current.set(e.session_id, (turnEvents.current.get(e.session_id) ?? 0) + 1);
        switch (e.type) {
          case "inbox_resolved":
            if (sid !== e.session_id) dispatchChats({ sid: e.session_id, action: { type: "event", event: e } });
            break;
          case "turn_running":
          case "turn_queued":
            setSessions((list) => list && list.map((s) => (s.id === e.session_id ? { ...s, running: true, queued: e.type === "turn_queued" } : s)));
            break;
          case "done":
            turnsEnded.current.set(e.session_id, (turnsEnded.current.get(e.session_id) ?? 0) + 1);
            if (readAgainAtDone.current.delete(e.session_id)) void loadHistory(e.session_id, true);
            setSessions((list) => list && list.map((s) => (s.id === e.session_id ? { ...s, running: false, queued: false, updated_at: Date.now() } : s)));
            // The server may have titled the chat from its first exchange.
            void loadSessions();
            break;
          case "model_prepare":
            setPreparing(e.read < e.total ? { read: e.read, total: e.total } : null);
            break;
          case "task_update":
            if (e.session_id != null) void loadSessions();
            break;
        }
      }),
    [t, loadSessions, loadHistory],
  );

  // ---- actions ----
  const openSession = useCallback(
    (id: number) => {
      setCurrentId(id);
      moveTo("chat");
    },
    [moveTo],
  );

  /**
   * Creates a chat and opens it; a failure is thrown (the worktree form shows it). In a
   * worktree of its own when `worktree` is given: named so, or after the folder when empty.
   */
  const createChat = useCallback(
    async ({ workingDir, worktree }: { workingDir?: string; worktree?: string } = {}) => {
      sessionChanges.current += 1;
      const r = await t.call({ cmd: "create_session", ...(workingDir ? { working_dir: workingDir } : {}), ...(worktree != null ? { worktree } : {}) }).finally(() => {
        sessionChanges.current += 1;
      });
      setSessions((list) => [r.session, ...(list ?? []).filter((s) => s.id !== r.session.id)]);
      // A chat just created has no messages: it opens loaded, with no history request
      // whose reply (computed before the first message) could land after that message's
      // events and wipe them.
      const sid = r.session.id;
      historyRequests.current.set(sid, ++historySeq.current);
      setLoadErrors(({ [sid]: _x, ...rest }) => rest);
      dispatchChats({ sid, remove: true });
      dispatchChats({ sid, reset: true });
      dispatchChats({ sid, action: { type: "history", reply: { cmd: "history", session: r.session, messages: [], tool_calls: [], has_more: false } } });
      openSession(sid);
      return r.session;
    },
    [t, openSession],
  );

  const newChat = useCallback(
    async (workingDir?: string) => {
      try {
        await createChat({ workingDir });
      } catch (e) {
        setSessionsError(`Could not create a chat: ${errorText(e)}`);
      }
    },
    [createChat],
  );

  /** A new chat in a folder the OS picker asks for; only where there is a picker (the desktop app). */
  const newChatInFolder = t.pickFolder
    ? () =>
        void t.pickFolder?.().then((dir) => {
          if (dir) void newChat(dir);
        })
    : undefined;

  // A chat the server made from another — a rewind's (restore_checkpoint's `fork`), an
  // edited message's (edit_message, its turn already running) or "fork from here"'s: it
  // opens by loading its history. The chat it came from stays as it is.
  const openFork = useCallback(
    (s: SessionInfo) => {
      // A sessions list computed before the fork would drop it and close it.
      sessionChanges.current += 1;
      setSessions((list) => [s, ...(list ?? []).filter((x) => x.id !== s.id)]);
      historyRequests.current.set(s.id, ++historySeq.current);
      setLoadErrors(({ [s.id]: _x, ...rest }) => rest);
      dispatchChats({ sid: s.id, remove: true });
      openSession(s.id);
    },
    [openSession],
  );

  // Chats the server made without opening them (a best-of-N trial's): they join the list.
  // A list asked for before they were made is asked for again (it would drop them).
  const addSessions = useCallback((list: SessionInfo[]) => {
    sessionChanges.current += 1;
    const ids = new Set(list.map((s) => s.id));
    setSessions((old) => [...list, ...(old ?? []).filter((s) => !ids.has(s.id))]);
  }, []);

  const rename = useCallback(
    async (id: number, title: string) => {
      await t.call({ cmd: "rename_session", session_id: id, title });
      setSessions((list) => list && list.map((s) => (s.id === id ? { ...s, title } : s)));
    },
    [t],
  );

  const remove = useCallback(
    async (id: number) => {
      sessionChanges.current += 1;
      await t.call({ cmd: "delete_session", session_id: id });
      sessionChanges.current += 1;
      setSessions((list) => list && list.filter((s) => s.id !== id));
      dispatchChats({ sid: id, remove: true });
      historyRequests.current.set(id, ++historySeq.current);
      setLoadErrors(({ [id]: _x, ...rest }) => rest);
      if (currentRef.current === id) setCurrentId(null);
    },
    [t],
  );

  // A chat the engine changed (its model, set from its header): the list keeps the new copy.
  // A list asked for before the change is asked for again (it would undo it).
  const updateSession = useCallback((s: SessionInfo) => {
    sessionChanges.current += 1;
    setSessions((list) => list && list.map((x) => (x.id === s.id ? { ...s, running: x.running, queued: x.queued } : x)));
  }, []);

  const stopCurrent = useCallback(() => {
    if (currentId != null) t.call({ cmd: "stop", session_id: currentId }).catch(() => {});
  }, [t, currentId]);

  const dispatchCurrent = useCallback((action: ChatAction) => currentId != null && dispatchChats({ sid: currentId, action }), [currentId]);

  return {
    sessions,
    sessionsError,
    preparing,
    currentId,
    /** The chat shown: its state (once opened), its list entry, and why its history did not load. */
    current: currentId != null ? chats[currentId] : undefined,
    currentSession: sessions?.find((s) => s.id === currentId),
    currentLoadError: currentId != null ? (loadErrors[currentId] ?? null) : null,
    dispatchCurrent,
    loadSessions,
    loadHistory,
    reloadCurrent,
    openSession,
    newChat,
    createChat,
    newChatInFolder,
    openFork,
    addSessions,
    rename,
    remove,
    updateSession,
    stopCurrent,
  };
}
