// One session's chat: the virtualised message list, pending Inbox items, the background
// processes, the todo checklist and the composer.

import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from "react";
import { useVirtualizer } from "@tanstack/react-virtual";
import type { CheckpointInfo, InboxEntry, SessionInfo, TodoItem, TodoStatus } from "../protocol";
import { blockedToReturn, latestTodos, staleAssistants, type ChatAction, type ChatState, type Item } from "../chat/state";
import { useApp, useTransport } from "../app/context";
import { useChatModel } from "../app/useChatModel";
import { useChatMode } from "../app/useChatMode";
import { useChatSummary } from "../app/useChatSummary";
import { foldUnderSummary } from "../chat/summary";
import { escapeHtml } from "../lib/highlight";
import { dragHasFiles, filesOf } from "../lib/images";
import { onMarkdownClick } from "../lib/links";
import { ChatRow, ExpandedContext, InsertMentionContext, type Expanded } from "./ChatItems";
import { CheckpointActions } from "./Checkpoints";
import { Composer, type AttachFiles, type InsertText } from "./Composer";
import { ContextMeter } from "./ContextMeter";
import { ContextButton } from "./ContextView";
import { InboxCard } from "./InboxCards";
import { ModelPicker } from "./ModelPicker";
import { ModeToggle } from "./ModeToggle";
import { ForkInfo } from "./ForkInfo";
import { MessageActionsContext, storedMessageId, type MessageActionsValue } from "./MessageActions";
import { EXIT_PLAN_MODE } from "./PlanView";
import { ProcessesPanel } from "./Processes";
import { SandboxBadge } from "./SandboxBadge";
import { SummaryCard } from "./SummaryCard";
import { UsageChips } from "./Usage";
import { WorktreeBadge } from "./WorktreeBadge";
import { ChatChangesReview } from "./ChatChangesReview";
import { hasOwnChanges } from "../lib/checkpoints";
import { worktreeOfChat } from "../lib/worktrees";
import { EmptyState, ErrorState, Icon, Spinner } from "./ui";

export const HISTORY_PAGE = 500;
/** How often the streaming answer is re-rendered by the server while tokens arrive. */
const RENDER_THROTTLE_MS = 150;

interface Props {
  session: SessionInfo | undefined;
  sessionId: number;
  chat: ChatState;
  dispatch: (a: ChatAction) => void;
  loadError: string | null;
  onRetryLoad: () => void;
  viewerOpen: boolean;
  onToggleViewer: () => void;
  /** The context view's panel (the shell opens it from its shortcut and the palette). */
  contextOpen?: boolean;
  onContextOpen?: (open: boolean) => void;
  /** The default local model preparing for chats, which a turn sent now waits for. */
  preparing?: { read: number; total: number } | null;
  /** The chat as the engine answered a change of it (its model): the sessions list keeps it. */
  onSession?: (s: SessionInfo) => void;
}

