// A review of changes hunk by hunk (docs/worktrees.md, "Review and apply", "A chat's own
// changes"): the files changed, each changed text file hunk by hunk with its line numbers,
// each change checked or not — checked to begin with when the review applies what it
// shows (a worktree's), unchecked when it takes changes back (a chat's own) — and the one
// action that sends what is checked, its report (what was written, with Undo; or the
// conflicts with their markers, nothing written), Refresh, the keyboard and comments on
// lines sent to the chat's agent as one message (lib/reviewComments.ts). What the review is
// of — its loading, its action's command, its words — comes from the caller
// (components/WorktreeReview.tsx, components/ChatChangesReview.tsx). Paths and lines are
// the agent's data: they are rendered as text, escaped.

import { createContext, useCallback, useContext, useEffect, useMemo, useRef, useState, type ReactNode } from "react";
import type { ApplyReport, FileChoice, FileReview, HunkInfo } from "../protocol";
import { useApp, useTransport } from "../app/context";
import { errorText } from "../lib/format";
import { choicesOf, fileChoiceKeys, fileCounts, filesToApply, fileTaken, hunkKey, hunkPlace, hunkRows, leftOut, takenWhole, type HunkRow } from "../lib/worktrees";
import { commentsMessage, lineKey, lineWords, reviewLines, rowRef, sendLabel, sortComments, type LineRef, type ReviewComment } from "../lib/reviewComments";
import { VisibleText } from "./Arguments";
import { useRestore } from "./Checkpoints";
import { EmptyState, ErrorState, Icon, Spinner } from "./ui";

const STATUS_MARK: Record<FileReview["status"], { mark: string; words: string }> = {
  added: { mark: "A", words: "new" },
  modified: { mark: "M", words: "modified" },
  deleted: { mark: "D", words: "deleted" },
};

/** How many lines of one hunk show before "Show all". */
const HUNK_ROWS = 400;

export type Outcome = { report: ApplyReport } | { error: string };

/** How a review and its report speak of its action. */
export interface ReviewWords {
  /** "Take" (a change into the person's folder) or "Take back" (a chat's change, out of it). */
  verb: string;
  /** "2 of 3 changes taken". */
  count(taken: number, choices: number): string;
  /** "Could not apply". */
  failed: string;
  /** Why nothing was written: "1 file was changed in your folder too, in the same place." */
  conflicts(n: number): string;
  conflictsHint: string;
  /** Before the files written: "Applied to your folder (1 file): ". */
  written(n: number): string;
  /** Before the files, once undone: "Undone: your folder is back to how it was before the apply of ". */
  undone: string;
  /** Nothing needed writing. */
  nothing: string;
  /** Beside Undo. */
  undoHint: string;
}

/** Applying a worktree's changes to the person's folder (and the side-by-side view's apply). */
export const APPLY_WORDS: ReviewWords = {
  verb: "Take",
  count: (taken, n) => `${taken} of ${n} ${n === 1 ? "change" : "changes"} taken`,
  failed: "Could not apply",
  conflicts: (n) => `Nothing was written: ${n === 1 ? "1 file was" : `${n} files were`} changed in your folder too, in the same place.`,
  conflictsHint: "Change them so they no longer clash, or leave those changes out, and apply again.",
  written: (n) => `Applied to your folder (${n} ${n === 1 ? "file" : "files"}): `,
  undone: "Undone: your folder is back to how it was before the apply of ",
  nothing: "Nothing to write: your folder already has these changes.",
  undoHint: "Brings the files back to how they were before this apply.",
};

/** What the review's action does with what is checked. */
export interface ReviewAction {
  label: string;
  busyLabel: string;
  title: string;
  testId: string;
  /** Why it cannot be done now (the chat runs), shown beside it; null when it can. */
  disabledReason?: string | null;
  run(files: FileChoice[], snapshot: string | undefined): Promise<ApplyReport>;
}

