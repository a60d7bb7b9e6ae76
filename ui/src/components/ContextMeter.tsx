// The chat header's context meter (docs/agent-loop.md "Long conversations"): how many tokens
// the chat's next request would carry over the model's window ("12.3k / 128k", a ring
// coloured as it nears the threshold at which older turns are summarised), and a popover
// with what fills it (system prompt, AGENTS.md and skills, tool definitions, the summary,
// messages, tool results), the threshold, what the last call actually read, "Compact now"
// and, when the chat has a summary, "Undo compaction". Read with `context_usage` when the
// chat opens, after each turn, a compaction or an undo. Built as the model picker's menu.

import { useCallback, useEffect, useRef, useState } from "react";
import type { SummaryInfo } from "../protocol";
import { useEvents, useTransport } from "../app/context";
import { useMenuDismiss } from "../app/useMenuDismiss";
import { meterLevel, meterTitle, partsShown, percentOf, thresholdText, tokenCount, type ContextUsage } from "../lib/contextUsage";
import { errorText } from "../lib/format";

interface Props {
  sessionId: number;
  /** The chat's latest compaction (none: nothing to undo). */
  summary: SummaryInfo | null;
  /** After an undo: the chat reads its summary again. */
  onUndone: () => void | Promise<void>;
}

const n = (x: number) => x.toLocaleString("en-US");

