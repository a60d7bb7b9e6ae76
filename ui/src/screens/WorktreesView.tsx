// The Worktrees screen (docs/worktrees.md, "In the app"): every worktree with its kind and
// branch, the person's folder it copies, its chat and when it was made, each to review or
// discard — or, while one is reviewed, its review.

import { useEffect, useRef, useState } from "react";
import type { WorktreeInfo } from "../protocol";
import { useApp, useTransport } from "../app/context";
import { errorText, formatTime } from "../lib/format";
import { worktreeKindText } from "../lib/worktrees";
import { VisibleText } from "../components/Arguments";
import { DiscardDialog, WorktreeReview } from "../components/WorktreeReview";
import { EmptyState, ErrorState, Icon, Spinner } from "../components/ui";

interface Props {
  /** The active worktrees; null until read. */
  worktrees: WorktreeInfo[] | null;
  error: string | null;
  onReload: () => void;
  /** The worktree under review, if any, and where its Back goes. */
  reviewing: string | null;
  backLabel: string;
  onCloseReview: () => void;
}

export function WorktreesView({ worktrees, error, onReload, reviewing, backLabel, onCloseReview }: Props) {
  // Read again when shown: `skald worktrees discard` may have changed it meanwhile.
  const reloadRef = useRef(onReload);
  reloadRef.current = onReload;
  useEffect(() => {
    reloadRef.current();
  }, []);
  if (reviewing != null) return <WorktreeReview key={reviewing} name={reviewing} onBack={onCloseReview} backLabel={backLabel} onDiscarded={onCloseReview} />;
  return (
    <section className="screen" aria-labelledby="worktrees-h">
      <header className="screen-header">
        <h1 id="worktrees-h">Worktrees</h1>
        <button type="button" className="icon-btn" aria-label="Refresh" title="Refresh" data-testid="worktrees-refresh" onClick={onReload}>
          <Icon name="refresh" />
        </button>
      </header>
      <div className="screen-body">
        <p className="small muted">
          A chat in a worktree works in its own copy of your folder: what it changes reaches your folder only when you review it and apply it. Start one with the sidebar's worktree
          button next to New chat.
        </p>
        {worktrees == null ? (
          error ? <ErrorState message={`Could not list the worktrees: ${error}`} onRetry={onReload} /> : <Spinner />
        ) : worktrees.length === 0 ? (
          <EmptyState title="No worktrees">Start a new chat in a worktree, and it shows up here.</EmptyState>
        ) : (
          <>
            {error && (
              <div className="error-text small" role="alert">
                Could not refresh the list: {error}
              </div>
            )}
            <ul className="rows" aria-label="Worktrees" data-testid="worktree-list">
              {worktrees.map((w) => (
                <WorktreeRow key={w.id} worktree={w} />
              ))}
            </ul>
          </>
        )}
      </div>
    </section>
  );
}

function WorktreeRow({ worktree: w }: { worktree: WorktreeInfo }) {
  const t = useTransport();
  const { sessions, openSession, reviewWorktree, refreshWorktrees } = useApp();
  const chat = w.session_id != null ? sessions.find((s) => s.id === w.session_id) : undefined;
  const [confirm, setConfirm] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const discardRef = useRef<HTMLButtonElement>(null);
  const discard = async () => {
    setBusy(true);
    setError(null);
    try {
      await t.call({ cmd: "discard_worktree", name: w.name });
      refreshWorktrees();
    } catch (e) {
      setError(`Could not discard: ${errorText(e)}`);
    } finally {
      setBusy(false);
    }
  };
  return (
    <li className="row-card" data-testid="worktree-row" data-worktree={w.name}>
      <div className="row-main">
        <Icon name="worktree" size={14} />
        <strong>{w.name}</strong>
        <span className="chip" data-testid="worktree-kind">
          {worktreeKindText(w)}
        </span>
        {w.session_id != null ? (
          <button type="button" className="link small" data-testid="worktree-chat" title="Open its chat" onClick={() => openSession(w.session_id!)}>
            {chat?.running && <span className="dot-running" aria-label="working" />}
            {chat?.title.trim() || `Chat ${w.session_id}`}
          </button>
        ) : (
          <span className="muted small">its chat was deleted</span>
        )}
        <span className="muted small grow-right">{formatTime(w.created_at)}</span>
        <button type="button" className="btn small-btn" data-testid="worktree-open-review" onClick={() => reviewWorktree(w.name)}>
          Review
        </button>
        <button ref={discardRef} type="button" className="btn btn-danger small-btn" data-testid="worktree-discard" disabled={busy} onClick={() => setConfirm(true)}>
          {busy ? "Discarding…" : "Discard"}
        </button>
      </div>
      <div className="small muted worktree-folders">
        Your folder:{" "}
        <code>
          <VisibleText text={w.source} inline />
        </code>
      </div>
      {error && (
        <div className="error-text small" role="alert" data-testid="worktree-error">
          <VisibleText text={error} inline />
        </div>
      )}
      {confirm && (
        <DiscardDialog
          name={w.name}
          worktree={w}
          returnFocus={discardRef}
          onCancel={() => setConfirm(false)}
          onConfirm={() => {
            setConfirm(false);
            void discard();
          }}
        />
      )}
    </li>
  );
}
