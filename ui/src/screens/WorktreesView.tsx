// The Worktrees screen (docs/worktrees.md, "In the app"): every worktree with its kind and
// branch, the person's folder it copies, its chat, when it was made, the space it takes and
// when it was last used, each to review or discard; the worktrees of one best-of-N trial
// together, opened side by side; those unused for `[worktrees] clean_after_days` marked
// old, with a banner offering to clean them up — discarded only once the person confirms,
// in a dialog listing them. While one is reviewed, or a trial compared, that instead.

import { useEffect, useId, useMemo, useRef, useState } from "react";
import type { WorktreeInfo } from "../protocol";
import { useApp, useTransport } from "../app/context";
import type { WorktreeTarget } from "../app/useWorktrees";
import { formatBytes } from "../lib/bytes";
import { errorText, formatTime } from "../lib/format";
import { cleanupText, groupByTrial, isOld, totalBytes, trialLetter, usedText, worktreeKindText } from "../lib/worktrees";
import { VisibleText } from "../components/Arguments";
import { ConfirmDialog } from "../components/Checkpoints";
import { TrialView } from "../components/TrialView";
import { DiscardDialog, WorktreeReview } from "../components/WorktreeReview";
import { EmptyState, ErrorState, Icon, Spinner } from "../components/ui";

interface Props {
  /** The active worktrees; null until read. */
  worktrees: WorktreeInfo[] | null;
  /** Days unused after which a worktree is old (0: never). */
  cleanAfterDays?: number;
  error: string | null;
  onReload: () => void;
  /** What is open over the list (a review, a trial), if anything, and where its Back goes. */
  opened: WorktreeTarget | null;
  backLabel: string;
  onCloseReview: () => void;
}

export function WorktreesView({ worktrees, cleanAfterDays = 0, error, onReload, opened, backLabel, onCloseReview }: Props) {
  const { sessions, openTrial } = useApp();
  // Read again when shown: `skald worktrees discard` may have changed it meanwhile.
  const reloadRef = useRef(onReload);
  reloadRef.current = onReload;
  useEffect(() => {
    reloadRef.current();
  }, []);
  const running = useMemo(() => new Set(sessions.filter((s) => s.running).map((s) => s.id)), [sessions]);
  const now = Date.now();
  const old = useMemo(
    () => (worktrees ?? []).filter((w) => isOld(w, cleanAfterDays, now, w.session_id != null && running.has(w.session_id))),
    // `now` moves on each render; what is old is worked out again when the list changes.
    [worktrees, cleanAfterDays, running],
  );
  const groups = useMemo(() => groupByTrial(worktrees ?? []), [worktrees]);
  const [cleaning, setCleaning] = useState(false);
  const cleanRef = useRef<HTMLButtonElement>(null);
  const [cleaned, setCleaned] = useState<{ removed: number; bytes: number; failed: { name: string; error: string }[] } | null>(null);

  if (opened?.kind === "review") return <WorktreeReview key={opened.name} name={opened.name} onBack={onCloseReview} backLabel={backLabel} onDiscarded={onCloseReview} />;
  if (opened?.kind === "trial") return <TrialView key={opened.trial} trial={opened.trial} onBack={onCloseReview} backLabel={backLabel} />;
  const oldNames = new Set(old.map((w) => w.name));
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
          button next to New chat, or several at once with Best of N.
        </p>
        {old.length > 0 && (
          <div className="notice notice-warning cleanup-banner" data-testid="cleanup-banner" role="status">
            <Icon name="warning" size={14} />
            <span className="grow" data-testid="cleanup-text">
              {cleanupText(old.length, cleanAfterDays, formatBytes(totalBytes(old)))}
            </span>
            <button ref={cleanRef} type="button" className="btn small-btn" data-testid="cleanup-open" onClick={() => setCleaning(true)}>
              Clean up…
            </button>
          </div>
        )}
        {cleaned && (
          <div className={cleaned.failed.length > 0 ? "notice notice-error small" : "notice notice-info small"} role="status" data-testid="cleanup-result">
            <div>
              {cleaned.removed > 0
                ? `Discarded ${cleaned.removed} ${cleaned.removed === 1 ? "worktree" : "worktrees"}, freeing ${formatBytes(cleaned.bytes)}.`
                : "No worktree was discarded."}
            </div>
            {cleaned.failed.map((f) => (
              <div key={f.name}>
                Could not discard {f.name}: <VisibleText text={f.error} inline />
              </div>
            ))}
          </div>
        )}
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
              {groups.map((g) =>
                g.kind === "one" ? (
                  <WorktreeRow key={g.worktree.id} worktree={g.worktree} now={now} old={oldNames.has(g.worktree.name)} />
                ) : (
                  <li key={`trial-${g.trial}`} className="trial-group" data-testid="trial-group" data-trial={g.trial}>
                    <div className="row trial-group-head">
                      <strong>Best of {g.worktrees.length}</strong>
                      <span className="muted small">{g.trial}</span>
                      <button type="button" className="btn small-btn grow-right" data-testid="trial-open" onClick={() => openTrial(g.trial)}>
                        Open side by side
                      </button>
                    </div>
                    <ul className="rows" aria-label={`Best of ${g.worktrees.length}: ${g.trial}`}>
                      {g.worktrees.map((w) => (
                        <WorktreeRow key={w.id} worktree={w} now={now} old={oldNames.has(w.name)} letter={trialLetter(w)} />
                      ))}
                    </ul>
                  </li>
                ),
              )}
            </ul>
          </>
        )}
      </div>
      {cleaning && (
        <CleanupDialog
          old={old}
          days={cleanAfterDays}
          returnFocus={cleanRef}
          onCancel={() => setCleaning(false)}
          onDone={(result) => {
            setCleaning(false);
            setCleaned(result);
            onReload();
          }}
        />
      )}
    </section>
  );
}