interface Props {
  /** The section's test id and its data attributes. */
  testId: string;
  data?: Record<string, string>;
  heading: string;
  /** Beside the heading (a worktree's kind). */
  chip?: ReactNode;
  /** Back to where the review was opened from; `backLabel` says where. */
  onBack: () => void;
  backLabel: string;
  /** Facts above the help (folders, the chat). */
  facts?: ReactNode;
  help: ReactNode;
  /** A notice above the bar (the agent is still working). */
  notice?: ReactNode;
  /** Above the bar, under the notice (a git worktree's commit and merge), given the
   *  state the review shows (what a commit must hold). */
  beforeBar?: (snapshot: string | undefined) => ReactNode;
  /** At the bar's end (Discard worktree). */
  barEnd?: ReactNode;
  /** Under the bar (a discard's error). */
  afterBar?: ReactNode;
  /** Reads the changes; `loadKey` changing reads them anew. */
  load(): Promise<{ files: FileReview[]; snapshot: string }>;
  loadKey: string;
  /** What "Reading…" and its failure say: "the worktree's changes". */
  what: string;
  refreshTitle: string;
  empty: { title: string; text: string };
  /** Whether a change is taken unless unchecked (else: only when checked). */
  takenByDefault: boolean;
  action: ReviewAction;
  words: ReviewWords;
  /** The action changes what the review shows: read it again after it and after Undo. */
  reloadAfterAction?: boolean;
  /** Told after the action and after Undo (the worktrees are read again). */
  onActed?: () => void;
  /** The chat comments go to (null: it was deleted); comments are off when undefined. */
  commentsTo?: number | null;
}

