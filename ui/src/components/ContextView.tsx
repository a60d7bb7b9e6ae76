// The chat's context view (docs/ui.md, docs/instructions.md): a chip in the chat header
// saying how many AGENTS.md files the agent is given ("AGENTS.md ×2"), and its panel
// listing the project root, each file (whose, how much of it, and why it was cut or not
// read) and the skills found. Asked for with `session_context` when the chat opens and
// whenever the panel opens; a `context` event at the start of one of the chat's turns
// updates it. Paths, names and notes are the project's data: rendered as text, escaped.
//
// A project's `.skald/hooks.json` (docs/hooks.md) runs only once the person approved its
// content: until then the chip carries a dot and the panel says so, with the file to read
// and an Approve button (`approve_hooks` with the SHA-256 shown, whose reply is the new
// context; refused when the file changed since).

import { useCallback, useEffect, useId, useLayoutEffect, useRef, useState } from "react";
import type { InstructionFile, ProjectHooks, TurnContext } from "../protocol";
import { useApp, useEvents, useTransport } from "../app/context";
import { errorText } from "../lib/format";
import { chipLabel, contextSummary, fileState, homeOf, hooksCount, isEmpty, shortDir, shortPath, sizeText } from "../lib/instructions";
import { VisibleText } from "./Arguments";
import { Icon } from "./ui";

/** The key that opens and closes the panel (with Ctrl or Cmd and Shift), as shown. */
export const CONTEXT_SHORTCUT = "Ctrl+Shift+X";

interface Props {
  sessionId: number;
  /** Open from outside (the shortcut, the palette); uncontrolled when absent. */
  open?: boolean;
  onOpenChange?: (open: boolean) => void;
}

