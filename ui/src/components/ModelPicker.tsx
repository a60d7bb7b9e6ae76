// The chat header's model button: the chat's model (or the configured one, marked as the
// default) and effort, and a small menu to change them — the models `list_models` offers,
// any `provider/model` typed in, "Use the default", and the reasoning effort where the
// model takes one. The chat's own setting; it applies from the chat's next turn. Built as
// the sandbox badge's menu is (SandboxBadge.tsx).

import { useEffect, useId, useRef, useState } from "react";
import type { ChatModel } from "../app/useChatModel";
import { useMenuDismiss } from "../app/useMenuDismiss";
import { errorText } from "../lib/format";
import { choiceLabel, defaultModel, EFFORT_TITLES, EFFORTS, modelInUse, offersEffort, resolveModel, type Effort } from "../lib/models";
import { Icon } from "./ui";

export function ModelPicker({ chat }: { chat: ChatModel }) {
  const { models, choice, pickerOpen: open, setPickerOpen } = chat;
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [typed, setTyped] = useState("");
  const buttonRef = useRef<HTMLButtonElement>(null);
  const effortLabel = useId();

  // Each opening starts afresh, with the list asked for again (local models come and go).
  const refresh = chat.refresh;
  useEffect(() => {
    if (!open) return;
    setError(null);
    setTyped("");
    refresh();
  }, [open, refresh]);

  const run = async (what: string, change: () => Promise<unknown>) => {
    // The controls are not `disabled` while a change is on its way: a focused control that
    // becomes disabled loses the focus, and with it the menu.
    if (busy) return false;
    setBusy(true);
    setError(null);
    try {
      await change();
      return true;
    } catch (e) {
      setError(`Could not ${what}: ${errorText(e)}`);
      return false;
    } finally {
      setBusy(false);
    }
  };
  const chooseModel = (model: string | null) => run("change the model", () => chat.chooseModel(model));
  const chooseEffort = (effort: Effort | null) => run("change the effort", () => chat.chooseEffort(effort));
  // The focus goes back where it was when the menu opened (the composer, for `/model`),
  // else to the button.
  const close = () => {
    const before = chat.focusBefore();
    setPickerOpen(false);
    (before && !wrapRef.current?.contains(before) ? before : buttonRef.current)?.focus();
  };
  const { wrapRef, wrapProps } = useMenuDismiss(open, setPickerOpen, close);

  const fallback = defaultModel(models);
  const inUse = modelInUse(choice, models);
  const listed = models ?? [];
  // A model typed in earlier is not in the list: shown first, so the chat's model is there.
  const unlisted = choice.model && !listed.some((m) => m.label === choice.model) ? choice.model : null;
  const label = choiceLabel(choice, models);
  const title = `Model: ${inUse ?? "the configured one"}${choice.model ? "" : " (the default)"}${choice.effort ? `, ${choice.effort} reasoning effort` : ""}`;

  return (
    <div className="menu-wrap" {...wrapProps}>
      <button
        ref={buttonRef}
        type="button"
        className={choice.model ? "model-chip" : "model-chip quiet"}
        data-testid="model-button"
        data-model={choice.model ?? ""}
        data-effort={choice.effort ?? ""}
        title={title}
        aria-label={title}
        aria-haspopup="dialog"
        aria-expanded={open}
        onClick={() => setPickerOpen(!open)}
      >
        <Icon name="model" size={13} />
        <span className="model-chip-label">{label}</span>
      </button>
      {open && (
        <div className="menu menu-down model-menu" data-testid="model-menu" role="dialog" aria-label="Model for this chat" aria-busy={busy} tabIndex={-1}>
          <div className="sandbox-menu-head small muted">Model for this chat</div>
          <div role="radiogroup" aria-label="Model" onKeyDown={moveAmongRadios}>
            <ModelOptionButton
              testId="model-default"
              checked={!choice.model}
              busy={busy}
              onChoose={() => void chooseModel(null)}
              main="Use the default"
              plain
              detail={fallback ? fallback.label : "the configured model"}
            />
            {unlisted && <ModelOptionButton testId="model-option" value={unlisted} checked busy={busy} onChoose={() => {}} main={unlisted} detail="typed in" />}
            {listed.map((m) => (
              <ModelOptionButton
                key={m.label}
                testId="model-option"
                value={m.label}
                checked={choice.model === m.label}
                busy={busy}
                onChoose={() => void chooseModel(m.label)}
                main={m.label}
                tags={[m.default && "default", m.sees_images && "sees images", m.takes_effort && "effort"]}
              />
            ))}
          </div>
          <form
            className="model-typed"
            onSubmit={(e) => {
              e.preventDefault();
              const model = resolveModel(typed, models);
              if (model === "") return;
              void chooseModel(model).then((ok) => ok && setTyped(""));
            }}
          >
            <input
              data-testid="model-input"
              aria-label="Another model (provider/model)"
              placeholder="Another model: provider/model"
              spellCheck={false}
              autoComplete="off"
              value={typed}
              onChange={(e) => setTyped(e.target.value)}
            />
            <button type="submit" className="btn" data-testid="model-input-use" aria-disabled={busy || typed.trim() === ""}>
              Use
            </button>
          </form>
          {offersEffort(inUse, models) && (
            <div className="model-effort">
              <div className="small muted" id={effortLabel}>
                Reasoning effort
              </div>
              <div role="radiogroup" aria-labelledby={effortLabel} className="effort-options" data-testid="effort-options" onKeyDown={moveAmongRadios}>
                {([null, ...EFFORTS] as const).map((e) => (
                  <button
                    key={e ?? "default"}
                    type="button"
                    role="radio"
                    aria-checked={(choice.effort ?? null) === e}
                    aria-disabled={busy}
                    className={(choice.effort ?? null) === e ? "effort-option selected" : "effort-option"}
                    data-testid={`effort-${e ?? "default"}`}
                    title={e ? `${EFFORT_TITLES[e]} reasoning effort` : "The model's own effort"}
                    onClick={() => (choice.effort ?? null) !== e && void chooseEffort(e)}
                  >
                    {e ? EFFORT_TITLES[e] : "Default"}
                  </button>
                ))}
              </div>
            </div>
          )}
          <div className="sandbox-note small muted">Applies from the next turn.</div>
          {error && (
            <div className="error-text small" role="alert" data-testid="model-error">
              {error}
            </div>
          )}
        </div>
      )}
    </div>
  );
}