export function ChangesReview(p: Props) {
  const t = useTransport();
  const { openSession } = useApp();

  // ---- the changes ----
  const [files, setFiles] = useState<FileReview[] | null>(null);
  // The state these files are of: the action is refused if it changed since.
  const [snapshot, setSnapshot] = useState<string | undefined>(undefined);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const seq = useRef(0);
  const loadRef = useRef(p.load);
  loadRef.current = p.load;
  const load = useCallback(async () => {
    const n = ++seq.current;
    setLoading(true);
    try {
      const r = await loadRef.current();
      if (n !== seq.current) return;
      setFiles(r.files);
      setSnapshot(r.snapshot);
      setLoadError(null);
    } catch (e) {
      if (n === seq.current) setLoadError(errorText(e));
    } finally {
      if (n === seq.current) setLoading(false);
    }
  }, []);
  useEffect(() => {
    void load();
  }, [load, p.loadKey]);

  // ---- what is taken: the default, but for what the person flipped ----
  const [flipped, setFlipped] = useState<ReadonlySet<string>>(() => new Set());
  const choices = useMemo(() => choicesOf(files ?? []), [files]);
  const left = useMemo(() => leftOut(files ?? [], flipped, p.takenByDefault), [files, flipped, p.takenByDefault]);
  const choiceIndex = useMemo(() => new Map(choices.map((c, i) => [c.key, i])), [choices]);
  const taken = choices.filter((c) => !left.has(c.key)).length;
  const setTaken = (keys: string[], take: boolean) =>
    setFlipped((old) => {
      const next = new Set(old);
      // Flipped: left out where taken by default, taken where not.
      const flip = take !== p.takenByDefault;
      for (const k of keys) {
        if (flip) next.add(k);
        else next.delete(k);
      }
      return next;
    });

  // ---- the keyboard: a roving focus over the choices ----
  const bodyRef = useRef<HTMLDivElement>(null);
  const [focusAt, setFocusAt] = useState(0);
  const focusChoice = (i: number) => {
    const el = bodyRef.current?.querySelector<HTMLElement>(`[data-choice='${i}']`);
    if (!el) return;
    setFocusAt(i);
    el.focus();
    el.closest("[data-testid='review-hunk'], [data-testid='review-file']")?.scrollIntoView({ block: "nearest" });
  };
  // The first change has the focus once the changes are first shown: the keys work at once.
  const focusedOnce = useRef(false);
  useEffect(() => {
    if (focusedOnce.current || choices.length === 0) return;
    focusedOnce.current = true;
    bodyRef.current?.querySelector<HTMLElement>("[data-choice='0']")?.focus();
  }, [choices.length]);
  const focusIndex = Math.min(focusAt, Math.max(0, choices.length - 1));

  // ---- the action, undo ----
  const [acting, setActing] = useState(false);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const [undone, setUndone] = useState(false);
  const undo = useRestore();
  const blocked = p.action.disabledReason ?? null;
  const act = async () => {
    if (!files || taken === 0 || acting || blocked) return;
    setActing(true);
    setOutcome(null);
    setUndone(false);
    try {
      const report = await p.action.run(filesToApply(files, left), snapshot);
      setOutcome({ report });
      // What was checked is done: the changes are read again, nothing checked.
      if (p.reloadAfterAction && report.conflicts.length === 0 && report.written.length > 0) {
        setFlipped(new Set());
        void load();
      }
    } catch (e) {
      setOutcome({ error: errorText(e) });
    } finally {
      setActing(false);
      p.onActed?.();
    }
  };
  const onUndo = async (id: number) => {
    const ok = await undo.restore(id);
    setUndone(ok);
    if (ok) {
      p.onActed?.();
      if (p.reloadAfterAction) void load();
    }
  };

  // ---- comments on lines, sent to the agent as one message ----
  const commentsOn = p.commentsTo !== undefined;
  const chatId = p.commentsTo ?? null;
  const [comments, setComments] = useState<ReviewComment[]>([]);
  const [editing, setEditing] = useState<string | null>(null);
  const [sending, setSending] = useState(false);
  const [sendOutcome, setSendOutcome] = useState<{ sent: number; queued: boolean } | { error: string } | null>(null);
  const commentSeq = useRef(0);
  const shownLines = useMemo(() => reviewLines(files ?? []), [files]);
  const orphans = comments.filter((c) => !shownLines.has(lineKey(c)));
  const commentsValue = useMemo<CommentsValue>(() => {
    const byLine = new Map<string, ReviewComment[]>();
    for (const c of comments) byLine.set(lineKey(c), [...(byLine.get(lineKey(c)) ?? []), c]);
    return {
      byLine,
      editing,
      edit: (key) => {
        setEditing(key);
        setSendOutcome(null);
      },
      add: (line, quote, text) => {
        setComments((old) => [...old, { id: `c${++commentSeq.current}`, ...line, quote, text }]);
        setEditing(null);
      },
      remove: (id) => setComments((old) => old.filter((c) => c.id !== id)),
    };
  }, [comments, editing]);
  const sendComments = async () => {
    if (chatId == null || comments.length === 0 || sending) return;
    const sorted = sortComments(comments, files ?? []);
    setSending(true);
    setSendOutcome(null);
    try {
      const r = await t.call({ cmd: "send_message", session_id: chatId, text: commentsMessage(sorted) });
      const sentIds = new Set(sorted.map((c) => c.id));
      setComments((old) => old.filter((c) => !sentIds.has(c.id)));
      setSendOutcome({ sent: sorted.length, queued: r.queued });
    } catch (e) {
      setSendOutcome({ error: errorText(e) });
    } finally {
      setSending(false);
    }
  };
  /** Opens a comment on the first line of choice `i` (the `c` key on a change). */
  const commentOnChoice = (i: number) => {
    const choice = choices[i];
    const f = choice && files?.find((x) => x.path === choice.path);
    if (!choice || !f || f.binary) return;
    const hunk = choice.hunk == null ? f.hunks[0] : f.hunks.find((h) => h.index === choice.hunk);
    const first = hunk && hunkRows(hunk)[0];
    if (first) commentsValue.edit(lineKey(rowRef(f.path, first)));
  };

  const onKeyDown = (e: React.KeyboardEvent) => {
    // A dialog is in a portal: its keys reach here through React, not the page.
    if (!e.currentTarget.contains(e.target as Node)) return;
    const target = e.target as HTMLElement;
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      void act();
      return;
    }
    if (e.ctrlKey || e.metaKey || e.altKey || target.matches("input:not([type='checkbox']), textarea, select")) return;
    // On a change, the keys move from it; elsewhere in the view (a button), j/k go back to
    // the change last in focus.
    const onChoice = target.dataset.choice != null;
    const step = (d: number) => (onChoice ? Number(target.dataset.choice) + d : focusIndex);
    const key = e.key;
    if (choices.length > 0 && (key === "j" || (onChoice && key === "ArrowDown"))) {
      e.preventDefault();
      focusChoice(Math.min(choices.length - 1, step(1)));
    } else if (choices.length > 0 && (key === "k" || (onChoice && key === "ArrowUp"))) {
      e.preventDefault();
      focusChoice(Math.max(0, step(-1)));
    } else if (key === "Enter" && onChoice) {
      e.preventDefault();
      void act();
    } else if (key === "c" && onChoice && commentsOn) {
      e.preventDefault();
      commentOnChoice(Number(target.dataset.choice));
    }
  };

  const dataAttrs = Object.fromEntries(Object.entries(p.data ?? {}).map(([k, v]) => [`data-${k}`, v]));
  const list = (
    <ul className="review-files" aria-label="Changed files">
      {(files ?? []).map((f) => (
        <FileView key={f.path} file={f} verb={p.words.verb} marksTaken={!p.takenByDefault} left={left} choiceIndex={choiceIndex} focusIndex={focusIndex} onTake={setTaken} onFocusChoice={setFocusAt} />
      ))}
    </ul>
  );
  return (
    <section className="screen review" aria-labelledby="review-h" data-testid={p.testId} {...dataAttrs}>
      <header className="screen-header">
        <button type="button" className="icon-btn back-btn" data-testid="review-back" aria-label={p.backLabel} title={p.backLabel} onClick={p.onBack}>
          <Icon name="chevron" />
        </button>
        <h1 id="review-h">{p.heading}</h1>
        {p.chip}
      </header>
      <div className="screen-body review-body" ref={bodyRef} onKeyDown={onKeyDown}>
        {p.facts}
        <p className="small muted review-help" data-testid="review-help">
          {p.help}
        </p>
        {p.notice}
        {p.beforeBar?.(snapshot)}
        {/* `aria-disabled`, not `disabled`: a button pressed from the keyboard keeps the focus. */}
        <div className="review-bar">
          <span className="grow small muted" data-testid="review-count">
            {files == null ? "" : files.length === 0 ? "No changes" : `${files.length} ${files.length === 1 ? "file" : "files"} · ${p.words.count(taken, choices.length)}`}
          </span>
          {blocked && (
            <span className="small muted review-blocked" data-testid="review-blocked">
              {blocked}
            </span>
          )}
          <button
            type="button"
            className="btn btn-primary"
            data-testid={p.action.testId}
            aria-disabled={!files || taken === 0 || acting || blocked != null}
            title={blocked ?? p.action.title}
            onClick={() => void act()}
          >
            {acting ? p.action.busyLabel : p.action.label}
          </button>
          <button type="button" className="btn" data-testid="review-refresh" title={p.refreshTitle} aria-disabled={loading} onClick={() => !loading && void load()}>
            <Icon name="refresh" size={14} /> {loading && files ? "Refreshing…" : "Refresh"}
          </button>
          {comments.length > 0 && (
            <button
              type="button"
              className="btn btn-accent-soft"
              data-testid="review-send-comments"
              aria-disabled={sending || chatId == null}
              title={chatId == null ? "The chat was deleted: there is no agent to send them to" : "Send the comments to the agent as one message"}
              onClick={() => void sendComments()}
            >
              <Icon name="send" size={14} /> {sending ? "Sending…" : sendLabel(comments.length)}
            </button>
          )}
          {p.barEnd}
        </div>
        {p.afterBar}
        {sendOutcome &&
          ("error" in sendOutcome ? (
            <div className="error-text small" role="alert" data-testid="comments-error">
              Could not send the comments: <VisibleText text={sendOutcome.error} inline />
            </div>
          ) : (
            <div className="notice notice-info review-outcome comments-sent" role="status" data-testid="comments-sent">
              <div>
                Sent {sendOutcome.sent === 1 ? "1 comment" : `${sendOutcome.sent} comments`} to the agent
                {sendOutcome.queued ? ": it is working, and reads them at its next step." : ", as its next message."}{" "}
                {chatId != null && (
                  <button type="button" className="link" data-testid="comments-open-chat" onClick={() => openSession(chatId)}>
                    Open the chat
                  </button>
                )}
              </div>
            </div>
          ))}
        {orphans.length > 0 && (
          <div className="notice notice-warning small" data-testid="comments-orphans">
            <strong>Comments on lines the changes no longer show</strong> (still sent with the others):
            <ul className="line-comments">
              {orphans.map((c) => (
                <CommentItem key={c.id} comment={c} label={`${c.path} ${lineWords(c)}`} onRemove={() => commentsValue.remove(c.id)} />
              ))}
            </ul>
          </div>
        )}
        {outcome && <ApplyOutcome outcome={outcome} words={p.words} undone={undone} undo={undo} onUndo={onUndo} />}
        {files == null ? (
          loadError ? (
            <ErrorState message={`Could not read ${p.what}: ${loadError}`} onRetry={() => void load()} testId="review-load-error" />
          ) : (
            <Spinner label={`Reading ${p.what}…`} />
          )
        ) : (
          <>
            {loadError && (
              <div className="error-text small" role="alert" data-testid="review-load-error">
                Could not refresh: <VisibleText text={loadError} inline />
              </div>
            )}
            {files.length === 0 ? (
              <EmptyState title={p.empty.title}>{p.empty.text}</EmptyState>
            ) : commentsOn ? (
              <CommentsContext.Provider value={commentsValue}>{list}</CommentsContext.Provider>
            ) : (
              list
            )}
          </>
        )}
      </div>
    </section>
  );
}

