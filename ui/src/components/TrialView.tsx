// A best-of-N trial side by side (docs/worktrees.md, "Best of N"): one column per agent —
// its letter, its model, its state (the chat's own running/queued, else the board's), its
// last answer once done — and what it changed in its worktree (`worktree_diff`, compact:
// files and hunks), read again while it works. "Apply this one" brings all of one agent's
// changes into the person's folder (`apply_worktree` with the reviewed snapshot), with
// Undo; "Review hunk by hunk" opens that worktree's review. After an apply, "Discard the
// others" removes the other agents' worktrees, once confirmed. Paths, lines and answers
// are the agents' data: rendered as text.

import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import type { FileReview } from "../protocol";
import { useApp, useEvents, useTransport } from "../app/context";
import { useBoard } from "../app/useBoard";
import { isActive, trialColumns, type TrialColumn } from "../lib/bestOf";
import { STATE_INFO, oneLine } from "../lib/board";
import { errorText } from "../lib/format";
import { defaultModel } from "../lib/models";
import { fileCounts, hunkPlace, hunkRows, trialWorktrees } from "../lib/worktrees";
import { VisibleText } from "./Arguments";
import { APPLY_WORDS, ApplyOutcome, type Outcome } from "./ChangesReview";
import { ConfirmDialog, useRestore } from "./Checkpoints";
import { EmptyState, ErrorState, Icon, Spinner } from "./ui";

/** How often a working agent's changes are read again. */
export const TRIAL_POLL_MS = 4000;
/** How many lines of a file a column shows before "Show all". */
const FILE_ROWS = 60;

interface Props {
  trial: string;
  onBack: () => void;
  backLabel: string;
}

export function TrialView({ trial, onBack, backLabel }: Props) {
  const t = useTransport();
  const { worktrees, sessions } = useApp();
  // The configured model, named in the columns of agents that use it.
  const [configured, setConfigured] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    t.call({ cmd: "list_models" }).then(
      (r) => live && setConfigured(defaultModel(r.models ?? [])?.label ?? null),
      () => {},
    );
    return () => {
      live = false;
    };
  }, [t]);
  const board = useBoard();
  const list = useMemo(() => trialWorktrees(worktrees, trial), [worktrees, trial]);
  const columns = useMemo(() => trialColumns(list, sessions, board.agents), [list, sessions, board.agents]);
  // The applied column, and its apply's outcome: the others can then be discarded.
  const [applied, setApplied] = useState<string | null>(null);
  const headingRef = useRef<HTMLHeadingElement>(null);
  useEffect(() => headingRef.current?.focus(), []);
  const [refreshTick, setRefreshTick] = useState(0);

  const others = columns.filter((c) => c.worktree.name !== applied);
  return (
    <section className="screen trial" aria-labelledby="trial-h" data-testid="trial-view" data-trial={trial}>
      <header className="screen-header">
        <button type="button" className="icon-btn back-btn" data-testid="trial-back" aria-label={backLabel} title={backLabel} onClick={onBack}>
          <Icon name="chevron" />
        </button>
        <h1 id="trial-h" ref={headingRef} tabIndex={-1}>
          Best of {columns.length || "N"}: {trial}
        </h1>
        <button
          type="button"
          className="icon-btn"
          aria-label="Refresh every agent's changes"
          title="Refresh every agent's changes"
          data-testid="trial-refresh"
          onClick={() => {
            setRefreshTick((n) => n + 1);
            board.reload();
          }}
        >
          <Icon name="refresh" />
        </button>
      </header>
      <div className="screen-body trial-body">
        <p className="small muted">
          Each agent got the same prompt in a worktree of its own. Apply the one you pick to your folder — all of it, or hunk by hunk in its review — then discard the others.
        </p>
        {board.error && board.agents == null && (
          <div className="error-text small" role="alert">
            Could not read the agents' states: {board.error}
          </div>
        )}
        {columns.length === 0 ? (
          <EmptyState title="No agents left">Every worktree of this trial was discarded.</EmptyState>
        ) : (
          <div className="trial-columns" data-testid="trial-columns" style={{ ["--trial-n" as string]: String(columns.length) }}>
            {columns.map((c) => (
              <Column key={c.worktree.name} column={c} configured={configured} refreshTick={refreshTick} others={others} onApplied={() => setApplied(c.worktree.name)} appliedHere={applied === c.worktree.name} />
            ))}
          </div>
        )}
      </div>
    </section>
  );
}