export function ContextButton({ sessionId, open: openProp, onOpenChange }: Props) {
  const t = useTransport();
  const [ctx, setCtx] = useState<TurnContext | null>(null);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<string | null>(null);
  const [ownOpen, setOwnOpen] = useState(false);
  const open = openProp ?? ownOpen;
  const setOpen = useCallback(
    (o: boolean) => {
      if (openProp === undefined) setOwnOpen(o);
      onOpenChange?.(o);
    },
    [openProp, onOpenChange],
  );

  // Only the latest request may set the context, and none sent before a `context` event
  // (the event is what the turn was given).
  const seq = useRef(0);
  const load = useCallback(() => {
    const n = ++seq.current;
    setLoading(true);
    t.call({ cmd: "session_context", session_id: sessionId }).then(
      (r) => {
        if (n !== seq.current) return;
        setLoading(false);
        if (r.context) {
          setCtx(r.context);
          setError(null);
        } else {
          setError("the server did not say");
        }
      },
      (e: unknown) => {
        if (n !== seq.current) return;
        setLoading(false);
        setError(errorText(e));
      },
    );
  }, [t, sessionId]);
  useEffect(() => {
    setCtx(null);
    setError(null);
    load();
    return () => {
      seq.current++;
    };
  }, [load]);
  // Each opening reads it again: the files are read afresh at every turn.
  useEffect(() => {
    if (open) load();
  }, [open, load]);
  useEvents((_sid, e) => {
    if (e.type !== "context" || e.session_id !== sessionId) return;
    seq.current++;
    setCtx(e.context);
    setLoading(false);
    setError(null);
  });
  // Approving the project's hooks: the reply is the context as it is now (and a reply
  // asked for before it may still say "not approved").
  const approve = useCallback(
    async (sha256: string) => {
      const r = await t.call({ cmd: "approve_hooks", session_id: sessionId, sha256 });
      seq.current++;
      setCtx(r.context);
      setLoading(false);
      setError(null);
    },
    [t, sessionId],
  );

  // Focus: into the panel when it opens; back to where it was (the chip when it was
  // nowhere) when it closes from inside it — Escape, Close, the shortcut — but not on a
  // click elsewhere or a Tab away, which put the focus where the person wants it.
  const wrapRef = useRef<HTMLDivElement>(null);
  const buttonRef = useRef<HTMLButtonElement>(null);
  const panelRef = useRef<HTMLDivElement>(null);
  const returnTo = useRef<HTMLElement | null>(null);
  const restoreFocus = useRef(true);
  const wasOpen = useRef(false);
  useLayoutEffect(() => {
    if (open && !wasOpen.current) {
      const active = document.activeElement;
      returnTo.current = active instanceof HTMLElement && active !== document.body && !wrapRef.current?.contains(active) ? active : null;
      restoreFocus.current = true;
      panelRef.current?.focus();
    } else if (!open && wasOpen.current && restoreFocus.current) {
      const back = returnTo.current?.isConnected ? returnTo.current : buttonRef.current;
      back?.focus();
    }
    wasOpen.current = open;
  }, [open]);

  // A click outside closes it (focus may not move: most of the page takes none).
  useEffect(() => {
    if (!open) return;
    const onDown = (e: PointerEvent) => {
      if (wrapRef.current?.contains(e.target as Node | null)) return;
      restoreFocus.current = false;
      setOpen(false);
    };
    document.addEventListener("pointerdown", onDown);
    return () => document.removeEventListener("pointerdown", onDown);
  }, [open, setOpen]);

  const label = chipLabel(ctx);
  const summary = contextSummary(ctx);
  const className = ["context-chip", label.warn ? "warn" : "", label.muted ? "quiet" : "", label.hooks === "pending" ? "attention" : ""].filter(Boolean).join(" ");
  const given = ctx?.instructions.filter((f) => f.included > 0).length ?? 0;

  return (
    <div
      ref={wrapRef}
      className="menu-wrap"
      onBlur={(e) => {
        // Close when focus moves elsewhere (Tab away); not when it merely drops to the page.
        const to = e.relatedTarget as Node | null;
        if (open && to && !e.currentTarget.contains(to)) {
          restoreFocus.current = false;
          setOpen(false);
        }
      }}
      onKeyDown={(e) => {
        if (e.key === "Escape" && open) {
          e.stopPropagation();
          e.preventDefault();
          setOpen(false);
        }
      }}
    >
      <button
        ref={buttonRef}
        type="button"
        className={className}
        data-testid="context-chip"
        data-count={given}
        data-hooks={label.hooks ?? undefined}
        aria-haspopup="dialog"
        aria-expanded={open}
        aria-label={`${summary}. Show the context (${CONTEXT_SHORTCUT})`}
        title={`${summary} (${CONTEXT_SHORTCUT})`}
        onClick={() => setOpen(!open)}
      >
        <Icon name={label.warn ? "warning" : "file"} size={13} />
        {label.text}
        {label.hooks === "pending" && <span className="context-chip-dot" data-testid="context-hooks-dot" aria-hidden="true" />}
      </button>
      {open && (
        <ContextPanel
          panelRef={panelRef}
          ctx={ctx}
          loading={loading}
          error={error}
          onRefresh={load}
          onApprove={approve}
          onClose={() => setOpen(false)}
        />
      )}
    </div>
  );
}

