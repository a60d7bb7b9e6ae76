// Checkpoints in the chat (docs/ui.md): under a tool call that changed the chat's folder,
// the files it changed, their diff and "Restore to before this"; a restore as a line of
// its own with "Undo restore"; a checkpoint that could not be taken as a quiet note. A
// restore to before a call can also rewind the conversation: the server forks the chat at
// that call and the app opens the new chat (the original keeps every message). File
// names and diff lines are data (the agent chose them): rendered as text, escaped.

import { createContext, useContext, useEffect, useId, useMemo, useRef, useState, type ReactNode, type RefObject } from "react";
import { createPortal } from "react-dom";
import type { CheckpointInfo, FileChange, SessionInfo } from "../protocol";
import type { Item } from "../chat/state";
import { useTransport } from "../app/context";
import { changesSummary, fileChangeText, filesChanged, hasDiff, parsePatch, restorable, type PatchRow } from "../lib/checkpoints";
import { errorText, formatTime } from "../lib/format";
import { VisibleText } from "./Arguments";
import { Icon } from "./ui";

/**
 * What a restore done from a card tells the chat: its reply's checkpoint, and with a rewind
 * the new chat to go on in.
 */
export const CheckpointActions = createContext<{ restored(c: CheckpointInfo): void; forked(s: SessionInfo): void }>({ restored() {}, forked() {} });

/**
 * Sends `restore_checkpoint`; the error stays on the card until the next try. A worktree's
 * review undoes an apply with it too (its reply then goes to no chat).
 */