/** An apply's (or a taking back's) report: what was written, with Undo; the conflicts; or the refusal. */
export function ApplyOutcome({
  outcome,
  words = APPLY_WORDS,
  undone,
  undo,
  onUndo,
}: {
  outcome: Outcome;
  words?: ReviewWords;
  undone: boolean;
  undo: ReturnType<typeof useRestore>;
  onUndo: (id: number) => Promise<void>;
}) {
  if ("error" in outcome) {
    return (
      <div className="notice notice-error review-outcome" role="alert" data-testid="apply-report" data-result="error">
        {words.failed}: <VisibleText text={outcome.error} inline />
      </div>
    );
  }
  const r = outcome.report;
  if (r.conflicts.length > 0) {
    return (
      <div className="notice notice-warning review-outcome" role="alert" data-testid="apply-report" data-result="conflicts">
        <strong>{words.conflicts(r.conflicts.length)}</strong>
        <div className="small">{words.conflictsHint}</div>
        <ul className="review-conflicts">
          {r.conflicts.map((c) => (
            <li key={c.path} data-testid="apply-conflict" data-path={c.path}>
              <code>
                <VisibleText text={c.path} inline />
              </code>
              {c.markers != null ? (
                <pre className="result review-markers" data-testid="conflict-markers">
                  <VisibleText text={c.markers} />
                </pre>
              ) : (
                <div className="small muted">Both sides changed it (a binary file, or one removed it): there is no text to show.</div>
              )}
            </li>
          ))}
        </ul>
      </div>
    );
  }
  const list = (paths: string[]) => paths.map((p, i) => <code key={i}>{i > 0 ? ", " : ""}<VisibleText text={p} inline /></code>);
  return (
    <div className="notice notice-info review-outcome" role="status" data-testid="apply-report" data-result="written" data-undone={undone ? "1" : undefined}>
      {r.written.length > 0 ? (
        <div data-testid="apply-written">
          {undone ? words.undone : words.written(r.written.length)}
          {list(r.written)}
        </div>
      ) : (
        <div data-testid="apply-written">{words.nothing}</div>
      )}
      {r.unchanged.length > 0 && (
        <div className="small muted" data-testid="apply-unchanged">
          Already the same: {list(r.unchanged)}
        </div>
      )}
      {r.checkpoint_id != null && r.written.length > 0 && !undone && (
        <div className="row">
          <button type="button" className="btn small-btn" data-testid="apply-undo" aria-disabled={undo.busy} onClick={() => !undo.busy && void onUndo(r.checkpoint_id!)}>
            <Icon name="undo" size={12} /> {undo.busy ? "Undoing…" : "Undo"}
          </button>
          <span className="small muted">{words.undoHint}</span>
        </div>
      )}
      {undo.error && (
        <div className="error-text small" role="alert" data-testid="apply-undo-error">
          <VisibleText text={undo.error} inline />
        </div>
      )}
    </div>
  );
}