function ContextPanel({
  panelRef,
  ctx,
  loading,
  error,
  onRefresh,
  onApprove,
  onClose,
}: {
  panelRef: React.RefObject<HTMLDivElement | null>;
  ctx: TurnContext | null;
  loading: boolean;
  error: string | null;
  onRefresh: () => void;
  onApprove: (sha256: string) => Promise<void>;
  onClose: () => void;
}) {
  const { openViewer } = useApp();
  const titleId = useId();
  const filesId = useId();
  const skillsId = useId();
  const home = ctx ? homeOf(ctx) : null;
  const open = (path: string) => {
    openViewer(path);
    onClose();
  };
  return (
    <div ref={panelRef} className="menu menu-down context-panel" data-testid="context-panel" role="dialog" aria-labelledby={titleId} aria-busy={loading} tabIndex={-1}>
      <div className="context-head">
        <h2 id={titleId} className="context-title">
          Context
        </h2>
        <span className="grow muted small">What the agent is given besides its prompt</span>
        {loading && <span className="spinner small-spinner" role="status" aria-label="Loading the context" />}
        <button type="button" className="icon-btn" data-testid="context-refresh" aria-label="Read it again" title="Read it again" onClick={onRefresh}>
          <Icon name="refresh" size={14} />
        </button>
        <button type="button" className="icon-btn" data-testid="context-close" aria-label="Close (Esc)" title="Close (Esc)" onClick={onClose}>
          <Icon name="close" size={14} />
        </button>
      </div>
      {error && (
        <div className="error-text small context-error" role="alert" data-testid="context-error">
          Could not read the context: <VisibleText text={error} inline />
        </div>
      )}
      {ctx && (
        <div className="context-root small" data-testid="context-root">
          <span className="muted">Project</span>
          <span className="context-mono" title={ctx.project_root}>
            <VisibleText text={shortDir(ctx.project_root, home)} inline />
          </span>
        </div>
      )}
      {ctx?.project_hooks && (
        <HooksSection
          hooks={ctx.project_hooks}
          shown={shortPath(ctx.project_hooks.path, ctx.project_root, home)}
          onOpen={open}
          onApprove={onApprove}
          onRefresh={onRefresh}
          onApproved={() => panelRef.current?.focus()}
        />
      )}
      {ctx && isEmpty(ctx) && (
        <div className="context-empty small" data-testid="context-empty">
          <strong>No AGENTS.md files or skills here.</strong>
          <p className="muted">
            The agent is given the project's <code>AGENTS.md</code> files, from the project root down to this chat's folder, and yours in{" "}
            <code>~/.config/skald/AGENTS.md</code>. Skills come from <code>.agents/skills</code>.
          </p>
        </div>
      )}
      {ctx && ctx.instructions.length > 0 && (
        <section className="context-section" aria-labelledby={filesId}>
          <h3 id={filesId} className="context-section-title">
            AGENTS.md <span className="muted">· in this order, the nearest last (it weighs most)</span>
          </h3>
          <ol className="context-list" data-testid="context-files">
            {ctx.instructions.map((f, i) => (
              <FileRow key={`${i}:${f.path}`} file={f} shown={shortPath(f.path, ctx.project_root, home)} onOpen={open} />
            ))}
          </ol>
        </section>
      )}
      {ctx && ctx.skills.length > 0 && (
        <section className="context-section" aria-labelledby={skillsId}>
          <h3 id={skillsId} className="context-section-title">
            Skills <span className="muted">· the agent reads one when a task calls for it</span>
          </h3>
          <ul className="context-list" data-testid="context-skills">
            {ctx.skills.map((s, i) => (
              <li key={`${i}:${s.path}`} className="context-item" data-testid="context-skill" data-source={s.source}>
                <div className="context-item-head">
                  <button type="button" className="link context-name" title={`Open ${s.path}`} onClick={() => open(s.path)}>
                    <VisibleText text={s.name} inline />
                  </button>
                  <SourceTag source={s.source} />
                </div>
                {s.description && (
                  <div className="muted small context-description">
                    <VisibleText text={s.description} inline />
                  </div>
                )}
              </li>
            ))}
          </ul>
        </section>
      )}
      {ctx && !isEmpty(ctx) && <div className="muted small context-foot">Read again at every turn: an edit holds from the next message.</div>}
    </div>
  );
}

/**
 * The project's hooks file: while its content is not approved, what that means, the file to
 * read and Approve; once approved, one line. A file that configures no hooks (or could not
 * be read) has nothing to approve.
 */
