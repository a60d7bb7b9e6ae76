// The card of a compacted chat's summary (docs/agent-loop.md "Long conversations"): the
// summary the model now reads instead of the older turns, with its "Left out:" line set
// apart, "Show N earlier messages" to unfold the turns it stands for (they stay in the
// store and in the chat), and "Undo" (`undo_compaction`: the turns are sent whole again).
// The model's text is shown as text.

import { useState } from "react";
import type { SummaryInfo } from "../protocol";
import { useTransport } from "../app/context";
import { splitLeftOut } from "../chat/summary";
import { errorText, formatTime } from "../lib/format";
import { Icon } from "./ui";

interface Props {
  sessionId: number;
  summary: SummaryInfo;
  /** The loaded messages it folds, and whether older ones are still to load. */
  messages: number;
  more: boolean;
  open: boolean;
  onToggle: () => void;
  /** After an undo: the chat reads its summary again. */
  onUndone: () => void | Promise<void>;
}

export function SummaryCard({ sessionId, summary, messages, more, open, onToggle, onUndone }: Props) {
  const t = useTransport();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const { body, leftOut } = splitLeftOut(summary.summary);
  const what = messages === 0 ? "earlier messages" : `${messages}${more ? "+" : ""} earlier message${messages === 1 && !more ? "" : "s"}`;

  const undo = async () => {
    if (busy) return;
    setBusy(true);
    setError(null);
    try {
      const r = await t.call({ cmd: "undo_compaction", session_id: sessionId });
      if (!r.undone) setError("There was no compaction to undo.");
      await onUndone();
    } catch (e) {
      setError(`Could not undo the compaction: ${errorText(e)}`);
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="summary-card" data-testid="summary-card" data-up-to={summary.up_to_message_id} data-open={open ? "1" : "0"}>
      <div className="summary-head">
        <Icon name="info" size={13} />
        <strong>Summary of the earlier turns</strong>
        <span className="muted small">{formatTime(summary.created_at)}</span>
      </div>
      <div className="summary-text plain" data-testid="summary-text">
        {body}
      </div>
      {leftOut != null && (
        <div className="summary-left-out small" data-testid="summary-left-out">
          <strong>Left out:</strong> {leftOut}
        </div>
      )}
      <div className="summary-actions">
        {(messages > 0 || more) && (
          <button type="button" className="link small summary-toggle" data-testid="summary-toggle" aria-expanded={open} onClick={onToggle}>
            <span className={open ? "chev open" : "chev"}>
              <Icon name="chevron" size={12} />
            </span>
            {open ? `Hide the ${what}` : `Show ${what}`}
          </button>
        )}
        <button
          type="button"
          className="btn summary-undo"
          data-testid="summary-undo"
          aria-disabled={busy}
          title="Undo this compaction: the model is sent these turns whole again"
          onClick={() => void undo()}
        >
          <Icon name="undo" size={12} />
          Undo
        </button>
      </div>
      {error && (
        <div className="error-text small" role="alert">
          {error}
        </div>
      )}
    </div>
  );
}