/** One worktree's changes, read at once, again while its agent works and when asked. */
function useDiff(name: string, sessionId: number | null, active: boolean, refreshTick: number) {
  const t = useTransport();
  const [files, setFiles] = useState<FileReview[] | null>(null);
  const [snapshot, setSnapshot] = useState<string | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  const seq = useRef(0);
  const load = useCallback(async () => {
    const n = ++seq.current;
    try {
      const r = await t.call({ cmd: "worktree_diff", name });
      if (n !== seq.current) return;
      setFiles(r.files);
      setSnapshot(r.snapshot);
      setError(null);
    } catch (e) {
      if (n === seq.current) setError(errorText(e));
    }
  }, [t, name]);
  // At first, when asked, and when the agent starts or stops working (its last changes).
  useEffect(() => {
    void load();
  }, [load, refreshTick, active]);
  // While it works: every few seconds, and after each step that changed its files.
  useEffect(() => {
    if (!active) return;
    const timer = setInterval(() => void load(), TRIAL_POLL_MS);
    return () => clearInterval(timer);
  }, [active, load]);
  useEvents((_sid, e) => {
    if (e.type === "checkpoint" && e.checkpoint.session_id === sessionId) void load();
  });
  return { files, snapshot, error, load };
}

function Column({
  column: c,
  configured,
  refreshTick,
  others,
  onApplied,
  appliedHere,
}: {
  column: TrialColumn;
  /** The configured model's name, once known. */
  configured: string | null;
  refreshTick: number;
  others: TrialColumn[];
  onApplied: () => void;
  appliedHere: boolean;
}) {
  const t = useTransport();
  const { openSession, reviewWorktree, refreshWorktrees, go } = useApp();
  const w = c.worktree;
  const active = isActive(c.state);
  const diff = useDiff(w.name, w.session_id, active, refreshTick);
  const info = STATE_INFO[c.state];

  // ---- apply all of it, undo ----
  const [applying, setApplying] = useState(false);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const [undone, setUndone] = useState(false);
  const undo = useRestore();
  const empty = diff.files != null && diff.files.length === 0;
  const blocked = active ? "It is still working: apply once it has answered (or review it hunk by hunk)." : empty ? "It changed nothing." : diff.files == null ? "Its changes are not read yet." : null;
  const apply = async () => {
    if (applying || blocked) return;
    setApplying(true);
    setOutcome(null);
    setUndone(false);
    try {
      const r = await t.call({ cmd: "apply_worktree", name: w.name, ...(diff.snapshot ? { snapshot: diff.snapshot } : {}) });
      setOutcome({ report: r.report });
      if (r.report.conflicts.length === 0) onApplied();
    } catch (e) {
      setOutcome({ error: errorText(e) });
    } finally {
      setApplying(false);
      refreshWorktrees();
    }
  };

  const stat = diff.files && diff.files.length > 0 ? totals(diff.files) : null;
  return (
    <article className="trial-column" data-testid="trial-column" data-worktree={w.name} data-state={c.state} aria-label={`Agent ${c.letter}`}>
      <header className="trial-column-head">
        <span className="trial-letter" aria-hidden="true">
          {c.letter}
        </span>
        <div className="trial-who">
          <span className="trial-model-line">
            <strong className="trial-model" data-testid="trial-model" title={c.model ?? "The configured model"}>
              {c.model ?? configured ?? "configured model"}
            </strong>
            {c.model == null && configured != null && <span className="muted small"> (configured)</span>}
          </span>
          <span className="small muted trial-chat">
            {w.session_id != null ? (
              <button type="button" className="link small" data-testid="trial-open-chat" title="Open its chat" onClick={() => openSession(w.session_id!)}>
                {c.session?.title.trim() || `Chat ${w.session_id}`}
              </button>
            ) : (
              "its chat was deleted"
            )}
            {" · "}
            {w.name}
          </span>
        </div>
        <span className={`agent-state agent-state-${c.state}`} data-testid="trial-state" title={info.meaning}>
          <span className="agent-state-dot" aria-hidden="true" />
          {c.state === "waiting" ? "waiting for you" : info.label}
        </span>
      </header>
      {c.agent?.last_message && !active && (
        <div className="trial-answer small" data-testid="trial-answer" title={c.agent.last_message}>
          <VisibleText text={oneLine(c.agent.last_message)} inline />
        </div>
      )}
      {c.state === "waiting" && (
        <div className="small warning-text" data-testid="trial-waiting">
          An approval or a question of it waits for you.{" "}
          <button type="button" className="link small" onClick={() => go("inbox")}>
            Open the Inbox
          </button>
        </div>
      )}
      <div className="row trial-actions">
        <button
          type="button"
          className="btn btn-primary small-btn"
          data-testid="trial-apply"
          aria-disabled={applying || blocked != null}
          title={blocked ?? "Apply all of this agent's changes to your folder"}
          onClick={() => void apply()}
        >
          {applying ? "Applying…" : "Apply this one"}
        </button>
        <button type="button" className="btn small-btn" data-testid="trial-review" onClick={() => reviewWorktree(w.name)}>
          Review hunk by hunk
        </button>
        <span className="grow small muted trial-stat" data-testid="trial-stat">
          {stat ? (
            <>
              {stat.files} {stat.files === 1 ? "file" : "files"} <span className="add">+{stat.added}</span> <span className="del">−{stat.removed}</span>
            </>
          ) : (
            ""
          )}
        </span>
      </div>
      {outcome && (
        <ApplyOutcome
          outcome={outcome}
          words={APPLY_WORDS}
          undone={undone}
          undo={undo}
          onUndo={async (id) => {
            setUndone(await undo.restore(id));
            refreshWorktrees();
          }}
        />
      )}
      {appliedHere && !undone && outcome && "report" in outcome && others.length > 0 && <DiscardOthers others={others} />}
      <div className="trial-diff" data-testid="trial-diff">
        {diff.files == null ? (
          diff.error ? <ErrorState message={`Could not read its changes: ${diff.error}`} onRetry={() => void diff.load()} /> : <Spinner label="Reading its changes…" />
        ) : diff.files.length === 0 ? (
          <div className="small muted trial-empty">{active ? "No changes yet." : "It changed nothing."}</div>
        ) : (
          <>
            {diff.error && (
              <div className="error-text small" role="alert">
                Could not refresh: <VisibleText text={diff.error} inline />
              </div>
            )}
            <ul className="trial-files" aria-label={`Agent ${c.letter}'s changed files`}>
              {diff.files.map((f) => (
                <CompactFile key={f.path} file={f} />
              ))}
            </ul>
          </>
        )}
      </div>
    </article>
  );
}

