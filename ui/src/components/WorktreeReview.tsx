// A worktree's review (docs/worktrees.md, "In the app"): what its agent changed since the
// worktree was made, file by file and hunk by hunk (`worktree_diff`), each hunk taken
// unless unchecked; "Apply selected" brings what is checked into the person's folder
// (`apply_worktree`) as one step "Undo" takes back (`restore_checkpoint`, as the chat's
// checkpoint cards do), or writes nothing and shows the conflicts. Refresh reads the
// changes again (the agent may still be working); Discard removes the worktree after a
// confirm. Keys: j/k or ↑/↓ between changes, Space takes or leaves one, Enter (or
// Ctrl/⌘+Enter anywhere in the view) applies. Any line can get comments (its "+" button,
// or c on a change for its first line), sent to the worktree's chat as one message. The
// review itself is components/ChangesReview.tsx. A git worktree's work can also be
// committed on its branch and merged into the person's (`commit_worktree`,
// `merge_worktree`). Paths and lines are the agent's data: they are rendered as text.

import { useRef, useState, type RefObject } from "react";
import type { MergeReport, WorktreeInfo } from "../protocol";
import { useApp, useTransport } from "../app/context";
import { errorText, formatTime } from "../lib/format";
import { MERGE_UNDO, mergeText, shortCommit, worktreeKindText } from "../lib/worktrees";
import { VisibleText } from "./Arguments";
import { APPLY_WORDS, ChangesReview } from "./ChangesReview";
import { ConfirmDialog } from "./Checkpoints";
import { Icon } from "./ui";

interface Props {
  name: string;
  /** Back to where the review was opened from; `backLabel` says where. */
  onBack: () => void;
  backLabel: string;
  /** The worktree was discarded: the review closes. */
  onDiscarded: () => void;
}

export function WorktreeReview({ name, onBack, backLabel, onDiscarded }: Props) {
  const t = useTransport();
  const { worktrees, sessions, openSession, refreshWorktrees } = useApp();
  const info = worktrees.find((w) => w.name === name);
  const chat = info?.session_id != null ? sessions.find((s) => s.id === info.session_id) : undefined;

  // ---- discard ----
  const [confirmDiscard, setConfirmDiscard] = useState(false);
  const [discarding, setDiscarding] = useState(false);
  const [discardError, setDiscardError] = useState<string | null>(null);
  const discardRef = useRef<HTMLButtonElement>(null);
  const discard = async () => {
    setDiscarding(true);
    setDiscardError(null);
    try {
      await t.call({ cmd: "discard_worktree", name });
      refreshWorktrees();
      onDiscarded();
    } catch (e) {
      setDiscardError(`Could not discard the worktree: ${errorText(e)}`);
      setDiscarding(false);
    }
  };

  const running = chat?.running === true;
  return (
    <>
      <ChangesReview
        testId="worktree-review"
        data={{ worktree: name }}
        heading={`Review worktree ${name}`}
        chip={info && <span className="chip">{worktreeKindText(info)}</span>}
        onBack={onBack}
        backLabel={backLabel}
        facts={
          info && (
            <dl className="facts review-facts small">
              <dt>Your folder</dt>
              <dd>
                <code>
                  <VisibleText text={info.source} inline />
                </code>
              </dd>
              <dt>Its folder</dt>
              <dd>
                <code>
                  <VisibleText text={info.working_dir} inline />
                </code>
              </dd>
              <dt>Chat</dt>
              <dd>
                {info.session_id != null ? (
                  <button type="button" className="link" data-testid="review-chat" onClick={() => openSession(info.session_id!)}>
                    {chat?.title.trim() || `Chat ${info.session_id}`}
                  </button>
                ) : (
                  <span className="muted">deleted</span>
                )}
                <span className="muted"> · made {formatTime(info.created_at)}</span>
              </dd>
            </dl>
          )
        }
        help={
          <>
            Every change is taken unless you uncheck it. Keys: <kbd>j</kbd>/<kbd>k</kbd> or <kbd>↓</kbd>/<kbd>↑</kbd> move between changes, <kbd>Space</kbd> takes or leaves the one
            in focus, <kbd>Enter</kbd> (or <kbd>Ctrl</kbd>/<kbd>⌘</kbd>+<kbd>Enter</kbd> anywhere here) applies what is checked. Applying never touches the worktree: you can apply again
            after the agent does more. To tell the agent what to change, comment on a line with its <kbd>+</kbd> (or <kbd>c</kbd> on a change), then send the comments.
          </>
        }
        notice={
          running && (
            <div className="notice notice-info small" data-testid="review-running" role="status">
              The agent is still working in this worktree: Refresh to see its latest changes before you apply.
            </div>
          )
        }
        beforeBar={info?.kind === "git" ? (snapshot) => <GitActions worktree={info} snapshot={snapshot} /> : undefined}
        barEnd={
          <button ref={discardRef} type="button" className="btn btn-danger" data-testid="review-discard" aria-disabled={discarding} onClick={() => !discarding && setConfirmDiscard(true)}>
            <Icon name="trash" size={14} /> {discarding ? "Discarding…" : "Discard worktree"}
          </button>
        }
        afterBar={
          discardError && (
            <div className="error-text small" role="alert" data-testid="review-error">
              <VisibleText text={discardError} inline />
            </div>
          )
        }
        load={() => t.call({ cmd: "worktree_diff", name })}
        loadKey={name}
        what="the worktree's changes"
        refreshTitle="Read the worktree's changes again: the agent may still be working"
        empty={{ title: "No changes yet", text: "The agent has changed nothing in this worktree so far. Refresh to look again." }}
        takenByDefault
        action={{
          label: "Apply selected",
          busyLabel: "Applying…",
          title: "Apply what is checked to your folder (Enter, Ctrl+Enter)",
          testId: "review-apply",
          run: async (files, snapshot) => (await t.call({ cmd: "apply_worktree", name, files, snapshot })).report,
        }}
        words={APPLY_WORDS}
        onActed={refreshWorktrees}
        commentsTo={info?.session_id ?? null}
      />
      {confirmDiscard && (
        <DiscardDialog
          name={name}
          worktree={info}
          returnFocus={discardRef}
          onCancel={() => setConfirmDiscard(false)}
          onConfirm={() => {
            setConfirmDiscard(false);
            void discard();
          }}
        />
      )}
    </>
  );
}