export function ChatView({ session, sessionId, chat, dispatch, loadError, onRetryLoad, viewerOpen, onToggleViewer, contextOpen, onContextOpen, preparing, onSession }: Props) {
  const t = useTransport();
  const { inbox, worktrees } = useApp();
  useMarkdownRendering(chat.items, sessionId, dispatch);
  // A chat in the person's own folder with changes of its own: they can be reviewed and
  // taken back hunk by hunk (a chat in a worktree has its worktree's review instead).
  const [reviewing, setReviewing] = useState(false);
  const inWorktree = worktreeOfChat(worktrees, sessionId) != null;
  const canReview = !inWorktree && hasOwnChanges(chat.checkpoints);
  const reviewButton = useRef<HTMLButtonElement>(null);
  // The chat's model and effort: the header's picker and the composer's /model and /effort.
  const model = useChatModel(sessionId, session, onSession);
  // Act or plan: the header's toggle and the composer's Shift+Tab, /plan and /act.
  const mode = useChatMode(sessionId, session, onSession);
  // Its latest compaction, read again when one is made or undone.
  const refreshSummary = useChatSummary(sessionId, dispatch);
  // An approved plan switched the chat to act on the server: the header follows as soon as
  // the call is done (the turn goes on, acting).
  const plansDone = useMemo(() => chat.items.filter((it) => it.kind === "tool" && it.tool.name === EXIT_PLAN_MODE && it.tool.status === "done").length, [chat.items]);
  const plansSeen = useRef(plansDone);
  const refreshMode = mode.refresh;
  useEffect(() => {
    if (plansDone > plansSeen.current) refreshMode();
    plansSeen.current = plansDone;
  }, [plansDone, refreshMode]);

  const todos = useMemo(() => latestTodos(chat.items), [chat.items]);
  const blocked = useMemo(() => blockedToReturn(chat.items), [chat.items]);
  // Inbox items of this session whose tool card is not in sight (elicitations, items
  // inside collapsed sub-agent groups, calls older than the loaded history).
  const loose = useMemo(() => {
    const visible = new Set<string>();
    const walk = (list: Item[]) => {
      for (const it of list) {
        if (it.kind === "tool") visible.add(it.tool.id);
        else if (it.kind === "agent" && it.expanded) walk(it.children);
      }
    };
    walk(chat.items);
    return inbox.filter((e) => e.session_id === sessionId && !(e.tool_call_id && visible.has(e.tool_call_id)));
  }, [inbox, chat.items, sessionId]);

  // A resource link in a tool's result puts its mention into the composer.
  const insertRef = useRef<InsertText | null>(null);
  const insertMention = useCallback<InsertText>((text) => insertRef.current?.(text), []);
  // Images dropped anywhere on the chat are attached to the message being written.
  const attachRef = useRef<AttachFiles | null>(null);
  const drop = useFileDrop((files) => attachRef.current?.(files));

  const [loadingOlder, setLoadingOlder] = useState(false);
  const loadOlder = useCallback(async () => {
    if (loadingOlder || !chat.hasMore || chat.oldestId == null) return;
    setLoadingOlder(true);
    try {
      const reply = await t.call({ cmd: "history", session_id: sessionId, before: chat.oldestId, limit: HISTORY_PAGE });
      dispatch({ type: "older", reply });
    } catch {
      // The "Load earlier" button stays and can be pressed again.
    } finally {
      setLoadingOlder(false);
    }
  }, [t, sessionId, chat.hasMore, chat.oldestId, loadingOlder, dispatch]);

  if (reviewing) {
    return (
      <ChatChangesReview
        sessionId={sessionId}
        running={chat.running}
        onBack={() => {
          setReviewing(false);
          requestAnimationFrame(() => reviewButton.current?.focus());
        }}
      />
    );
  }

  return (
    <section className={`chat chat-${mode.mode}${drop.over ? " drop-over" : ""}`} aria-label={session?.title ?? "Chat"} {...drop.handlers}>
      {drop.over && (
        <div className="drop-hint" data-testid="drop-hint" aria-hidden="true">
          Drop images to attach them
        </div>
      )}
      <header className="chat-header">
        <div className="chat-title">
          <h1>{session?.title || "Untitled chat"}</h1>
          {session?.working_dir && <span className="muted small" title={session.working_dir}>{session.working_dir}</span>}
          {session && <ForkInfo session={session} />}
        </div>
        <WorktreeBadge sessionId={sessionId} />
        {canReview && (
          <button
            ref={reviewButton}
            type="button"
            className="btn small-btn changes-btn"
            data-testid="chat-changes-open"
            title="What this chat changed in your folder, to take back hunk by hunk"
            onClick={() => setReviewing(true)}
          >
            <Icon name="undo" size={12} /> Review changes
          </button>
        )}
        <ModelPicker chat={model} />
        <ModeToggle control={mode} />
        <ContextMeter key={`meter-${sessionId}`} sessionId={sessionId} summary={chat.summary} onUndone={refreshSummary} />
        <UsageChips sessionId={sessionId} running={chat.running} />
        <ContextButton key={`context-${sessionId}`} sessionId={sessionId} open={contextOpen} onOpenChange={onContextOpen} />
        <SandboxBadge key={sessionId} sessionId={sessionId} />
        {chat.running &&
          (chat.queue ? (
            <span className="chip chip-queued" data-testid="chat-state" title="Its turn waits for a free place">
              queued
            </span>
          ) : (
            <span className="chip chip-running" data-testid="chat-state">
              working
            </span>
          ))}
        <button type="button" className={viewerOpen ? "icon-btn active" : "icon-btn"} aria-label="Toggle viewer (Ctrl+Shift+E)" aria-pressed={viewerOpen} title="Toggle viewer (Ctrl+Shift+E)" onClick={onToggleViewer}>
          <Icon name="panel" />
        </button>
      </header>
      {loadError && !chat.loaded ? (
        <ErrorState message={`Could not load this chat: ${loadError}`} onRetry={onRetryLoad} />
      ) : (
        <InsertMentionContext.Provider value={insertMention}>
          <MessageList chat={chat} dispatch={dispatch} loadOlder={loadOlder} loadingOlder={loadingOlder} preparing={preparing} onSummaryUndone={refreshSummary} />
        </InsertMentionContext.Provider>
      )}
      {loose.length > 0 && (
        <div className="pending-area" aria-label="Waiting for you">
          {loose.map((e: InboxEntry) => (
            <InboxCard key={e.id} entry={e} />
          ))}
        </div>
      )}
      <ProcessesPanel key={`processes-${sessionId}`} sessionId={sessionId} />
      {todos && todos.length > 0 && <TodoList todos={todos} />}
      <Composer sessionId={sessionId} running={chat.running} dispatch={dispatch} takeFocus={!contextOpen} blocked={blocked} insertRef={insertRef} attachRef={attachRef} model={model} mode={mode} />
    </section>
  );
}