export function useRestore() {
  const t = useTransport();
  const { restored, forked } = useContext(CheckpointActions);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const restore = async (id: number, rewind = false): Promise<boolean> => {
    setBusy(true);
    setError(null);
    try {
      const r = await t.call(rewind ? { cmd: "restore_checkpoint", id, rewind: true } : { cmd: "restore_checkpoint", id });
      restored(r.checkpoint);
      // The new chat holds the conversation before the call: the person goes on there.
      if (r.fork) forked(r.fork);
      return true;
    } catch (e) {
      setError(`Could not restore: ${errorText(e)}`);
      return false;
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, restore };
}

// ---- under a tool call -------------------------------------------------------------------

/** The line under a tool card: what the call changed, or why that is not known. */
export function CheckpointStrip({ checkpoint: c, label, open, onToggle }: { checkpoint: CheckpointInfo; label: string; open: boolean; onToggle: () => void }) {
  const { busy, error, restore } = useRestore();
  const [confirm, setConfirm] = useState(false);
  const [rewind, setRewind] = useState(false);
  const restoreRef = useRef<HTMLButtonElement>(null);
  const rewindId = useId();
  // Only a call has a point in the conversation to go back to (a restore is undone instead).
  const canRewind = c.kind === "call" && c.tool_call_id != null;
  if (!restorable(c)) {
    return (
      <div className="checkpoint" data-testid="checkpoint" data-checkpoint-id={c.id} data-restorable="0">
        <CheckpointNote text={c.note || "No checkpoint was taken for this call."} />
      </div>
    );
  }
  return (
    <div className="checkpoint" data-testid="checkpoint" data-checkpoint-id={c.id} data-restorable="1">
      <div className="checkpoint-head">
        {c.changes.total > 0 ? (
          <ChangesToggle summary={changesSummary(c.changes)} open={open} onToggle={onToggle} />
        ) : (
          <span className="grow muted small">{filesChanged(0)}</span>
        )}
        <button
          ref={restoreRef}
          type="button"
          className="btn small-btn"
          data-testid="checkpoint-restore"
          // Not `disabled` while the restore is on its way: the focus, back from the dialog,
          // would be lost.
          aria-disabled={busy}
          title="Bring the folder back to how it was before this call"
          onClick={() => {
            if (busy) return;
            setRewind(false);
            setConfirm(true);
          }}
        >
          <Icon name="undo" size={12} /> {busy ? "Restoring…" : "Restore to before this"}
        </button>
      </div>
      {open && c.changes.total > 0 && <ChangesBody checkpoint={c} />}
      {c.note && <CheckpointNote text={c.note} />}
      {error && (
        <div className="error-text small" role="alert" data-testid="checkpoint-error">
          <VisibleText text={error} inline />
        </div>
      )}
      {confirm && (
        <ConfirmDialog
          title="Restore the folder to before this call?"
          confirmLabel={canRewind && rewind ? "Restore and rewind" : "Restore"}
          testId="restore-dialog"
          returnFocus={restoreRef}
          onCancel={() => setConfirm(false)}
          onConfirm={() => {
            setConfirm(false);
            void restore(c.id, canRewind && rewind);
          }}
        >
          <p>
            The files changed by <span className="dialog-code"><VisibleText text={label} inline /></span> and by every later call in this chat go back to
            how they were before it.
          </p>
          {c.changes.total > 0 && (
            <p className="muted small">
              This call: <VisibleText text={changesSummary(c.changes)} inline />
            </p>
          )}
          <p className="muted small">
            Folder: <VisibleText text={c.folder} inline />
          </p>
          <p className="small">The restore is recorded in the chat: you can undo it.</p>
          {canRewind && (
            <div className="dialog-check">
              <label>
                <input type="checkbox" data-testid="restore-dialog-rewind" checked={rewind} aria-describedby={`${rewindId}-hint`} onChange={(e) => setRewind(e.target.checked)} />
                Also rewind the conversation to before this call
              </label>
              <div id={`${rewindId}-hint`} className="dialog-check-hint muted small">
                You continue in a new chat; this chat keeps every message.
              </div>
            </div>
          )}
        </ConfirmDialog>
      )}
    </div>
  );
}

// ---- a restore, in the timeline -------------------------------------------------------------

export function RestoreLine({ item, open, onToggle }: { item: Extract<Item, { kind: "restore" }>; open: boolean; onToggle: () => void }) {
  const c = item.checkpoint;
  const { busy, error, restore } = useRestore();
  const total = c.changes.total;
  return (
    <div className={item.undone ? "restore-line undone" : "restore-line"} data-testid="restore-line" data-checkpoint-id={c.id} data-undone={item.undone ? "1" : undefined} role="group" aria-label="Folder restored">
      <div className="checkpoint-head">
        <span className="restore-icon" aria-hidden="true">
          <Icon name="undo" size={13} />
        </span>
        <span className="restore-text" data-testid="restore-text">
          {item.undoes ? (
            "Restore undone"
          ) : item.target != null ? (
            <>
              Folder restored to before <span className="restore-target"><VisibleText text={item.target} inline /></span>
            </>
          ) : (
            "Folder restored to an earlier checkpoint"
          )}
          {" — "}
        </span>
        {total > 0 ? <ChangesToggle summary={filesChanged(total)} open={open} onToggle={onToggle} /> : <span className="grow">no files changed</span>}
        <span className="muted small">{formatTime(c.created_at)}</span>
        {item.undone ? (
          <span className="chip">undone</span>
        ) : (
          restorable(c) && (
            <button type="button" className="btn small-btn" data-testid="restore-undo" aria-disabled={busy} onClick={() => !busy && void restore(c.id)}>
              {busy ? "Restoring…" : item.undoes ? "Redo restore" : "Undo restore"}
            </button>
          )
        )}
      </div>
      {open && total > 0 && <ChangesBody checkpoint={c} />}
      {c.note && <CheckpointNote text={c.note} />}
      {error && (
        <div className="error-text small" role="alert" data-testid="checkpoint-error">
          <VisibleText text={error} inline />
        </div>
      )}
    </div>
  );
}

// ---- the changed files and their diff ---------------------------------------------------------

function CheckpointNote({ text }: { text: string }) {
  return (
    <div className="checkpoint-note small muted" data-testid="checkpoint-note">
      <Icon name="info" size={13} />
      <span>
        <VisibleText text={text} inline />
      </span>
    </div>
  );
}

function ChangesToggle({ summary, open, onToggle }: { summary: string; open: boolean; onToggle: () => void }) {
  return (
    <button type="button" className="checkpoint-toggle" data-testid="checkpoint-summary" aria-expanded={open} title={open ? "Hide the changed files" : "Show the changed files"} onClick={onToggle}>
      <span className={open ? "chev open" : "chev"}>
        <Icon name="chevron" size={12} />
      </span>
      <span className="checkpoint-summary-text">
        <VisibleText text={summary} inline />
      </span>
    </button>
  );
}

const STATUS_MARK: Record<FileChange["status"], { mark: string; words: string }> = {
  added: { mark: "A", words: "new" },
  modified: { mark: "M", words: "modified" },
  deleted: { mark: "D", words: "deleted" },
};

/** Which diff each checkpoint shows ("" for all its files), kept while rows scroll away. */
const shownDiff = new Map<number, string>();
/** Diffs fetched lately, by checkpoint and path. */
const diffCache = new Map<string, string>();
const DIFF_CACHE = 24;

function cacheDiff(key: string, text: string) {
  diffCache.delete(key);
  diffCache.set(key, text);
  while (diffCache.size > DIFF_CACHE) diffCache.delete(diffCache.keys().next().value!);
}

type DiffState = { state: "loading" } | { state: "error"; error: string } | { state: "ready"; text: string };

function ChangesBody({ checkpoint: c }: { checkpoint: CheckpointInfo }) {
  const t = useTransport();
  const diffable = hasDiff(c);
  /** The file whose diff is shown, "" for the whole diff, null for none. */
  const [shown, setShown] = useState<string | null>(() => shownDiff.get(c.id) ?? null);
  const [diff, setDiff] = useState<DiffState | null>(null);
  const show = (path: string | null) => {
    const next = path === shown ? null : path;
    if (next == null) shownDiff.delete(c.id);
    else shownDiff.set(c.id, next);
    setShown(next);
  };
  useEffect(() => {
    if (shown == null || !diffable) {
      setDiff(null);
      return;
    }
    const key = `${c.id}\u0000${shown}`;
    const cached = diffCache.get(key);
    if (cached !== undefined) {
      setDiff({ state: "ready", text: cached });
      return;
    }
    let live = true;
    setDiff({ state: "loading" });
    t.call(shown === "" ? { cmd: "checkpoint_diff", id: c.id } : { cmd: "checkpoint_diff", id: c.id, path: shown }).then(
      (r) => {
        cacheDiff(key, r.text);
        if (live) setDiff({ state: "ready", text: r.text });
      },
      (e: unknown) => live && setDiff({ state: "error", error: errorText(e) }),
    );
    return () => {
      live = false;
    };
  }, [t, c.id, shown, diffable]);

  const more = c.changes.total - c.changes.files.length;
  return (
    <div className="checkpoint-body">
      <ul className="checkpoint-files" data-testid="checkpoint-files" aria-label="Changed files">
        {c.changes.files.map((f) => {
          const s = STATUS_MARK[f.status];
          const stat = fileChangeText({ ...f, path: "" }).trim();
          return (
            <li key={f.path}>
              <button
                type="button"
                className={shown === f.path ? "checkpoint-file selected" : "checkpoint-file"}
                data-testid="checkpoint-file"
                data-status={f.status}
                aria-pressed={shown === f.path}
                disabled={!diffable}
                title={diffable ? "Show this file's diff" : undefined}
                onClick={() => show(f.path)}
              >
                <span className={`change-mark change-${f.status}`} title={s.words} aria-hidden="true">
                  {s.mark}
                </span>
                <span className="checkpoint-path">
                  <VisibleText text={f.path} inline />
                </span>
                <span className="checkpoint-stat">
                  {f.status === "modified" && !f.binary && (f.added > 0 || f.removed > 0) ? (
                    <>
                      <span className="add">+{f.added}</span> <span className="del">−{f.removed}</span>
                    </>
                  ) : (
                    stat
                  )}
                </span>
                <span className="sr-only">({s.words})</span>
              </button>
            </li>
          );
        })}
        {more > 0 && <li className="muted small checkpoint-more">and {more.toLocaleString()} more</li>}
      </ul>
      {diffable && (
        <div className="row">
          <button type="button" className="btn small-btn" data-testid="checkpoint-show-diff" aria-pressed={shown === ""} onClick={() => show("")}>
            {shown === "" ? "Hide diff" : "Show diff"}
          </button>
          {shown != null && shown !== "" && (
            <button type="button" className="link small" onClick={() => show(null)}>
              Hide the file's diff
            </button>
          )}
        </div>
      )}
      {diff?.state === "loading" && (
        <div className="muted small" role="status">
          <span className="spinner small-spinner" aria-hidden="true" /> Loading the diff…
        </div>
      )}
      {diff?.state === "error" && (
        <div className="error-text small" role="alert">
          Could not load the diff: <VisibleText text={diff.error} inline />
        </div>
      )}
      {diff?.state === "ready" && <PatchView text={diff.text} />}
    </div>
  );
}

/** How many rows a diff shows before "Show all". */
const PATCH_ROWS = 3000;

/** A unified diff from the engine, coloured by line. */
export function PatchView({ text }: { text: string }) {
  const patch = useMemo(() => parsePatch(text), [text]);
  const [all, setAll] = useState(false);
  const rows = all ? patch.rows : patch.rows.slice(0, PATCH_ROWS);
  return (
    <div className="diff checkpoint-diff" data-testid="checkpoint-diff" role="table" aria-label="Changes">
      <div className="diff-stats small">
        <span className="add">+{patch.added}</span> <span className="del">−{patch.removed}</span>
      </div>
      {patch.rows.length === 0 && <div className="muted small diff-empty">No changes to show.</div>}
      {rows.map((r, i) => (
        <PatchLine key={i} row={r} />
      ))}
      {rows.length < patch.rows.length && (
        <div className="diff-row diff-note">
          <button type="button" className="link small" onClick={() => setAll(true)}>
            Show all {patch.rows.length.toLocaleString()} lines
          </button>
        </div>
      )}
    </div>
  );
}

function PatchLine({ row: r }: { row: PatchRow }) {
  if (r.kind === "add" || r.kind === "del" || r.kind === "ctx") {
    return (
      <div className={`diff-row diff-${r.kind}`} role="row">
        <span className="ln">{r.oldNo ?? ""}</span>
        <span className="ln">{r.newNo ?? ""}</span>
        <span className="mark">{r.kind === "add" ? "+" : r.kind === "del" ? "-" : " "}</span>
        <span className="code">
          <VisibleText text={r.text} />
        </span>
      </div>
    );
  }
  return (
    <div className={`diff-row diff-${r.kind}`} role="row">
      <VisibleText text={r.text} />
    </div>
  );
}

// ---- the confirm dialog ---------------------------------------------------------------------

/**
 * A small modal: Cancel has the focus first, Tab stays inside (its buttons and checkboxes),
 * Escape and a click outside cancel, and the focus goes back to the button that opened it.
 * In a portal: the chat's rows are moved with transforms, which would pin a fixed overlay
 * to the row.
 */
export function ConfirmDialog({
  title,
  confirmLabel,
  testId,
  returnFocus,
  onConfirm,
  onCancel,
  confirmDisabled = false,
  danger = false,
  children,
}: {
  title: string;
  confirmLabel: string;
  testId?: string;
  /** Nothing to confirm yet (every item unchecked): the button says so and does nothing. */
  confirmDisabled?: boolean;
  /** The confirm destroys work: drawn as a danger button. */
  danger?: boolean;
  /** Where the focus goes when it closes (a clicked button need not have it: WebKit). */
  returnFocus?: RefObject<HTMLElement | null>;
  onConfirm: () => void;
  onCancel: () => void;
  children: ReactNode;
}) {
  const boxRef = useRef<HTMLDivElement>(null);
  const cancelRef = useRef<HTMLButtonElement>(null);
  const titleId = useId();
  const bodyId = useId();
  useEffect(() => {
    const active = document.activeElement instanceof HTMLElement && document.activeElement !== document.body ? document.activeElement : null;
    cancelRef.current?.focus();
    return () => {
      const back = returnFocus?.current ?? active;
      if (back?.isConnected) back.focus();
    };
    // Once, when it opens.
  }, []);
  const onKeyDown = (e: React.KeyboardEvent) => {
    if (e.key === "Escape") {
      e.preventDefault();
      e.stopPropagation();
      onCancel();
    } else {
      keepTabInside(e, boxRef.current);
    }
  };
  return createPortal(
    <div
      className="overlay dialog-overlay"
      onMouseDown={(e) => {
        if (e.target === e.currentTarget) onCancel();
      }}
    >
      <div ref={boxRef} className="dialog" role="alertdialog" aria-modal="true" aria-labelledby={titleId} aria-describedby={bodyId} data-testid={testId} onKeyDown={onKeyDown}>
        <h2 id={titleId} className="dialog-title">
          {title}
        </h2>
        <div id={bodyId} className="dialog-body">
          {children}
        </div>
        <div className="row dialog-actions">
          <button ref={cancelRef} type="button" className="btn" data-testid={testId ? `${testId}-cancel` : undefined} onClick={onCancel}>
            Cancel
          </button>
          <button
            type="button"
            className={danger ? "btn btn-danger" : "btn btn-primary"}
            data-testid={testId ? `${testId}-confirm` : undefined}
            aria-disabled={confirmDisabled || undefined}
            onClick={() => !confirmDisabled && onConfirm()}
          >
            {confirmLabel}
          </button>
        </div>
      </div>
    </div>,
    document.body,
  );
}

/** Tab and Shift+Tab go round a modal's controls, never out of it. */
export function keepTabInside(e: React.KeyboardEvent, box: HTMLElement | null) {
  if (e.key !== "Tab") return;
  const focusable = [...(box?.querySelectorAll<HTMLElement>("button:not(:disabled), input:not(:disabled), textarea:not(:disabled), select:not(:disabled)") ?? [])];
  const first = focusable[0];
  const last = focusable[focusable.length - 1];
  if (!first || !last) return;
  if (e.shiftKey && document.activeElement === first) {
    e.preventDefault();
    last.focus();
  } else if (!e.shiftKey && document.activeElement === last) {
    e.preventDefault();
    first.focus();
  }
}