function FileView({
  file: f,
  verb,
  marksTaken,
  left,
  choiceIndex,
  focusIndex,
  onTake,
  onFocusChoice,
}: {
  file: FileReview;
  /** "Take" or "Take back", for the checkboxes' labels. */
  verb: string;
  /**
   * What is taken is the exception (taken back): it is marked, and what is not stays as it
   * is; else what is left out is dimmed.
   */
  marksTaken: boolean;
  left: ReadonlySet<string>;
  choiceIndex: Map<string, number>;
  focusIndex: number;
  onTake: (keys: string[], take: boolean) => void;
  onFocusChoice: (i: number) => void;
}) {
  const whole = takenWhole(f);
  const state = fileTaken(f, left);
  const counts = fileCounts(f);
  const s = STATUS_MARK[f.status];
  const keys = fileChoiceKeys(f);
  const wholeAt = whole ? choiceIndex.get(keys[0]!) : undefined;
  return (
    <li className={marksTaken ? (state === "none" ? "review-file" : "review-file marked") : state === "none" ? "review-file left" : "review-file"} data-testid="review-file" data-path={f.path} data-status={f.status} data-taken={state}>
      <div className="review-file-head">
        <input
          type="checkbox"
          data-testid="file-check"
          data-choice={wholeAt}
          tabIndex={wholeAt != null && wholeAt !== focusIndex ? -1 : 0}
          checked={state !== "none"}
          ref={(el) => {
            if (el) el.indeterminate = state === "some";
          }}
          aria-label={whole ? `${verb} ${f.path} (${s.words})` : `${verb} every change of ${f.path}`}
          onFocus={() => wholeAt != null && onFocusChoice(wholeAt)}
          onChange={() => onTake(keys, state !== "all")}
        />
        <span className={`change-mark change-${f.status}`} title={s.words} aria-hidden="true">
          {s.mark}
        </span>
        <span className="checkpoint-path review-path">
          <VisibleText text={f.path} inline />
        </span>
        <span className="checkpoint-stat" data-testid="file-stat">
          {f.binary ? (
            "binary"
          ) : (
            <>
              <span className="add">+{counts.added}</span> <span className="del">−{counts.removed}</span>
            </>
          )}
        </span>
        <span className="sr-only">({s.words})</span>
      </div>
      {f.binary ? (
        <div className="small muted review-note">A binary file: taken or left whole.</div>
      ) : whole ? (
        f.hunks.length > 0 && (
          <div className="diff review-diff" role="table" aria-label={`${f.path}, ${s.words}`}>
            {f.hunks.map((h) => (
              <HunkLines key={h.index} path={f.path} hunk={h} />
            ))}
          </div>
        )
      ) : (
        <div className="review-hunks">
          {f.hunks.map((h, n) => {
            const at = choiceIndex.get(hunkKey(f.path, h))!;
            const isTaken = !left.has(hunkKey(f.path, h));
            return (
              <div key={h.index} className={marksTaken ? (isTaken ? "review-hunk marked" : "review-hunk") : isTaken ? "review-hunk" : "review-hunk left"} data-testid="review-hunk" data-index={h.index} data-taken={isTaken ? "1" : "0"}>
                <label className="review-hunk-head small">
                  <input
                    type="checkbox"
                    data-testid="hunk-check"
                    data-choice={at}
                    tabIndex={at === focusIndex ? 0 : -1}
                    checked={isTaken}
                    onFocus={() => onFocusChoice(at)}
                    onChange={(e) => onTake([hunkKey(f.path, h)], e.target.checked)}
                  />
                  <span>
                    Change {n + 1} of {f.hunks.length} · {hunkPlace(h)}
                  </span>
                  <span className="sr-only"> of {f.path}</span>
                  <span className="checkpoint-stat">
                    <span className="add">+{h.added.length}</span> <span className="del">−{h.removed.length}</span>
                  </span>
                </label>
                <div className="diff review-diff" role="table" aria-label={`Change ${n + 1} of ${f.path}`}>
                  <HunkLines path={f.path} hunk={h} />
                </div>
              </div>
            );
          })}
        </div>
      )}
    </li>
  );
}

