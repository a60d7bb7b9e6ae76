// The shell: sidebar, the current screen, the viewer pane, the palette, the connection
// banner and global shortcuts. It owns the state shared across screens (sessions, the
// chats' event-fed state, the Inbox) and routes pushed events to it.

import { useCallback, useEffect, useMemo, useReducer, useRef, useState } from "react";
import type { InboxEntry, SessionInfo } from "./protocol";
import type { ConnectionStatus } from "./transport";
import { AppContext, useTransport, type AppActions, type AppView } from "./app/context";
import { chatReducer, emptyChat, type ChatAction, type ChatState } from "./chat/state";
import { errorText } from "./lib/format";
import { applyTheme, loadTheme, saveTheme, type ThemeChoice } from "./lib/theme";
import { Sidebar } from "./components/Sidebar";
import { ChatView, HISTORY_PAGE } from "./components/ChatView";
import { CONTEXT_SHORTCUT } from "./components/ContextView";
import { Palette, type PaletteEntry } from "./components/Palette";
import { EmptyState, Spinner } from "./components/ui";
import { InboxView } from "./screens/InboxView";
import { TasksView } from "./screens/TasksView";
import { SettingsView } from "./screens/SettingsView";
import { Viewer, type ViewerTarget } from "./viewer/Viewer";

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

