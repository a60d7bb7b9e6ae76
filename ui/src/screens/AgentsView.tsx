// The Agents screen (docs/board.md): every chat and background run, one row each, with
// its state, where it works, how long it has worked (ticking while it works), its tokens
// and cost, what it changed and the start of its last answer. Read with `board`
// (app/useBoard.ts). Keys: ↑/↓ or j/k move, Home/End go to the first and last, Enter
// opens the chat — as a click on a row does. Filters: All, Active (queued, working,
// waiting), Finished (done, failed, stopped, interrupted). Titles, folders and messages
// are the agents' data: rendered as text, escaped.

import { useEffect, useId, useMemo, useRef, useState } from "react";
import type { BoardAgent } from "../protocol";
import { useApp } from "../app/context";
import { useBoard } from "../app/useBoard";
import {
  agentTitle,
  changesText,
  changesTitle,
  costText,
  costTitle,
  filterAgents,
  filterCounts,
  formatDuration,
  isTicking,
  oneLine,
  STATE_INFO,
  stateText,
  tokensText,
  whereText,
  workedMs,
  type BoardFilter,
} from "../lib/board";
import { escapeControlsInline } from "../lib/visible";
import { VisibleText } from "../components/Arguments";
import { EmptyState, ErrorState, Icon, Spinner } from "../components/ui";

const FILTERS: { id: BoardFilter; label: string; empty: string }[] = [
  { id: "all", label: "All", empty: "" },
  { id: "active", label: "Active", empty: "No agent is working, waiting or queued right now." },
  { id: "finished", label: "Finished", empty: "No agent has finished a turn yet." },
];

/** Re-renders every second while `on`: a running turn's time worked ticks. */
function useNow(on: boolean): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!on) return;
    setNow(Date.now());
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [on]);
  return on ? now : Date.now();
}

export function AgentsView() {
  const board = useBoard();
  const { openSession } = useApp();
  const [filter, setFilter] = useState<BoardFilter>("all");
  const [selected, setSelected] = useState<number | null>(null);
  const agents = board.agents;
  const shown = useMemo(() => filterAgents(agents ?? [], filter), [agents, filter]);
  const counts = useMemo(() => filterCounts(agents ?? []), [agents]);
  const now = useNow(shown.some(isTicking));

  // The selection follows its agent across reads (the order changes as agents work);
  // when its agent is not shown, the first row is selected.
  const found = shown.findIndex((a) => a.session_id === selected);
  const index = found >= 0 ? found : 0;
  const current = shown[index];
  // Pinned once shown, so a read that reorders the rows does not move it.
  const fallback = found < 0 ? current?.session_id : undefined;
  useEffect(() => {
    if (fallback != null) setSelected(fallback);
  }, [fallback]);

  const ids = useId();
  const rowId = (a: BoardAgent) => `${ids}-agent-${a.session_id}`;
  const listRef = useRef<HTMLUListElement>(null);
  // The list has the focus once the agents are first shown: the keys work at once.
  const focusedOnce = useRef(false);
  useEffect(() => {
    if (focusedOnce.current || agents == null) return;
    focusedOnce.current = true;
    listRef.current?.focus();
  }, [agents]);

  const select = (i: number) => {
    const a = shown[Math.max(0, Math.min(shown.length - 1, i))];
    if (!a) return;
    setSelected(a.session_id);
    document.getElementById(rowId(a))?.scrollIntoView({ block: "nearest" });
  };
  const open = (a: BoardAgent) => {
    setSelected(a.session_id);
    openSession(a.session_id);
  };
  const onKeyDown = (e: React.KeyboardEvent) => {
    if (e.ctrlKey || e.metaKey || e.altKey || shown.length === 0) return;
    const moves: Record<string, () => number> = {
      ArrowDown: () => index + 1,
      j: () => index + 1,
      ArrowUp: () => index - 1,
      k: () => index - 1,
      Home: () => 0,
      End: () => shown.length - 1,
      PageDown: () => index + 10,
      PageUp: () => index - 10,
    };
    const move = moves[e.key];
    if (move) {
      e.preventDefault();
      select(move());
    } else if (e.key === "Enter" && current) {
      e.preventDefault();
      open(current);
    }
  };

  const emptyFilter = FILTERS.find((f) => f.id === filter)!.empty;
  return (
    <section className="screen" aria-labelledby="agents-h" data-testid="agents-view">
      <header className="screen-header">
        <h1 id="agents-h">Agents</h1>
        <div className="board-filters" role="group" aria-label="Show">
          {FILTERS.map((f) => (
            <button
              key={f.id}
              type="button"
              className={filter === f.id ? "filter-chip active" : "filter-chip"}
              data-testid={`board-filter-${f.id}`}
              aria-pressed={filter === f.id}
              onClick={() => setFilter(f.id)}
            >
              {f.label} <span className="filter-count">{counts[f.id]}</span>
            </button>
          ))}
        </div>
        <button type="button" className="icon-btn grow-right" aria-label="Refresh" title="Refresh" data-testid="board-refresh" onClick={board.reload}>
          <Icon name="refresh" />
        </button>
      </header>
      <div className="screen-body board-body">
        <p className="small muted board-help" data-testid="board-help">
          Every chat and background run, the most recently active first. Keys: <kbd>↑</kbd>/<kbd>↓</kbd> or <kbd>j</kbd>/<kbd>k</kbd> move, <kbd>Home</kbd>/<kbd>End</kbd>,{" "}
          <kbd>Enter</kbd> opens the chat. Settings → Agents sets how many run at once.
        </p>
        {agents == null ? (
          board.error ? <ErrorState message={`Could not read the agents: ${board.error}`} onRetry={board.reload} testId="board-error" /> : <Spinner label="Reading the agents…" />
        ) : (
          <>
            {board.error && (
              <div className="error-text small" role="alert" data-testid="board-error">
                Could not refresh: <VisibleText text={board.error} inline />
              </div>
            )}
            {agents.length === 0 ? (
              <EmptyState title="No agents yet">Start a chat, and it shows up here with what it is doing.</EmptyState>
            ) : shown.length === 0 ? (
              <EmptyState title={`No ${filter} agents`}>{emptyFilter}</EmptyState>
            ) : (
              <>
                <div className="agent-row agent-head small muted" aria-hidden="true">
                  <span>State</span>
                  <span>Agent</span>
                  <span className="num">Worked</span>
                  <span className="num">Tokens</span>
                  <span className="num">Cost</span>
                  <span className="num">Files</span>
                </div>
                <ul
                  ref={listRef}
                  className="agent-list"
                  role="listbox"
                  aria-label="Agents"
                  data-testid="agent-list"
                  tabIndex={0}
                  aria-activedescendant={current ? rowId(current) : undefined}
                  onKeyDown={onKeyDown}
                >
                  {shown.map((a, i) => (
                    <AgentRow key={a.session_id} id={rowId(a)} agent={a} selected={i === index} worked={workedMs(a, board.fetchedAt, now)} onOpen={() => open(a)} />
                  ))}
                </ul>
              </>
            )}
          </>
        )}
      </div>
    </section>
  );
}