function HunkLines({ path, hunk }: { path: string; hunk: HunkInfo }) {
  const rows = useMemo(() => hunkRows(hunk), [hunk]);
  const [all, setAll] = useState(false);
  const comments = useContext(CommentsContext);
  // A comment being written, or made, on a line past the first ones shows them all.
  const commented = comments != null && rows.some((r, i) => i >= HUNK_ROWS && (comments.byLine.has(lineKey(rowRef(path, r))) || comments.editing === lineKey(rowRef(path, r))));
  const shown = all || commented ? rows : rows.slice(0, HUNK_ROWS);
  return (
    <>
      {shown.map((r, i) => (
        <HunkLine key={i} path={path} row={r} />
      ))}
      {shown.length < rows.length && (
        <div className="diff-row diff-note">
          <button type="button" className="link small" onClick={() => setAll(true)}>
            Show all {rows.length.toLocaleString()} lines
          </button>
        </div>
      )}
    </>
  );
}

function HunkLine({ path, row: r }: { path: string; row: HunkRow }) {
  const comments = useContext(CommentsContext);
  const line = rowRef(path, r);
  const key = lineKey(line);
  const mine = comments?.byLine.get(key) ?? [];
  const editing = comments?.editing === key;
  const buttonRef = useRef<HTMLButtonElement>(null);
  const words = `${path} ${lineWords(line)}`;
  return (
    <>
      <div className={`diff-row diff-${r.kind}${editing || mine.length > 0 ? " commented" : ""}`} role="row" data-line={key}>
        {comments && (
          <button
            ref={buttonRef}
            type="button"
            className="line-comment-btn"
            data-testid="line-comment"
            aria-label={`Comment on ${words}`}
            title="Comment on this line"
            aria-expanded={editing}
            onClick={() => comments.edit(editing ? null : key)}
          >
            <Icon name="plus" size={11} />
          </button>
        )}
        <span className="ln">{r.oldNo ?? ""}</span>
        <span className="ln">{r.newNo ?? ""}</span>
        <span className="mark">{r.kind === "add" ? "+" : "-"}</span>
        <span className="code">
          <VisibleText text={r.text} />
        </span>
      </div>
      {r.noEol && (
        <div className="diff-row diff-note" role="row">
          \ No newline at end of file
        </div>
      )}
      {comments && mine.length > 0 && (
        <ul className="line-comments" aria-label={`Comments on ${words}`}>
          {mine.map((c) => (
            <CommentItem
              key={c.id}
              comment={c}
              label={words}
              onRemove={() => {
                comments.remove(c.id);
                buttonRef.current?.focus();
              }}
            />
          ))}
        </ul>
      )}
      {comments && editing && (
        <CommentEditor
          label={words}
          onAdd={(text) => {
            comments.add(line, r.text, text);
            buttonRef.current?.focus();
          }}
          onCancel={() => {
            comments.edit(null);
            buttonRef.current?.focus();
          }}
        />
      )}
    </>
  );
}