/** "Discard worktree NAME?": what goes (its folder, its branch) and what stays (the person's folder). */
export function DiscardDialog({
  name,
  worktree,
  returnFocus,
  onCancel,
  onConfirm,
}: {
  name: string;
  worktree: WorktreeInfo | undefined;
  returnFocus: RefObject<HTMLElement | null>;
  onCancel: () => void;
  onConfirm: () => void;
}) {
  return (
    <ConfirmDialog title={`Discard worktree ${name}?`} confirmLabel="Discard" testId="discard-dialog" returnFocus={returnFocus} onCancel={onCancel} onConfirm={onConfirm}>
      <p>
        Its folder is removed, with every change of the agent you have not applied
        {worktree?.kind === "git" && worktree.branch ? <>, and its branch {worktree.branch}</> : null}.
      </p>
      {worktree && (
        <p className="muted small">
          Folder: <VisibleText text={worktree.root} inline />
        </p>
      )}
      <p className="small">Your folder is not touched. This cannot be undone.</p>
    </ConfirmDialog>
  );
}

type GitOutcome = { commit: string } | { merge: MergeReport } | { error: string; what: "commit" | "merge" };

/**
 * A git worktree's way back (docs/worktrees.md, "Commit and merge"): commit the agent's work
 * on its branch (a message, or the engine's own), then merge that branch into the one
 * checked out in the person's repository — after a confirm, saying what happened and how
 * to undo it. The engine's refusals (the chat runs, nothing to commit, uncommitted work,
 * the repository mid-operation, files the person changed and did not commit) show here.
 */
/** Commit and merge for a git worktree. `snapshot` is the state the review shows: the
 *  commit holds exactly that, and is refused if the worktree changed since. */