function totals(files: FileReview[]) {
  let added = 0;
  let removed = 0;
  for (const f of files) {
    const n = fileCounts(f);
    added += n.added;
    removed += n.removed;
  }
  return { files: files.length, added, removed };
}

/** One file of a column: its path and counts, then its hunks' lines (the first ones). */
function CompactFile({ file: f }: { file: FileReview }) {
  const [all, setAll] = useState(false);
  const counts = fileCounts(f);
  const rows = useMemo(() => f.hunks.flatMap((h, i) => [{ head: `${i + 1}/${f.hunks.length} · ${hunkPlace(h)}` as const }, ...hunkRows(h).map((r) => ({ row: r }))]), [f]);
  const shown = all ? rows : rows.slice(0, FILE_ROWS);
  return (
    <li className="trial-file" data-testid="trial-file" data-path={f.path} data-status={f.status}>
      <div className="trial-file-head">
        <span className={`change-mark change-${f.status}`} aria-hidden="true">
          {f.status === "added" ? "A" : f.status === "deleted" ? "D" : "M"}
        </span>
        <span className="checkpoint-path">
          <VisibleText text={f.path} inline />
        </span>
        <span className="sr-only">({f.status === "added" ? "new" : f.status})</span>
        <span className="checkpoint-stat">
          {f.binary ? (
            "binary"
          ) : (
            <>
              <span className="add">+{counts.added}</span> <span className="del">−{counts.removed}</span>
            </>
          )}
        </span>
      </div>
      {!f.binary && f.hunks.length > 0 && (
        <div className="diff trial-file-diff" role="table" aria-label={`${f.path}'s changes`}>
          {shown.map((x, i) =>
            "head" in x ? (
              <div key={i} className="diff-row diff-hunk" role="row">
                {x.head}
              </div>
            ) : (
              <div key={i} className={`diff-row diff-${x.row.kind}`} role="row">
                <span className="ln">{x.row.kind === "del" ? x.row.oldNo : x.row.newNo}</span>
                <span className="mark">{x.row.kind === "add" ? "+" : "-"}</span>
                <span className="code">
                  <VisibleText text={x.row.text} />
                </span>
              </div>
            ),
          )}
          {shown.length < rows.length && (
            <div className="diff-row diff-note">
              <button type="button" className="link small" onClick={() => setAll(true)}>
                Show all {rows.length.toLocaleString()} lines
              </button>
            </div>
          )}
        </div>
      )}
    </li>
  );
}

