// A chat's model and reasoning effort (docs/models.md "A model per chat"): the models it
// can be given (`list_models`), its own choice (the chat's `SessionInfo`, then each
// `set_session_model` reply), and whether the header's picker is open — shared by the
// picker and the composer's `/model` and `/effort`.

import { useCallback, useEffect, useRef, useState } from "react";
import type { ModelOption, SessionInfo } from "../protocol";
import { choiceRequest, isEffort, switchEffort, switchModel, type Effort, type ModelChoice } from "../lib/models";
import { useTransport } from "./context";

export interface ChatModel {
  /** What `list_models` offered; null until it answers (or when it failed). */
  models: ModelOption[] | null;
  /** The chat's own model and effort. */
  choice: ModelChoice;
  /** Gives the chat `model` (null: the configured one). Throws the engine's refusal. */
  chooseModel(model: string | null): Promise<ModelChoice>;
  /** Sets the chat's effort (null: the model's own). Throws the engine's refusal. */
  chooseEffort(effort: Effort | null): Promise<ModelChoice>;
  /** Asks for the list again (local models come and go). */
  refresh(): void;
  pickerOpen: boolean;
  setPickerOpen(open: boolean): void;
  /** What had the focus when the picker opened (the composer, for `/model`): it gets it back. */
  focusBefore(): HTMLElement | null;
}

const choiceOf = (s: Pick<SessionInfo, "model" | "effort"> | undefined): ModelChoice => ({
  ...(s?.model ? { model: s.model } : {}),
  ...(isEffort(s?.effort) ? { effort: s.effort } : {}),
});

/**
 * `session`: the chat as the sessions list has it; `onSession` is told the chat as the
 * engine answered a change (the list keeps it).
 */
export function useChatModel(sessionId: number, session: SessionInfo | undefined, onSession?: (s: SessionInfo) => void): ChatModel {
  const t = useTransport();
  const [models, setModels] = useState<ModelOption[] | null>(null);
  const [choice, setChoiceState] = useState<ModelChoice>(() => choiceOf(session));
  // The latest choice, for a change asked for before the last one rendered.
  const choiceRef = useRef(choice);
  const setChoice = (c: ModelChoice) => {
    choiceRef.current = c;
    setChoiceState(c);
  };
  const [pickerOpen, setPickerOpenState] = useState(false);
  const before = useRef<HTMLElement | null>(null);
  const setPickerOpen = useCallback((open: boolean) => {
    if (open) {
      const active = document.activeElement;
      before.current = active instanceof HTMLElement && active !== document.body ? active : null;
    }
    setPickerOpenState(open);
  }, []);
  const focusBefore = useCallback(() => (before.current?.isConnected ? before.current : null), []);
  const [tick, setTick] = useState(0);

  // The list's copy of the chat wins when it changes (another change, a reload).
  const model = session?.model;
  const effort = session?.effort;
  useEffect(() => {
    if (session) setChoice(choiceOf({ model, effort }));
  }, [model, effort, session != null]);

  useEffect(() => {
    let live = true;
    t.call({ cmd: "list_models" }).then(
      (r) => live && setModels(r.models ?? null),
      // The last list stays (none: the button names the chat's own model, or "Default model").
      () => {},
    );
    return () => {
      live = false;
    };
  }, [t, tick]);
  const refresh = useCallback(() => setTick((n) => n + 1), []);

  const apply = async (next: ModelChoice): Promise<ModelChoice> => {
    const r = await t.call({ cmd: "set_session_model", session_id: sessionId, ...choiceRequest(next) });
    const answered = r.session ? choiceOf(r.session) : next;
    setChoice(answered);
    if (r.session) onSession?.(r.session);
    return answered;
  };

  return {
    models,
    choice,
    chooseModel: (m) => apply(switchModel(choiceRef.current, m, models)),
    chooseEffort: (e) => apply(switchEffort(choiceRef.current, e)),
    refresh,
    pickerOpen,
    setPickerOpen,
    focusBefore,
  };
}