export function GitActions({ worktree: w, snapshot }: { worktree: WorktreeInfo; snapshot?: string }) {
  const t = useTransport();
  const branch = w.branch ?? `skald/${w.name}`;
  const [formOpen, setFormOpen] = useState(false);
  const [message, setMessage] = useState("");
  const [busy, setBusy] = useState<"commit" | "merge" | null>(null);
  const [outcome, setOutcome] = useState<GitOutcome | null>(null);
  const [confirmMerge, setConfirmMerge] = useState(false);
  const commitRef = useRef<HTMLButtonElement>(null);
  const mergeRef = useRef<HTMLButtonElement>(null);

  const commit = async () => {
    if (busy) return;
    setBusy("commit");
    setOutcome(null);
    try {
      const text = message.trim();
      const r = await t.call({
        cmd: "commit_worktree",
        name: w.name,
        ...(text ? { message: text } : {}),
        ...(snapshot ? { snapshot } : {}),
      });
      setOutcome({ commit: r.commit });
      setMessage("");
      setFormOpen(false);
      commitRef.current?.focus();
    } catch (e) {
      setOutcome({ error: errorText(e), what: "commit" });
    } finally {
      setBusy(null);
    }
  };
  const merge = async () => {
    setBusy("merge");
    setOutcome(null);
    try {
      const r = await t.call({ cmd: "merge_worktree", name: w.name });
      setOutcome({ merge: r.report });
    } catch (e) {
      setOutcome({ error: errorText(e), what: "merge" });
    } finally {
      setBusy(null);
    }
  };

  return (
    <div className="git-actions" data-testid="git-actions" role="group" aria-label="Git">
      <div className="row git-actions-row">
        <Icon name="worktree" size={14} />
        <button
          ref={commitRef}
          type="button"
          className={formOpen ? "btn small-btn active" : "btn small-btn"}
          data-testid="git-commit-open"
          aria-expanded={formOpen}
          onClick={() => {
            setFormOpen((o) => !o);
            setOutcome(null);
          }}
        >
          Commit on {branch}…
        </button>
        <button ref={mergeRef} type="button" className="btn small-btn" data-testid="git-merge" aria-disabled={busy != null} onClick={() => busy == null && setConfirmMerge(true)}>
          {busy === "merge" ? "Merging…" : "Merge into your branch"}
        </button>
        <span className="small muted">Commit the agent's work on its branch, then merge the branch into the one checked out in your repository.</span>
      </div>
      {formOpen && (
        <form
          className="row git-commit-form"
          data-testid="git-commit-form"
          aria-label={`Commit on ${branch}`}
          onSubmit={(e) => {
            e.preventDefault();
            void commit();
          }}
          onKeyDown={(e) => {
            if (e.key === "Escape" && busy == null) {
              e.stopPropagation();
              setFormOpen(false);
              commitRef.current?.focus();
            }
          }}
        >
          <label className="field grow">
            <span>Commit message</span>
            <input
              autoFocus
              data-testid="git-commit-message"
              value={message}
              placeholder={`empty: “Work of Skald's agent in worktree ${w.name}”`}
              spellCheck
              disabled={busy != null}
              onChange={(e) => setMessage(e.target.value)}
            />
          </label>
          <button type="submit" className="btn btn-primary small-btn" data-testid="git-commit" disabled={busy != null}>
            {busy === "commit" ? "Committing…" : "Commit"}
          </button>
          <button
            type="button"
            className="btn small-btn"
            disabled={busy != null}
            onClick={() => {
              setFormOpen(false);
              commitRef.current?.focus();
            }}
          >
            Cancel
          </button>
        </form>
      )}
      {outcome && <GitOutcomeView outcome={outcome} branch={branch} repo={w.repo ?? w.source} />}
      {confirmMerge && (
        <ConfirmDialog
          title={`Merge ${branch} into your branch?`}
          confirmLabel="Merge"
          testId="merge-dialog"
          returnFocus={mergeRef}
          onCancel={() => setConfirmMerge(false)}
          onConfirm={() => {
            setConfirmMerge(false);
            void merge();
          }}
        >
          <p>
            The branch checked out in <span className="dialog-code"><VisibleText text={w.repo ?? w.source} inline /></span> gets what is committed on {branch}: a fast-forward when it has
            not moved since, else a merge commit.
          </p>
          <p className="small">
            Nothing is written when the merge would clash, or touch files you changed and did not commit. Undo it with <code>{MERGE_UNDO}</code>.
          </p>
        </ConfirmDialog>
      )}
    </div>
  );
}

function GitOutcomeView({ outcome, branch, repo }: { outcome: GitOutcome; branch: string; repo: string }) {
  if ("error" in outcome) {
    return (
      <div className="notice notice-error small git-outcome" role="alert" data-testid="git-outcome" data-result="error">
        {outcome.what === "commit" ? "Could not commit" : "Could not merge"}: <VisibleText text={outcome.error} inline />
      </div>
    );
  }
  if ("commit" in outcome) {
    return (
      <div className="notice notice-info small git-outcome" role="status" data-testid="git-outcome" data-result="committed">
        Committed <code>{shortCommit(outcome.commit)}</code> on {branch}. Merge it into your branch, or keep it on its branch.
      </div>
    );
  }
  const r = outcome.merge;
  const { text, undoable } = mergeText(r, branch);
  return (
    <div className={`notice small git-outcome ${r.outcome === "conflicts" ? "notice-warning" : "notice-info"}`} role={r.outcome === "conflicts" ? "alert" : "status"} data-testid="git-outcome" data-result={r.outcome}>
      <div data-testid="git-merge-text">
        <VisibleText text={text} inline />
      </div>
      {undoable && (
        <div className="muted">
          To undo it, run <code>{MERGE_UNDO}</code> in <VisibleText text={repo} inline />.
        </div>
      )}
      {r.outcome === "conflicts" && <div className="muted">Apply the worktree's changes instead (below, hunk by hunk), or merge with git to resolve them.</div>}
    </div>
  );
}