/** "Discard the others": after an apply, the other agents' worktrees go, once confirmed. */
function DiscardOthers({ others }: { others: TrialColumn[] }) {
  const t = useTransport();
  const { refreshWorktrees } = useApp();
  const [confirm, setConfirm] = useState(false);
  const [busy, setBusy] = useState(false);
  const [failures, setFailures] = useState<{ name: string; error: string }[]>([]);
  const buttonRef = useRef<HTMLButtonElement>(null);
  const discard = async () => {
    setBusy(true);
    const failed: { name: string; error: string }[] = [];
    for (const c of others) {
      try {
        await t.call({ cmd: "discard_worktree", name: c.worktree.name });
      } catch (e) {
        failed.push({ name: c.worktree.name, error: errorText(e) });
      }
    }
    setFailures(failed);
    setBusy(false);
    refreshWorktrees();
  };
  const names = others.map((c) => c.letter).join(", ");
  return (
    <div className="trial-discard" data-testid="trial-discard">
      <button ref={buttonRef} type="button" className="btn btn-danger small-btn" data-testid="trial-discard-others" aria-disabled={busy} onClick={() => !busy && setConfirm(true)}>
        <Icon name="trash" size={12} /> {busy ? "Discarding…" : `Discard the others (${names})`}
      </button>
      {failures.length > 0 && (
        <ul className="error-text small" role="alert" data-testid="trial-discard-errors">
          {failures.map((f) => (
            <li key={f.name}>
              Could not discard {f.name}: <VisibleText text={f.error} inline />
            </li>
          ))}
        </ul>
      )}
      {confirm && (
        <ConfirmDialog
          title={others.length === 1 ? "Discard the other agent's worktree?" : `Discard the other ${others.length} agents' worktrees?`}
          confirmLabel="Discard"
          danger
          testId="trial-discard-dialog"
          returnFocus={buttonRef}
          onCancel={() => setConfirm(false)}
          onConfirm={() => {
            setConfirm(false);
            void discard();
          }}
        >
          <ul className="small cleanup-list">
            {others.map((c) => (
              <li key={c.worktree.name}>
                Agent {c.letter} ({c.model ?? "configured model"}): <VisibleText text={c.worktree.name} inline />
                {isActive(c.state) ? <span className="warning-text"> — still working; stop it first, or it is refused</span> : null}
              </li>
            ))}
          </ul>
          <p>Their folders are removed, with every change of theirs you have not applied. Their chats stay.</p>
          <p className="small">Your folder is not touched. This cannot be undone.</p>
        </ConfirmDialog>
      )}
    </div>
  );
}