function ModelOptionButton({
  testId,
  value,
  checked,
  busy,
  onChoose,
  main,
  detail,
  tags = [],
  plain = false,
}: {
  testId: string;
  value?: string;
  checked: boolean;
  busy: boolean;
  onChoose: () => void;
  main: string;
  detail?: string;
  tags?: (string | false)[];
  /** Words, not a model's name (which is shown as code). */
  plain?: boolean;
}) {
  const shown = tags.filter((t): t is string => Boolean(t));
  return (
    <button
      type="button"
      role="radio"
      aria-checked={checked}
      className={checked ? "sandbox-option model-option selected" : "sandbox-option model-option"}
      data-testid={testId}
      data-value={value}
      autoFocus={checked}
      aria-disabled={busy}
      onClick={() => !checked && onChoose()}
    >
      <span className="sandbox-check" aria-hidden="true">
        {checked && <Icon name="check" size={12} />}
      </span>
      <span className="model-option-text">
        <span className={plain ? undefined : "model-option-main"}>{main}</span>
        {detail && <span className="muted small"> — {detail}</span>}
        {shown.map((t) => (
          <span key={t} className="model-tag small">
            {t}
          </span>
        ))}
      </span>
    </button>
  );
}

/** Up/Down (and Left/Right) move the focus among a radio group's options, Home/End to its ends. */
function moveAmongRadios(e: React.KeyboardEvent<HTMLElement>) {
  const keys = ["ArrowDown", "ArrowRight", "ArrowUp", "ArrowLeft", "Home", "End"];
  if (!keys.includes(e.key)) return;
  const radios = [...e.currentTarget.querySelectorAll<HTMLElement>("[role='radio']")];
  const at = radios.indexOf(document.activeElement as HTMLElement);
  if (radios.length === 0) return;
  e.preventDefault();
  const n = radios.length;
  const next =
    e.key === "Home" ? 0 : e.key === "End" ? n - 1 : e.key === "ArrowDown" || e.key === "ArrowRight" ? (at + 1 + n) % n : at <= 0 ? n - 1 : at - 1;
  radios[next]?.focus();
}