export function ContextMeter({ sessionId, summary, onUndone }: Props) {
  const t = useTransport();
  const [usage, setUsage] = useState<ContextUsage | null>(null);
  const [open, setOpen] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [note, setNote] = useState<string | null>(null);
  // "Compact now" was asked and its summary has not come: the engine's error is its.
  const asked = useRef(false);
  const buttonRef = useRef<HTMLButtonElement>(null);
  const menuRef = useRef<HTMLDivElement>(null);

  // Only the latest request may set the numbers.
  const seq = useRef(0);
  const load = useCallback(() => {
    const k = ++seq.current;
    t.call({ cmd: "context_usage", session_id: sessionId }).then(
      // A reply without the numbers (an older server's) is none.
      ({ cmd: _cmd, ...u }) => k === seq.current && setUsage(typeof u.tokens === "number" && typeof u.window === "number" ? { ...u, parts: u.parts ?? [] } : null),
      // A server without the command (or one that failed) shows no meter, as the usage chip.
      () => k === seq.current && setUsage(null),
    );
  }, [t, sessionId]);

  // Opening the chat, and a compaction made or undone (its summary changed), read it again.
  const summaryAt = summary ? `${summary.up_to_message_id}:${summary.created_at}` : "";
  useEffect(() => {
    load();
  }, [load, summaryAt]);
  // (Keyed by the chat: another chat's meter is another one.)
  useEffect(
    () => () => {
      seq.current++;
    },
    [],
  );

  useEvents((sid, e) => {
    const mine = sid === sessionId || ("session_id" in e && e.session_id === sessionId);
    if (!mine) return;
    switch (e.type) {
      case "done":
        load();
        break;
      case "compaction_started":
        setNote("Summarising older turns…");
        setError(null);
        break;
      case "context_compacted":
        asked.current = false;
        setNote("Older turns summarised.");
        load();
        break;
      case "error":
        if (asked.current) {
          asked.current = false;
          setNote(null);
          setError(e.message);
        }
        break;
    }
  });

  useEffect(() => {
    if (open) menuRef.current?.focus();
  }, [open]);
  const { wrapProps } = useMenuDismiss(open, setOpen, () => {
    setOpen(false);
    buttonRef.current?.focus();
  });

  const run = async (what: string, action: () => Promise<void>) => {
    // The buttons are not `disabled` while one runs: a focused control that becomes
    // disabled loses the focus, and with it the popover.
    if (busy) return;
    setBusy(true);
    setError(null);
    setNote(null);
    try {
      await action();
    } catch (e) {
      setError(`Could not ${what}: ${errorText(e)}`);
    } finally {
      setBusy(false);
    }
  };
  const compactNow = () =>
    run("compact the chat", async () => {
      asked.current = true;
      try {
        const r = await t.call({ cmd: "compact_now", session_id: sessionId });
        if (!r.compacted) {
          asked.current = false;
          setNote("Nothing older to summarise yet.");
        } else {
          // The reply comes once the summary is made; its events (to every window) have
          // usually said so already.
          setNote((was) => was ?? "Older turns summarised.");
        }
      } catch (e) {
        asked.current = false;
        throw e;
      }
    });
  const undo = () =>
    run("undo the compaction", async () => {
      const r = await t.call({ cmd: "undo_compaction", session_id: sessionId });
      setNote(r.undone ? "Compaction undone: the turns are sent whole again." : "There was no compaction to undo.");
      await onUndone();
      load();
      // The button went with the summary: the focus stays in the popover.
      menuRef.current?.focus();
    });

  if (!usage) return null;
  const level = meterLevel(usage);
  const pct = percentOf(usage.tokens, usage.window);
  const title = meterTitle(usage);

  return (
    <div className="menu-wrap" {...wrapProps}>
      <button
        ref={buttonRef}
        type="button"
        className={`context-meter level-${level}`}
        data-testid="context-meter"
        data-tokens={usage.tokens}
        data-window={usage.window}
        data-level={level}
        title={title}
        aria-label={`${title}. Show what fills it`}
        aria-haspopup="dialog"
        aria-expanded={open}
        onClick={() => setOpen(!open)}
      >
        <Ring percent={pct} />
        <span data-testid="context-meter-label">
          {tokenCount(usage.tokens)} / {tokenCount(usage.window)}
        </span>
      </button>
      {open && (
        <div ref={menuRef} className="menu menu-down meter-menu" data-testid="context-meter-menu" role="dialog" aria-label="What fills the context" aria-busy={busy} tabIndex={-1}>
          <div className="sandbox-menu-head small muted">Context of this chat</div>
          <div className="meter-total">
            <strong>{n(usage.tokens)}</strong> of {n(usage.window)} tokens <span className="muted">· {pct}%</span>
          </div>
          <div className={`meter-bar level-${level}`} aria-hidden="true">
            <span className="meter-bar-fill" style={{ width: `${Math.min(100, pct)}%` }} />
            {usage.compact_at > 0 && <span className="meter-bar-mark" style={{ left: `${usage.compact_at}%` }} />}
          </div>
          <dl className="meter-parts" data-testid="context-meter-parts">
            {partsShown(usage.parts).map((p) => (
              <div key={p.what} className="meter-part" data-part={p.what} title={`${n(p.tokens)} tokens`}>
                <dt>{p.label}</dt>
                <dd>{tokenCount(p.tokens)}</dd>
              </div>
            ))}
          </dl>
          <div className="sandbox-note small muted" data-testid="context-meter-threshold">
            {thresholdText(usage.compact_at)}
            {usage.compact_at > 0 && ` (${tokenCount((usage.window * usage.compact_at) / 100)} tokens)`}
          </div>
          {usage.last_input_tokens != null && (
            <div className="sandbox-note small muted" data-testid="context-meter-last">
              The last model call read {n(usage.last_input_tokens)} tokens.
            </div>
          )}
          <div className="meter-actions">
            <button type="button" className="btn" data-testid="compact-now" aria-disabled={busy} title="Summarise the older turns now, whatever the threshold" onClick={() => void compactNow()}>
              Compact now
            </button>
            {summary && (
              <button type="button" className="btn" data-testid="undo-compaction" aria-disabled={busy} title="Send the summarised turns whole again" onClick={() => void undo()}>
                Undo compaction
              </button>
            )}
          </div>
          {note && (
            <div className="sandbox-note small muted" role="status" data-testid="context-meter-note">
              {note}
            </div>
          )}
          {error && (
            <div className="error-text small" role="alert" data-testid="context-meter-error">
              {error}
            </div>
          )}
        </div>
      )}
    </div>
  );
}

/** A small ring filled to `percent` of the window. */
function Ring({ percent }: { percent: number }) {
  const r = 5;
  const c = 2 * Math.PI * r;
  const filled = (Math.min(100, Math.max(0, percent)) / 100) * c;
  return (
    <svg className="meter-ring" width={13} height={13} viewBox="0 0 14 14" aria-hidden="true" focusable="false">
      <circle cx={7} cy={7} r={r} className="meter-ring-track" />
      <circle cx={7} cy={7} r={r} className="meter-ring-fill" strokeDasharray={`${filled} ${c}`} transform="rotate(-90 7 7)" />
    </svg>
  );
}