export function App() {
  const t = useTransport();
  const [status, setStatus] = useState<ConnectionStatus>("connecting");
  const everOpen = useRef(false);
  const [sessions, setSessions] = useState<SessionInfo[] | null>(null);
  const [sessionsError, setSessionsError] = useState<string | null>(null);
  // The default local model reading a new chat's prompt in the background (at start, or
  // when the default changes): a chat sent meanwhile waits for it, and says so.
  const [preparing, setPreparing] = useState<{ read: number; total: number } | null>(null);
  const [currentId, setCurrentId] = useState<number | null>(loadLastSession);
  const [view, setView] = useState<AppView>("chat");
  const [chats, dispatchChats] = useReducer(chatsReducer, {});
  const [loadErrors, setLoadErrors] = useState<Record<number, string>>({});
  const [inbox, setInbox] = useState<InboxEntry[] | null>(null);
  const [inboxError, setInboxError] = useState<string | null>(null);
  /** The Inbox item a clicked notification was about, shown in front. */
  const [focusedInbox, setFocusedInbox] = useState<number | null>(null);
  const [viewerOpen, setViewerOpen] = useState(false);
  const [viewerTarget, setViewerTarget] = useState<ViewerTarget | null>(null);
  const [paletteOpen, setPaletteOpen] = useState(false);
  /** The chat whose context view (the header's AGENTS.md chip's panel) is open. */
  const [contextFor, setContextFor] = useState<number | null>(null);
  const [theme, setTheme] = useState<ThemeChoice>(loadTheme);

  // ---- theme ----
  useEffect(() => {
    applyTheme(theme);
    saveTheme(theme);
    if (theme !== "system" || typeof matchMedia !== "function") return;
    const mq = matchMedia("(prefers-color-scheme: dark)");
    const on = () => applyTheme("system");
    mq.addEventListener("change", on);
    return () => mq.removeEventListener("change", on);
  }, [theme]);

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

  // First start: with no model to talk to, Settings (its provider form) comes first —
  // unless the person has already gone somewhere else.
  const movedRef = useRef(false);
  useEffect(() => {
    let live = true;
    t.call({ cmd: "settings" })
      .then((r) => {
        if (live && r.models.length === 0 && !movedRef.current) setView("settings");
      })
      .catch(() => {
        // The connection banner says what is wrong; the chat screen stays.
      });
    return () => {
      live = false;
    };
  }, [t]);

  const inboxTimer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const loadInbox = useCallback(async () => {
    try {
      const r = await t.call({ cmd: "inbox" });
      setInbox(r.items);
      setInboxError(null);
    } catch (e) {
      setInboxError(errorText(e));
    }
  }, [t]);
  /** Coalesces bursts of inbox events into one reload. */
  const refreshInbox = useCallback(() => {
    if (inboxTimer.current) clearTimeout(inboxTimer.current);
    inboxTimer.current = setTimeout(() => {
      inboxTimer.current = null;
      void loadInbox();
    }, 50);
  }, [loadInbox]);

  // Only a chat's latest history request may set its state: an earlier one's reply or
  // failure, arriving late, would overwrite a newer answer.
  const historySeq = useRef(0);
  const historyRequests = useRef(new Map<number, number>());
  const loadHistory = useCallback(
    async (sid: number) => {
      const n = ++historySeq.current;
      historyRequests.current.set(sid, n);
      const latest = () => historyRequests.current.get(sid) === n;
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
        dispatchChats({ sid, action: { type: "history", reply } });
        setLoadErrors(({ [sid]: _x, ...rest }) => rest);
      } catch (e) {
        if (latest()) setLoadErrors((m) => ({ ...m, [sid]: errorText(e) }));
      }
    },
    [t],
  );

  // Connection: on every (re)open, reload what events may have been missed meanwhile.
  const currentRef = useRef(currentId);
  currentRef.current = currentId;
  useEffect(
    () =>
      t.onStatus((s) => {
        setStatus(s);
        if (s === "open") {
          const reconnect = everOpen.current;
          everOpen.current = true;
          void loadSessions();
          void loadInbox();
          if (reconnect && currentRef.current != null) void loadHistory(currentRef.current);
        }
      }),
    [t, loadSessions, loadInbox, loadHistory],
  );

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
  const openViewer = useCallback((path: string, line?: number) => {
    setViewerTarget({ path, line, nonce: Date.now() + Math.random() });
    setViewerOpen(true);
  }, []);

  useEffect(
    () =>
      t.onEvent((sid, e) => {
        if (sid != null) dispatchChats({ sid, action: { type: "event", event: e } });
        switch (e.type) {
          case "inbox_requested":
            refreshInbox();
            break;
          case "inbox_resolved":
            if (sid !== e.session_id) dispatchChats({ sid: e.session_id, action: { type: "event", event: e } });
            refreshInbox();
            break;
          case "turn_running":
            setSessions((list) => list && list.map((s) => (s.id === e.session_id ? { ...s, running: true } : s)));
            break;
          case "done":
            setSessions((list) => list && list.map((s) => (s.id === e.session_id ? { ...s, running: false, updated_at: Date.now() } : s)));
            // The server may have titled the chat from its first exchange.
            void loadSessions();
            break;
          case "open_file":
            openViewer(e.path);
            break;
          case "model_prepare":
            setPreparing(e.read < e.total ? { read: e.read, total: e.total } : null);
            break;
          case "task_update":
            if (e.session_id != null) void loadSessions();
            break;
        }
      }),
    [t, refreshInbox, loadSessions, openViewer],
  );

  // ---- actions ----
  const openSession = useCallback((id: number) => {
    movedRef.current = true;
    setCurrentId(id);
    setView("chat");
  }, []);

  const newChat = useCallback(async (workingDir?: string) => {
    try {
      sessionChanges.current += 1;
      const r = await t.call(workingDir ? { cmd: "create_session", working_dir: workingDir } : { cmd: "create_session" });
      sessionChanges.current += 1;
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
    } catch (e) {
      setSessionsError(`Could not create a chat: ${errorText(e)}`);
    }
  }, [t, openSession]);

  // A rewind's new chat (restore_checkpoint's `fork`): the server made it with the
  // conversation before the call, so it opens by loading its history. The chat it came
  // from stays as it is.
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

  const stopCurrent = useCallback(() => {
    if (currentId != null) t.call({ cmd: "stop", session_id: currentId }).catch(() => {});
  }, [t, currentId]);

  const toggleViewer = useCallback(() => setViewerOpen((o) => !o), []);

  // The context panel belongs to the chat it was opened in, and closes with the screen.
  useEffect(() => {
    if (view !== "chat") setContextFor(null);
    else setContextFor((f) => (f === currentId ? f : null));
  }, [currentId, view]);
  const showContext = useCallback(() => {
    setView("chat");
    setContextFor(currentId);
  }, [currentId]);
  const onContextOpen = useCallback((open: boolean) => setContextFor(open ? currentId : null), [currentId]);

  // A clicked notification (desktop app): its item, in the Inbox.
  useEffect(
    () =>
      t.onOpen?.((target) => {
        if (target.what !== "inbox_item") return;
        movedRef.current = true;
        setView("inbox");
        setFocusedInbox(target.inbox_id);
        void loadInbox();
      }),
    [t, loadInbox],
  );

  // ---- keyboard ----
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const mod = e.ctrlKey || e.metaKey;
      if (!mod) return;
      const k = e.key.toLowerCase();
      if (k === "k" && !e.shiftKey) {
        e.preventDefault();
        setPaletteOpen((o) => !o);
      } else if (e.shiftKey && k === "o") {
        e.preventDefault();
        void newChat();
      } else if (e.shiftKey && k === "i") {
        e.preventDefault();
        setView("inbox");
      } else if (e.shiftKey && k === "e") {
        e.preventDefault();
        toggleViewer();
      } else if (e.shiftKey && k === "x") {
        e.preventDefault();
        if (view === "chat") setContextFor((f) => (f != null && f === currentId ? null : currentId));
        else showContext();
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [newChat, toggleViewer, view, currentId, showContext]);

  const paletteEntries = useMemo<PaletteEntry[]>(() => {
    const actions: PaletteEntry[] = [
      { id: "new", label: "New chat", hint: "Ctrl+Shift+O", run: () => void newChat() },
      { id: "inbox", label: "Go to Inbox", hint: "Ctrl+Shift+I", run: () => setView("inbox") },
      { id: "chat", label: "Go to Chat", run: () => setView("chat") },
      { id: "tasks", label: "Go to Tasks", run: () => setView("tasks") },
      { id: "settings", label: "Go to Settings", run: () => setView("settings") },
      { id: "viewer", label: "Toggle viewer", hint: "Ctrl+Shift+E", run: toggleViewer },
      { id: "context", label: "Show the chat's context (AGENTS.md, skills)", hint: CONTEXT_SHORTCUT, run: showContext },
      { id: "stop", label: "Stop the running turn", hint: "Esc", run: stopCurrent },
      { id: "theme-light", label: "Theme: light", run: () => setTheme("light") },
      { id: "theme-dark", label: "Theme: dark", run: () => setTheme("dark") },
      { id: "theme-system", label: "Theme: follow the system", run: () => setTheme("system") },
    ];
    const chatsList = (sessions ?? []).map<PaletteEntry>((s) => ({
      id: `s${s.id}`,
      label: s.title || `Untitled chat ${s.id}`,
      hint: "chat",
      run: () => openSession(s.id),
    }));
    return [...actions, ...chatsList];
  }, [sessions, newChat, toggleViewer, stopCurrent, openSession, showContext]);

  const actions = useMemo<AppActions>(
    () => ({
      openSession,
      openFork,
      openViewer,
      go: setView,
      sessions: sessions ?? [],
      inbox: inbox ?? [],
      refreshInbox,
      currentSessionId: currentId,
    }),
    [openSession, openFork, openViewer, sessions, inbox, refreshInbox, currentId],
  );

  const current = currentId != null ? chats[currentId] : undefined;
  const currentSession = sessions?.find((s) => s.id === currentId);
  const dispatchCurrent = useCallback((action: ChatAction) => currentId != null && dispatchChats({ sid: currentId, action }), [currentId]);
  const showBanner = status !== "open" && (everOpen.current || status === "closed");

  return (
    <AppContext.Provider value={actions}>
      <div className={viewerOpen ? "app with-viewer" : "app"}>
        {showBanner && (
          <div className="connection-banner" data-testid="connection-banner" role="alert">
            Disconnected from Skald — reconnecting…
          </div>
        )}
        <Sidebar
          sessions={sessions}
          sessionsError={sessionsError}
          onRetry={() => void loadSessions()}
          currentId={currentId}
          view={view}
          inboxCount={inbox?.length ?? 0}
          onSelect={openSession}
          onNew={() => void newChat()}
          onNewInFolder={
            t.pickFolder
              ? () =>
                  void t.pickFolder?.().then((dir) => {
                    if (dir) void newChat(dir);
                  })
              : undefined
          }
          onRename={rename}
          onDelete={remove}
          onNav={setView}
        />
        <main className="main">
          {view === "chat" &&
            (currentId != null && current ? (
              <ChatView
                key={currentId}
                session={currentSession}
                sessionId={currentId}
                chat={current}
                dispatch={dispatchCurrent}
                loadError={loadErrors[currentId] ?? null}
                onRetryLoad={() => void loadHistory(currentId)}
                viewerOpen={viewerOpen}
                onToggleViewer={toggleViewer}
                contextOpen={contextFor === currentId}
                onContextOpen={onContextOpen}
                preparing={preparing}
              />
            ) : sessions && sessions.length === 0 ? (
              <EmptyState title="No chats yet">
                <button type="button" className="btn btn-primary" onClick={() => void newChat()}>
                  Start a new chat
                </button>
                <div className="small">or press Ctrl+Shift+O</div>
              </EmptyState>
            ) : (
              <Spinner label={sessions ? "Opening chat…" : "Connecting to Skald…"} />
            ))}
          {view === "inbox" && <InboxView items={inbox} error={inboxError} focusedId={focusedInbox} onRetry={() => void loadInbox()} />}
          {view === "tasks" && <TasksView />}
          {view === "settings" && <SettingsView theme={theme} onTheme={setTheme} />}
        </main>
        {viewerOpen && <Viewer target={viewerTarget} sessionId={currentId} onOpen={openViewer} onClose={() => setViewerOpen(false)} />}
        {paletteOpen && <Palette entries={paletteEntries} onClose={() => setPaletteOpen(false)} />}
      </div>
    </AppContext.Provider>
  );
}