/**
 * Files dragged over the chat: `over` while they are (the chat shows where to drop), and
 * the dropped ones to `onFiles`. Other drags (text, links) are left to the browser.
 */
function useFileDrop(onFiles: (files: File[]) => void) {
  const [over, setOver] = useState(false);
  // dragenter and dragleave come for every child crossed: counted, so leaving a child is
  // not leaving the chat.
  const depth = useRef(0);
  const handlers = {
    onDragEnter: (e: React.DragEvent) => {
      if (!dragHasFiles(e.dataTransfer)) return;
      e.preventDefault();
      depth.current++;
      setOver(true);
    },
    onDragOver: (e: React.DragEvent) => {
      if (!dragHasFiles(e.dataTransfer)) return;
      e.preventDefault();
      e.dataTransfer.dropEffect = "copy";
    },
    onDragLeave: (e: React.DragEvent) => {
      if (!dragHasFiles(e.dataTransfer)) return;
      depth.current = Math.max(0, depth.current - 1);
      if (depth.current === 0) setOver(false);
    },
    onDrop: (e: React.DragEvent) => {
      if (!dragHasFiles(e.dataTransfer)) return;
      e.preventDefault();
      depth.current = 0;
      setOver(false);
      const files = filesOf(e.dataTransfer);
      if (files.length > 0) onFiles(files);
    },
  };
  return { over, handlers };
}

/** Keeps assistant HTML in step with its text: throttled while streaming, once after. */
function useMarkdownRendering(items: Item[], sessionId: number, dispatch: (a: ChatAction) => void) {
  const t = useTransport();
  const itemsRef = useRef(items);
  itemsRef.current = items;
  const jobs = useRef(new Map<string, { busy: boolean; timer: ReturnType<typeof setTimeout> | null; last: number }>());
  useEffect(() => {
    for (const it of staleAssistants(items)) {
      const job = jobs.current.get(it.key) ?? { busy: false, timer: null, last: 0 };
      jobs.current.set(it.key, job);
      if (job.busy || job.timer) continue;
      const wait = it.streaming ? Math.max(0, RENDER_THROTTLE_MS - (Date.now() - job.last)) : 0;
      job.timer = setTimeout(() => {
        job.timer = null;
        const current = staleAssistants(itemsRef.current).find((x) => x.key === it.key);
        if (!current) return;
        const text = current.text;
        job.busy = true;
        job.last = Date.now();
        t.call({ cmd: "render_markdown", text, session_id: sessionId }).then(
          (r) => {
            job.busy = false;
            dispatch({ type: "html", key: it.key, html: r.html, forText: text });
          },
          () => {
            job.busy = false;
            // Without the server's renderer, show the text as it is rather than retry forever.
            dispatch({ type: "html", key: it.key, html: `<p style="white-space:pre-wrap">${escapeHtml(text)}</p>`, forText: text });
          },
        );
      }, wait);
    }
  }, [items, sessionId, t, dispatch]);
  useEffect(() => {
    const map = jobs.current;
    return () => {
      for (const j of map.values()) if (j.timer) clearTimeout(j.timer);
      map.clear();
    };
  }, [sessionId]);
}