/** What the lines of a review need to take comments. */
interface CommentsValue {
  byLine: Map<string, ReviewComment[]>;
  /** The line whose comment is being written (its key). */
  editing: string | null;
  edit(key: string | null): void;
  add(line: LineRef, quote: string, text: string): void;
  remove(id: string): void;
}

const CommentsContext = createContext<CommentsValue | null>(null);

function CommentItem({ comment: c, label, onRemove }: { comment: ReviewComment; label: string; onRemove: () => void }) {
  return (
    <li className="line-comment-item" data-testid="line-comment-item">
      <span className="line-comment-text">
        <VisibleText text={c.text} />
      </span>
      <button type="button" className="icon-btn" data-testid="line-comment-remove" aria-label={`Remove the comment on ${label}`} title="Remove this comment" onClick={onRemove}>
        <Icon name="trash" size={13} />
      </button>
    </li>
  );
}

/** A comment being written: Enter adds it (Shift+Enter: a new line), Escape leaves it. */
function CommentEditor({ label, onAdd, onCancel }: { label: string; onAdd: (text: string) => void; onCancel: () => void }) {
  const [text, setText] = useState("");
  const add = () => {
    if (text.trim() !== "") onAdd(text.trim());
  };
  return (
    <div className="line-comment-editor" data-testid="line-comment-editor">
      <textarea
        autoFocus
        rows={2}
        data-testid="line-comment-input"
        aria-label={`Comment on ${label}`}
        placeholder="What should the agent change here?"
        value={text}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={(e) => {
          // The review's own keys (Ctrl+Enter applies) are not for the comment.
          e.stopPropagation();
          if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) {
            e.preventDefault();
            add();
          } else if (e.key === "Escape") {
            e.preventDefault();
            onCancel();
          }
        }}
      />
      <div className="row">
        <button type="button" className="btn btn-primary small-btn" data-testid="line-comment-add" aria-disabled={text.trim() === ""} onClick={add}>
          Add comment
        </button>
        <button type="button" className="btn small-btn" data-testid="line-comment-cancel" onClick={onCancel}>
          Cancel
        </button>
        <span className="small muted">Enter adds it, Shift+Enter starts a new line, Escape cancels.</span>
      </div>
    </div>
  );
}
