// Sessions (search, new, rename inline, delete with confirm) and the main navigation.

import { useEffect, useMemo, useRef, useState } from "react";
import type { SessionInfo } from "../protocol";
import type { AppView } from "../app/context";
import { formatTime } from "../lib/format";
import { AGENTS_SHORTCUT } from "../app/shortcuts";
import { NewWorktreeChat } from "./NewWorktreeChat";
import { ErrorState, Icon, Spinner } from "./ui";

interface Props {
  sessions: SessionInfo[] | null;
  sessionsError: string | null;
  onRetry: () => void;
  currentId: number | null;
  view: AppView;
  inboxCount: number;
  /** Chats whose turn runs or waits for a place (the Agents badge). */
  runningCount?: number;
  onSelect: (id: number) => void;
  onNew: () => void;
  /** A new chat in a folder the OS picker chose (the desktop app only). */
  onNewInFolder?: () => void;
  /** A new chat in a worktree of its own, named so (or after the folder when empty); throws the engine's refusal. */
  onNewInWorktree?: (name: string) => Promise<void>;
  /** Whether the worktree form shows (the palette opens it too). */
  worktreeFormOpen?: boolean;
  onWorktreeForm?: (open: boolean) => void;
  /** Opens the "Best of N" dialog; whether it is open; its button (the focus comes back to it). */
  onBestOf?: () => void;
  bestOfOpen?: boolean;
  bestOfButton?: React.RefObject<HTMLButtonElement | null>;
  onRename: (id: number, title: string) => Promise<void>;
  onDelete: (id: number) => Promise<void>;
  onNav: (v: AppView) => void;
}

export function Sidebar(p: Props) {
  const [query, setQuery] = useState("");
  const worktreeButton = useRef<HTMLButtonElement>(null);
  const filtered = useMemo(() => {
    const list = p.sessions ?? [];
    const q = query.trim().toLowerCase();
    const sorted = [...list].sort((a, b) => b.updated_at - a.updated_at);
    return q ? sorted.filter((s) => (s.title || "Untitled chat").toLowerCase().includes(q) || String(s.id) === q) : sorted;
  }, [p.sessions, query]);

  const nav = (v: AppView, label: string, icon: string, testId: string, shortcut?: string) => (
    <button type="button" className={p.view === v ? "nav-btn active" : "nav-btn"} data-testid={testId} aria-current={p.view === v ? "page" : undefined} title={shortcut ? `${label} (${shortcut})` : label} onClick={() => p.onNav(v)}>
      <Icon name={icon} />
      <span>{label}</span>
      {v === "inbox" && p.inboxCount > 0 && (
        <span className="badge" data-testid="inbox-badge" aria-label={`${p.inboxCount} waiting`}>
          {p.inboxCount}
        </span>
      )}
      {v === "agents" && (p.runningCount ?? 0) > 0 && (
        <span className="badge badge-quiet" data-testid="agents-badge" aria-label={`${p.runningCount} at work`}>
          {p.runningCount}
        </span>
      )}
    </button>
  );

  return (
    <nav className="sidebar" aria-label="Sessions and navigation">
      <div className="brand">Skald</div>
      <div className="nav">
        {nav("chat", "Chat", "chat", "nav-chat")}
        {nav("inbox", "Inbox", "inbox", "nav-inbox", "Ctrl+Shift+I")}
        {nav("agents", "Agents", "agents", "nav-agents", AGENTS_SHORTCUT)}
        {nav("tasks", "Tasks", "tasks", "nav-tasks")}
        {nav("worktrees", "Worktrees", "worktree", "nav-worktrees")}
        {nav("settings", "Settings", "settings", "nav-settings")}
      </div>
      <div className="sessions-head">
        <button type="button" className="btn btn-primary grow" data-testid="new-session" title="New chat (Ctrl+Shift+O)" onClick={p.onNew}>
          <Icon name="plus" /> New chat
        </button>
        {p.onNewInFolder && (
          <button type="button" className="icon-btn" data-testid="new-session-folder" aria-label="New chat in a folder…" title="New chat in a folder…" onClick={p.onNewInFolder}>
            <Icon name="file" />
          </button>
        )}
        {p.onNewInWorktree && (
          <button
            ref={worktreeButton}
            type="button"
            className={p.worktreeFormOpen ? "icon-btn active" : "icon-btn"}
            data-testid="new-session-worktree"
            aria-label="New chat in a worktree…"
            aria-expanded={p.worktreeFormOpen ?? false}
            title="New chat in a worktree…"
            onClick={() => p.onWorktreeForm?.(!p.worktreeFormOpen)}
          >
            <Icon name="worktree" />
          </button>
        )}
        {p.onBestOf && (
          <button
            ref={p.bestOfButton}
            type="button"
            className={p.bestOfOpen ? "icon-btn active" : "icon-btn"}
            data-testid="new-best-of"
            aria-label="Best of N…"
            aria-haspopup="dialog"
            title="Best of N: one prompt to 2–4 agents, each in its own worktree"
            onClick={p.onBestOf}
          >
            <Icon name="bestof" />
          </button>
        )}
      </div>
      {p.onNewInWorktree && p.worktreeFormOpen && (
        <NewWorktreeChat
          onCreate={p.onNewInWorktree}
          onClose={(cancelled) => {
            p.onWorktreeForm?.(false);
            if (cancelled) worktreeButton.current?.focus();
          }}
        />
      )}
      <div className="search">
        <Icon name="search" size={14} />
        <input data-testid="session-search" type="search" aria-label="Search chats" placeholder="Search chats" value={query} onChange={(e) => setQuery(e.target.value)} />
      </div>
      <div className="sessions">
        {p.sessions == null ? (
          p.sessionsError ? <ErrorState message={p.sessionsError} onRetry={p.onRetry} /> : <Spinner label="Loading chats…" />
        ) : (
          <ul data-testid="session-list" role="list" aria-label="Chats">
            {filtered.map((s) => (
              <SessionRow key={s.id} s={s} active={p.view === "chat" && s.id === p.currentId} onSelect={p.onSelect} onRename={p.onRename} onDelete={p.onDelete} />
            ))}
            {filtered.length === 0 && <li className="muted small empty-row">{query ? "No chat matches." : "No chats yet."}</li>}
          </ul>
        )}
      </div>
    </nav>
  );
}