function WorktreeRow({ worktree: w, now, old, letter }: { worktree: WorktreeInfo; now: number; old: boolean; letter?: string }) {
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
    <li className={old ? "row-card worktree-old" : "row-card"} data-testid="worktree-row" data-worktree={w.name} data-old={old ? "1" : undefined}>
      <div className="row-main">
        {letter ? (
          <span className="trial-letter small-letter" aria-label={`Agent ${letter}`}>
            {letter}
          </span>
        ) : (
          <Icon name="worktree" size={14} />
        )}
        <strong>{w.name}</strong>
        <span className="chip" data-testid="worktree-kind">
          {worktreeKindText(w)}
        </span>
        {old && (
          <span className="chip chip-old" data-testid="worktree-old" title="Unused long enough to be offered for cleaning up">
            old
          </span>
        )}
        {w.session_id != null ? (
          <button type="button" className="link small" data-testid="worktree-chat" title="Open its chat" onClick={() => openSession(w.session_id!)}>
            {chat?.queued ? <span className="dot-queued" aria-label="waiting for a free place" /> : chat?.running && <span className="dot-running" aria-label="working" />}
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
        <span className="worktree-use" data-testid="worktree-use">
          {w.disk_bytes != null && <span data-testid="worktree-size">{formatBytes(w.disk_bytes)}</span>}
          {w.disk_bytes != null && " · "}
          <span data-testid="worktree-used" title={`Last used ${formatTime(w.last_used_at ?? w.created_at)}`}>
            {usedText(w, now)}
          </span>
        </span>
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

/**
 * "Clean up old worktrees?": each old one with a checkbox (all checked), its size and when
 * it was last used, and a warning that changes not applied are lost. Discard removes the
 * checked ones, one by one; what could not be discarded is reported.
 */
function CleanupDialog({
  old,
  days,
  returnFocus,
  onCancel,
  onDone,
}: {
  old: WorktreeInfo[];
  days: number;
  returnFocus: React.RefObject<HTMLElement | null>;
  onCancel: () => void;
  onDone: (result: { removed: number; bytes: number; failed: { name: string; error: string }[] }) => void;
}) {
  const t = useTransport();
  const [unchecked, setUnchecked] = useState<ReadonlySet<string>>(() => new Set());
  const [busy, setBusy] = useState(false);
  const chosen = old.filter((w) => !unchecked.has(w.name));
  const id = useId();
  const now = Date.now();
  const discard = async () => {
    if (busy || chosen.length === 0) return;
    setBusy(true);
    let removed = 0;
    let bytes = 0;
    const failed: { name: string; error: string }[] = [];
    for (const w of chosen) {
      try {
        await t.call({ cmd: "discard_worktree", name: w.name });
        removed++;
        bytes += w.disk_bytes ?? 0;
      } catch (e) {
        failed.push({ name: w.name, error: errorText(e) });
      }
    }
    onDone({ removed, bytes, failed });
  };
  return (
    <ConfirmDialog
      title={`Clean up worktrees unused for ${days} ${days === 1 ? "day" : "days"} or more?`}
      confirmLabel={busy ? "Discarding…" : chosen.length === 0 ? "Discard" : `Discard ${chosen.length} (${formatBytes(totalBytes(chosen))})`}
      confirmDisabled={busy || chosen.length === 0}
      danger
      testId="cleanup-dialog"
      returnFocus={returnFocus}
      onCancel={() => !busy && onCancel()}
      onConfirm={() => void discard()}
    >
      <ul className="cleanup-list" aria-label="Old worktrees">
        {old.map((w) => (
          <li key={w.name} data-testid="cleanup-item" data-worktree={w.name}>
            <label>
              <input
                type="checkbox"
                data-testid="cleanup-check"
                checked={!unchecked.has(w.name)}
                disabled={busy}
                aria-describedby={`${id}-${w.id}`}
                onChange={(e) =>
                  setUnchecked((s) => {
                    const next = new Set(s);
                    if (e.target.checked) next.delete(w.name);
                    else next.add(w.name);
                    return next;
                  })
                }
              />
              <strong>{w.name}</strong>
            </label>
            <span id={`${id}-${w.id}`} className="small muted">
              {w.disk_bytes != null ? formatBytes(w.disk_bytes) : "size unknown"} · {usedText(w, now)}
              {w.kind === "git" && w.branch ? ` · its branch ${w.branch} goes too` : ""}
            </span>
          </li>
        ))}
      </ul>
      <p className="small warning-text" data-testid="cleanup-warning">
        Every change of their agents you have not applied is lost. Your folders are not touched; their chats stay. This cannot be undone.
      </p>
    </ConfirmDialog>
  );
}