function HooksSection({
  hooks: h,
  shown,
  onOpen,
  onApprove,
  onRefresh,
  onApproved,
}: {
  hooks: ProjectHooks;
  shown: string;
  onOpen: (path: string) => void;
  onApprove: (sha256: string) => Promise<void>;
  onRefresh: () => void;
  onApproved: () => void;
}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const file = (
    <button type="button" className="link context-path context-mono" data-testid="context-hooks-file" title={`Open ${h.path}`} onClick={() => onOpen(h.path)}>
      <VisibleText text={shown} inline />
    </button>
  );
  const state = h.hooks === 0 ? "none" : h.approved ? "approved" : "pending";
  const approve = () => {
    if (busy) return;
    setBusy(true);
    setError(null);
    onApprove(h.sha256).then(
      () => {
        setBusy(false);
        onApproved();
      },
      (e: unknown) => {
        setBusy(false);
        setError(errorText(e));
        // It may have changed since: show what is there now.
        onRefresh();
      },
    );
  };
  return (
    <section className={`context-section context-hooks context-hooks-${state}`} aria-label="Project hooks" data-testid="context-hooks" data-state={state}>
      {state === "pending" ? (
        <div className="context-hooks-notice" data-testid="context-hooks-notice">
          <div className="context-hooks-text small">
            <Icon name="shield" size={14} />
            <p>
              This project has {hooksCount(h.hooks)} in <span className="context-mono"><VisibleText text={shown} inline /></span>. They are
              code from the repository and do not run until you approve this file's content.
            </p>
          </div>
          {h.files.length > 1 && (
            <div className="context-hooks-files small" data-testid="context-hooks-files">
              <p>Approving also covers the other files in .skald/, which its hooks may run:</p>
              <ul>
                {h.files
                  .filter((f) => f !== ".skald/hooks.json")
                  .map((f) => (
                    <li key={f}>
                      <button type="button" className="btn small-btn context-mono" data-testid="context-hooks-file" onClick={() => onOpen(`${h.path.slice(0, h.path.length - "hooks.json".length)}${f.slice(".skald/".length)}`)}>
                        <VisibleText text={f} inline />
                      </button>
                    </li>
                  ))}
              </ul>
            </div>
          )}
          <div className="row">
            <button type="button" className="btn small-btn" data-testid="context-hooks-open" onClick={() => onOpen(h.path)}>
              Open file
            </button>
            {/* aria-disabled, not disabled: the focus stays on it (and Escape in the panel). */}
            <button type="button" className="btn btn-primary small-btn" data-testid="context-hooks-approve" aria-disabled={busy} onClick={approve}>
              {busy ? "Approving…" : "Approve"}
            </button>
          </div>
        </div>
      ) : (
        <div className="context-item-head small" data-testid="context-hooks-status">
          {state === "approved" ? (
            <span>
              Project hooks: {h.hooks}, <span className="ok-text">approved</span>
            </span>
          ) : (
            <span className="muted">Project hooks: none configured</span>
          )}
          <span className="grow" />
          {file}
        </div>
      )}
      {error && (
        <div className="error-text small context-error" role="alert" data-testid="context-hooks-error">
          Could not approve: <VisibleText text={error} inline />
        </div>
      )}
    </section>
  );
}

function SourceTag({ source }: { source: InstructionFile["source"] }) {
  return (
    <span className={`chip context-source context-source-${source}`} data-testid="context-source" title={source === "user" ? "Your own, for every project" : "The project's"}>
      {source === "user" ? "yours" : "project"}
    </span>
  );
}

function FileRow({ file: f, shown, onOpen }: { file: InstructionFile; shown: string; onOpen: (path: string) => void }) {
  const state = fileState(f);
  return (
    <li className={`context-item context-file-${state}`} data-testid="context-file" data-source={f.source} data-state={state}>
      <div className="context-item-head">
        {/* A file that was not read is not opened either. */}
        {state === "omitted" && f.bytes === 0 ? (
          <span className="context-path context-mono" title={f.path}>
            <VisibleText text={shown} inline />
          </span>
        ) : (
          <button type="button" className="link context-path context-mono" title={`Open ${f.path}`} onClick={() => onOpen(f.path)}>
            <VisibleText text={shown} inline />
          </button>
        )}
        <SourceTag source={f.source} />
        <span className="grow" />
        <span className="muted small context-size" data-testid="context-size">
          {sizeText(f)}
        </span>
      </div>
      {f.note && (
        <div className="context-note small" data-testid="context-note">
          <Icon name="warning" size={12} />
          <span>
            <VisibleText text={f.note} inline />
          </span>
        </div>
      )}
    </li>
  );
}