function SessionRow({ s, active, onSelect, onRename, onDelete }: { s: SessionInfo; active: boolean; onSelect: (id: number) => void; onRename: Props["onRename"]; onDelete: Props["onDelete"] }) {
  const [editing, setEditing] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const [title, setTitle] = useState(s.title);
  const [error, setError] = useState<string | null>(null);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (editing) input.current?.select();
  }, [editing]);

  const commit = async () => {
    const tt = title.trim();
    setEditing(false);
    if (tt === "" || tt === s.title) return setTitle(s.title);
    try {
      await onRename(s.id, tt);
      setError(null);
    } catch (e) {
      setTitle(s.title);
      setError(e instanceof Error ? e.message : String(e));
    }
  };

  return (
    <li className={active ? "session active" : "session"} data-testid="session-item" data-session-id={s.id}>
      {editing ? (
        <input
          ref={input}
          className="rename"
          aria-label="Chat title"
          value={title}
          onChange={(e) => setTitle(e.target.value)}
          onBlur={() => void commit()}
          onKeyDown={(e) => {
            if (e.key === "Enter") void commit();
            if (e.key === "Escape") {
              setTitle(s.title);
              setEditing(false);
            }
          }}
        />
      ) : confirming ? (
        <div className="confirm" role="alertdialog" aria-label="Delete chat?">
          <span className="small">Delete “{s.title || "Untitled chat"}”?</span>
          <button type="button" className="btn btn-danger small-btn" autoFocus onClick={() => void onDelete(s.id).catch((e: unknown) => setError(e instanceof Error ? e.message : String(e))).finally(() => setConfirming(false))}>
            Delete
          </button>
          <button type="button" className="btn small-btn" onClick={() => setConfirming(false)}>
            Cancel
          </button>
        </div>
      ) : (
        <>
          <button type="button" className="session-main" aria-current={active ? "page" : undefined} onClick={() => onSelect(s.id)} onDoubleClick={() => setEditing(true)} title={s.working_dir ?? undefined}>
            <span className="session-title">
              {s.queued ? (
                <span className="dot-queued" aria-label="waiting for a free place" title="Waiting for a free place" data-testid="session-queued" />
              ) : (
                s.running && <span className="dot-running" aria-label="working" />
              )}
              {s.title || "Untitled chat"}
            </span>
            <span className="session-meta small muted">
              {s.kind === "background" ? "background · " : ""}
              {s.forked_from != null ? "fork · " : ""}
              {formatTime(s.updated_at)}
            </span>
          </button>
          <span className="session-actions">
            <button type="button" className="icon-btn" aria-label={`Rename ${s.title || "chat"}`} title="Rename" onClick={() => setEditing(true)}>
              <Icon name="edit" size={14} />
            </button>
            <button type="button" className="icon-btn" aria-label={`Delete ${s.title || "chat"}`} title="Delete" onClick={() => setConfirming(true)}>
              <Icon name="trash" size={14} />
            </button>
          </span>
        </>
      )}
      {error && <div className="error-text small">{error}</div>}
    </li>
  );
}
