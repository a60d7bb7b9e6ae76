// "New chat in a worktree" (docs/worktrees.md, "In the app"): under the sidebar's New chat,
// a small form with the worktree's name — empty names it after the folder (`paper-1`).
// The engine checks the name; its refusal (a bad name, a name taken) shows here and the
// form stays, with what was typed.

import { useEffect, useId, useRef, useState } from "react";
import { errorText } from "../lib/format";

/** `onClose(cancelled)`: cancelled, the focus goes back to the button that opened it; done, to the new chat. */
export function NewWorktreeChat({ onCreate, onClose }: { onCreate: (name: string) => Promise<void>; onClose: (cancelled: boolean) => void }) {
  const [name, setName] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const input = useRef<HTMLInputElement>(null);
  const hintId = useId();
  useEffect(() => input.current?.focus(), []);
  const submit = async () => {
    if (busy) return;
    setBusy(true);
    setError(null);
    try {
      await onCreate(name.trim());
      onClose(false);
    } catch (e) {
      setError(`Could not make the worktree: ${errorText(e)}`);
      setBusy(false);
      input.current?.focus();
    }
  };
  return (
    <form
      className="worktree-form"
      data-testid="worktree-form"
      aria-label="New chat in a worktree"
      aria-busy={busy}
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
      onKeyDown={(e) => {
        if (e.key === "Escape" && !busy) {
          e.stopPropagation();
          onClose(true);
        }
      }}
    >
      <label className="field">
        <span>Worktree name (optional)</span>
        <input
          ref={input}
          data-testid="worktree-name"
          value={name}
          placeholder="after the folder: paper-1"
          maxLength={48}
          spellCheck={false}
          autoComplete="off"
          aria-describedby={hintId}
          disabled={busy}
          onChange={(e) => setName(e.target.value)}
        />
      </label>
      <div id={hintId} className="small muted">
        The chat works in its own copy of the folder. Its changes reach your folder only when you review and apply them.
      </div>
      <div className="row">
        <button type="submit" className="btn btn-primary small-btn" data-testid="worktree-create" disabled={busy}>
          {busy ? "Making the worktree…" : "Start the chat"}
        </button>
        <button type="button" className="btn small-btn" disabled={busy} onClick={() => onClose(true)}>
          Cancel
        </button>
      </div>
      {error && (
        <div className="error-text small" role="alert" data-testid="worktree-form-error">
          {error}
        </div>
      )}
    </form>
  );
}