function MessageList({
  chat,
  dispatch,
  loadOlder,
  loadingOlder,
  preparing,
  onSummaryUndone,
}: {
  chat: ChatState;
  dispatch: (a: ChatAction) => void;
  loadOlder: () => void;
  loadingOlder: boolean;
  preparing?: { read: number; total: number } | null;
  onSummaryUndone: () => void | Promise<void>;
}) {
  const { openViewer, openFork, go } = useApp();
  const scrollRef = useRef<HTMLDivElement>(null);
  const items = chat.items;
  const last = items[items.length - 1];
  const showWorking = chat.running && !(last && last.kind === "assistant" && last.streaming);
  // A compacted chat: the turns its summary stands for fold under the summary's card.
  const [openSummary, setOpenSummary] = useState<string | null>(null);
  const rows = useMemo(() => foldUnderSummary(items, chat.summary, chat.sessionId, openSummary), [items, chat.summary, chat.sessionId, openSummary]);
  // Older pages would only go into the fold: they are loaded once it is opened.
  const hasMore = chat.hasMore && !(rows.folded > 0 && !rows.open);
  const count = rows.count + (showWorking ? 1 : 0);
  const virtualizer = useVirtualizer({
    count,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => 72,
    overscan: 6,
    getItemKey: (i) => rows.keyAt(i) ?? "working",
  });

  // Follow the bottom while new content arrives, unless the user scrolled up to read.
  const stick = useRef(true);
  const onScroll = () => {
    const el = scrollRef.current;
    if (!el) return;
    stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < 80;
    prev.current.top = el.scrollTop;
    if (el.scrollTop < 300 && hasMore && !loadingOlder) loadOlder();
  };
  const total = virtualizer.getTotalSize();
  // Keep the reading position when older messages are prepended.
  const firstKey = items[0]?.key;
  const prev = useRef<{ firstKey: string | undefined; total: number; top: number }>({ firstKey, total, top: 0 });
  useLayoutEffect(() => {
    const el = scrollRef.current;
    if (!el) return;
    const p = prev.current;
    if (p.firstKey !== undefined && firstKey !== p.firstKey && !stick.current) {
      el.scrollTop = p.top + (total - p.total);
    } else if (stick.current) {
      el.scrollTop = el.scrollHeight;
    }
    prev.current = { firstKey, total, top: el.scrollTop };
  }, [items, total, firstKey]);
  // A newly opened chat starts at the bottom.
  useEffect(() => {
    stick.current = true;
  }, [chat.sessionId]);

  const [expandedVersion, setExpandedVersion] = useState(0);
  const expandedSet = useRef(new Set<string>());
  const expanded = useMemo<Expanded>(
    () => ({
      has: (k) => expandedSet.current.has(k),
      toggle: (k) => {
        if (!expandedSet.current.delete(k)) expandedSet.current.add(k);
        setExpandedVersion((v) => v + 1);
      },
    }),
    // A new object on every toggle so rows re-render.
    [expandedVersion],
  );
  const onToggleGroup = useCallback((key: string) => dispatch({ type: "toggle_group", key }), [dispatch]);
  // A restore's reply goes into the chat at once (its event may come later, or be missed);
  // a rewind's new chat opens in its place.
  const checkpointActions = useMemo(
    () => ({ restored: (checkpoint: CheckpointInfo) => dispatch({ type: "event", event: { type: "checkpoint", checkpoint } }), forked: openFork }),
    [dispatch, openFork],
  );

  // Edit and resend, and fork from here: each makes a new chat (the server's), opened in
  // this one's place; this one stays as it is.
  const t = useTransport();
  const [editing, setEditing] = useState<string | null>(null);
  const sid = chat.sessionId;
  const messageActions = useMemo<MessageActionsValue>(
    () => ({
      editing,
      setEditing,
      edit: async (item, text) => {
        if (item.id == null) throw new Error("this message is not stored yet");
        const r = await t.call({ cmd: "edit_message", session_id: sid, message_id: item.id, text, ...(item.images?.length ? { images: item.images } : {}) });
        setEditing(null);
        openFork(r.session);
      },
      fork: async (item) => {
        const id = await storedMessageId(t, sid, item);
        const r = await t.call({ cmd: "fork_session", session_id: sid, message_id: id });
        openFork(r.session);
      },
    }),
    [editing, t, sid, openFork],
  );

  // Links in rendered Markdown: files open in the viewer, other sites in a new tab.
  const onClick = (e: React.MouseEvent) => onMarkdownClick(e, openViewer);

  return (
    <div ref={scrollRef} className="message-scroll" data-testid="message-list" data-loaded={chat.loaded ? "1" : undefined} role="log" aria-live="polite" aria-busy={!chat.loaded} onScroll={onScroll} onClick={onClick}>
      {!chat.loaded ? (
        <Spinner label="Loading chat…" />
      ) : items.length === 0 && !chat.running ? (
        <EmptyState title="Start the conversation">Ask the agent anything. Enter sends, Shift+Enter starts a new line.</EmptyState>
      ) : (
        <>
          {hasMore && (
            <div className="load-older">
              <button type="button" className="btn" disabled={loadingOlder} onClick={loadOlder}>
                {loadingOlder ? "Loading…" : "Load earlier messages"}
              </button>
            </div>
          )}
          <ExpandedContext.Provider value={expanded}>
            <MessageActionsContext.Provider value={messageActions}>
            <CheckpointActions.Provider value={checkpointActions}>
              <div className="virtual-inner" style={{ height: total }}>
                {virtualizer.getVirtualItems().map((v) => {
                  const row = rows.at(v.index);
                  return (
                    <div
                      key={v.key}
                      data-index={v.index}
                      ref={virtualizer.measureElement}
                      className={row?.kind === "item" && row.folded ? "virtual-row folded" : "virtual-row"}
                      style={{ transform: `translateY(${v.start}px)` }}
                    >
                      {row?.kind === "summary" ? (
                        <SummaryCard
                          sessionId={chat.sessionId}
                          summary={row.summary}
                          messages={row.messages}
                          more={chat.hasMore}
                          open={row.open}
                          onToggle={() => {
                            // The card stays where it is, the turns unfolding under it.
                            stick.current = false;
                            setOpenSummary(row.open ? null : row.key);
                          }}
                          onUndone={onSummaryUndone}
                        />
                      ) : row ? (
                        <ChatRow item={row.item} onToggleGroup={onToggleGroup} />
                      ) : chat.queue ? (
                        <QueueNotice ahead={chat.queue.ahead} onSettings={() => openAgentsSettings(go)} />
                      ) : (
                        <div className="working" role="status">
                          <span className="dots" aria-hidden="true">
                            <i />
                            <i />
                            <i />
                          </span>
                          {chat.reading
                            ? `Reading the prompt… ${Math.floor((100 * chat.reading.read) / chat.reading.total)}%`
                            : preparing
                              ? `Preparing the model for chats… ${Math.floor((100 * preparing.read) / preparing.total)}%`
                              : "The agent is working…"}
                        </div>
                      )}
                    </div>
                  );
                })}
              </div>
            </CheckpointActions.Provider>
            </MessageActionsContext.Provider>
          </ExpandedContext.Provider>
        </>
      )}
    </div>
  );
}