function AgentRow({ id, agent: a, selected, worked, onOpen }: { id: string; agent: BoardAgent; selected: boolean; worked: number; onOpen: () => void }) {
  const title = agentTitle(a);
  const where = whereText(a);
  const last = a.last_message ? oneLine(a.last_message) : null;
  const info = STATE_INFO[a.state];
  const badge = stateText(a);
  const time = formatDuration(worked);
  const tokens = tokensText(a);
  const cost = costText(a);
  const files = changesText(a);
  return (
    <li
      id={id}
      className={selected ? "agent-row selected" : "agent-row"}
      role="option"
      aria-selected={selected}
      data-testid="agent-row"
      data-session-id={a.session_id}
      data-state={a.state}
      onClick={onOpen}
    >
      <span className={`agent-state agent-state-${a.state}`} data-testid="agent-state" title={info.meaning}>
        <span className="agent-state-dot" aria-hidden="true" />
        {badge}
        {a.state === "waiting" && a.waiting > 0 && <span className="sr-only"> — {a.waiting} in the Inbox</span>}
      </span>
      <span className="agent-main">
        <span className="agent-title" data-testid="agent-title">
          <VisibleText text={title} inline />
          {a.kind === "background" && <span className="chip agent-kind">background</span>}
          {a.agent_id !== "main" && <span className="muted small"> · {a.agent_id}</span>}
        </span>
        <span className="agent-where small muted" data-testid="agent-where" title={escapeControlsInline(a.worktree ? `${where}\nIts folder: ${a.folder ?? ""}` : where)}>
          {a.worktree && <Icon name="worktree" size={12} />}
          <VisibleText text={where} inline />
        </span>
      </span>
      <span className="num" data-testid="agent-time" title={`Worked ${time}`}>
        <span className="sr-only">worked </span>
        {time}
      </span>
      <span className="num" data-testid="agent-tokens" title={`${a.input_tokens.toLocaleString("en-US")} tokens in, ${a.output_tokens.toLocaleString("en-US")} out`}>
        <span className="sr-only">tokens </span>
        {tokens}
      </span>
      <span className="num" data-testid="agent-cost" title={costTitle(a)}>
        <span className="sr-only">cost </span>
        {cost}
      </span>
      <span className="num agent-files" data-testid="agent-files" title={changesTitle(a)}>
        <span className="sr-only">files changed </span>
        {a.changes.files === 0 ? (
          files
        ) : (
          <>
            {a.changes.files} {a.changes.files === 1 ? "file" : "files"} <span className="add">+{a.changes.added}</span> <span className="del">−{a.changes.removed}</span>
          </>
        )}
      </span>
      <span className={last ? "agent-last small" : "agent-last small muted"} data-testid="agent-last" title={last ? escapeControlsInline(a.last_message!) : undefined}>
        {last ? <VisibleText text={last} inline /> : a.state === "idle" ? "Nothing asked yet" : "No answer yet"}
      </span>
    </li>
  );
}
