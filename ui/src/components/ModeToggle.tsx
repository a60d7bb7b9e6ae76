// The chat header's mode switch (docs/agent-loop.md "Plan mode"): Act or Plan, the chat's
// own; a plan-mode chat's agent changes nothing until the person approves its plan. Shift+Tab
// in the composer, `/plan` and `/act` switch it too.

import { useState } from "react";
import type { ChatMode } from "../protocol";
import { MODE_DETAIL, MODE_TITLES, type ChatModeControl } from "../app/useChatMode";
import { errorText } from "../lib/format";
import { Icon } from "./ui";

const MODES: ChatMode[] = ["act", "plan"];

export function ModeToggle({ control }: { control: ChatModeControl }) {
  const { mode } = control;
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const choose = async (next: ChatMode) => {
    if (busy || next === mode) return;
    setBusy(true);
    setError(null);
    try {
      await control.setMode(next);
    } catch (e) {
      setError(`Could not switch to ${next} mode: ${errorText(e)}`);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className="mode-wrap">
      <div
        className={`mode-toggle mode-${mode}`}
        role="radiogroup"
        aria-label="Chat mode (Shift+Tab in the message box switches)"
        data-testid="chat-mode"
        data-mode={mode}
        aria-busy={busy}
        onKeyDown={(e) => {
          if (!["ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown"].includes(e.key)) return;
          e.preventDefault();
          const next = mode === "plan" ? "act" : "plan";
          void choose(next);
          e.currentTarget.querySelector<HTMLElement>(`[data-value='${next}']`)?.focus();
        }}
      >
        {MODES.map((m) => (
          <button
            key={m}
            type="button"
            role="radio"
            aria-checked={mode === m}
            tabIndex={mode === m ? 0 : -1}
            className={mode === m ? "mode-option selected" : "mode-option"}
            data-testid={`mode-${m}`}
            data-value={m}
            title={`${MODE_TITLES[m]} mode: ${MODE_DETAIL[m]} (Shift+Tab in the message box switches)`}
            aria-disabled={busy}
            onClick={() => void choose(m)}
          >
            {m === "plan" && <Icon name="plan" size={12} />}
            {MODE_TITLES[m]}
          </button>
        ))}
      </div>
      {error && (
        <span className="error-text small mode-error" role="alert" data-testid="mode-error">
          {error}
        </span>
      )}
    </div>
  );
}