/** "next in line", "2 ahead"; nothing when not known. */
export function aheadText(ahead: number | null): string {
  if (ahead == null) return "";
  return ahead <= 0 ? "next in line" : `${ahead} ahead`;
}

/** Settings, scrolled to its Agents section (how many agents run at once). */
export function openAgentsSettings(go: (v: "settings") => void) {
  go("settings");
  setTimeout(() => document.getElementById("s-agents")?.scrollIntoView({ block: "start" }), 0);
}

/**
 * The turn waits for a place among the agents that run at once (docs/board.md, "Agents at
 * once") until `turn_running` or `done`; Stop takes its message back.
 */
function QueueNotice({ ahead, onSettings }: { ahead: number | null; onSettings: () => void }) {
  const where = aheadText(ahead);
  return (
    <div className="queue-notice" role="status" data-testid="queue-notice" data-ahead={ahead ?? undefined}>
      <span className="queue-notice-dot" aria-hidden="true" />
      <div>
        <strong data-testid="queue-notice-text">Waiting for a free place{where ? ` — ${where}` : ""}</strong>
        <div className="small muted">
          As many agents as allowed already run; this one starts when one of them ends. Stop takes the message back.{" "}
          <button type="button" className="link" data-testid="queue-settings" onClick={onSettings}>
            Settings → Agents
          </button>{" "}
          sets how many run at once.
        </div>
      </div>
    </div>
  );
}

/** The box in front of a todo, and its status in words for screen readers. */
const TODO_MARK: Record<TodoStatus, { box: string; words: string }> = {
  pending: { box: "", words: "pending" },
  in_progress: { box: "▸", words: "in progress" },
  completed: { box: "✓", words: "completed" },
};

function TodoList({ todos }: { todos: TodoItem[] }) {
  const [open, setOpen] = useState(true);
  const done = todos.filter((t) => t.status === "completed").length;
  return (
    <div className="todos">
      <button type="button" className="todos-head" aria-expanded={open} onClick={() => setOpen(!open)}>
        <span className={open ? "chev open" : "chev"}>
          <Icon name="chevron" size={12} />
        </span>
        Plan <span className="muted small">{done}/{todos.length} done</span>
      </button>
      {open && (
        <ul className="todo-list" aria-label="The agent's plan">
          {todos.map((t, i) => (
            <li key={i} className={`todo todo-${t.status}`}>
              <span className="todo-box" aria-hidden="true">
                {TODO_MARK[t.status].box}
              </span>
              <span>{t.content}</span>
              <span className="sr-only">({TODO_MARK[t.status].words})</span>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
