// "Best of N…" (docs/worktrees.md, "Best of N"): one prompt to 2–4 agents, each with a
// model of its own — the configured one, one `list_models` offers, or one typed in — each
// in a worktree of its own of the folder. What is wrong is said before anything is sent
// (lib/bestOf.ts); the engine's refusal (a provider without its key, a folder that cannot
// be copied) shows here, the dialog keeping what was typed. A modal: the prompt has the
// focus, Tab stays inside, Escape cancels, Ctrl/⌘+Enter starts.

import { useEffect, useId, useRef, useState, type RefObject } from "react";
import { createPortal } from "react-dom";
import type { Command, ModelOption } from "../protocol";
import { useTransport } from "../app/context";
import { CONFIGURED, MAX_AGENTS, MIN_AGENTS, TYPED, agentLetter, bestOfCommand, bestOfProblems, hasProblems, type AgentDraft } from "../lib/bestOf";
import { errorText } from "../lib/format";
import { defaultModel } from "../lib/models";
import { VisibleText } from "./Arguments";
import { keepTabInside } from "./Checkpoints";
import { Icon } from "./ui";

interface Props {
  /** Sends the command; throws the engine's refusal. */
  onStart: (command: Extract<Command, { cmd: "best_of" }>) => Promise<void>;
  /** `cancelled`: closed without starting. */
  onClose: (cancelled: boolean) => void;
  /** Where the focus goes when it closes without starting. */
  returnFocus?: RefObject<HTMLElement | null>;
}

export function BestOfDialog({ onStart, onClose, returnFocus }: Props) {
  const t = useTransport();
  const [models, setModels] = useState<ModelOption[] | null>(null);
  const [text, setText] = useState("");
  const nextId = useRef(3);
  const [agents, setAgents] = useState<AgentDraft[]>([
    { id: 1, pick: CONFIGURED, typed: "" },
    { id: 2, pick: CONFIGURED, typed: "" },
  ]);
  const [folder, setFolder] = useState<string | null>(null);
  const [tried, setTried] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const boxRef = useRef<HTMLDivElement>(null);
  const textRef = useRef<HTMLTextAreaElement>(null);
  const addRef = useRef<HTMLButtonElement>(null);
  const titleId = useId();
  const hintId = useId();

  useEffect(() => {
    let live = true;
    t.call({ cmd: "list_models" }).then(
      (r) => live && setModels(r.models ?? []),
      // Without the list, the configured model and a typed one are still offered.
      () => live && setModels([]),
    );
    return () => {
      live = false;
    };
  }, [t]);
  // Started, the focus goes to the trial's view; cancelled, back to where it was.
  const started = useRef(false);
  useEffect(() => {
    textRef.current?.focus();
    const back = returnFocus;
    return () => {
      const el = back?.current;
      if (!started.current && el?.isConnected) el.focus();
    };
    // Once, when it opens.
  }, []);

  const problems = bestOfProblems(text, agents, models);
  const shown = tried ? problems : { agents: {} };
  const configured = defaultModel(models);
  const listed = (models ?? []).filter((m) => !m.default);

  const update = (id: number, change: Partial<AgentDraft>) => setAgents((list) => list.map((a) => (a.id === id ? { ...a, ...change } : a)));
  const add = () => {
    if (agents.length >= MAX_AGENTS) return;
    setAgents((list) => [...list, { id: nextId.current++, pick: CONFIGURED, typed: "" }]);
  };
  const remove = (id: number, at: number) => {
    if (agents.length <= MIN_AGENTS) return;
    setAgents((list) => list.filter((a) => a.id !== id));
    // The focus goes to the row that takes its place (or the one before), else Add agent.
    requestAnimationFrame(() => {
      const selects = boxRef.current?.querySelectorAll<HTMLElement>("[data-testid='best-of-model']");
      (selects?.[Math.min(at, (selects?.length ?? 1) - 1)] ?? addRef.current)?.focus();
    });
  };
  const start = async () => {
    if (busy) return;
    setTried(true);
    if (hasProblems(problems)) {
      // The first thing to fix gets the focus.
      if (problems.text) textRef.current?.focus();
      else boxRef.current?.querySelector<HTMLElement>("[aria-invalid='true']")?.focus();
      return;
    }
    setBusy(true);
    setError(null);
    try {
      await onStart(bestOfCommand(text, agents, models, folder));
      started.current = true;
      onClose(false);
    } catch (e) {
      setError(errorText(e));
      setBusy(false);
    }
  };
  const cancel = () => {
    if (!busy) onClose(true);
  };

  return createPortal(
    <div
      className="overlay dialog-overlay"
      onMouseDown={(e) => {
        if (e.target === e.currentTarget) cancel();
      }}
    >
      <div
        ref={boxRef}
        className="dialog best-of-dialog"
        role="dialog"
        aria-modal="true"
        aria-labelledby={titleId}
        aria-describedby={hintId}
        aria-busy={busy}
        data-testid="best-of-dialog"
        onKeyDown={(e) => {
          if (e.key === "Escape") {
            e.preventDefault();
            e.stopPropagation();
            cancel();
          } else if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
            e.preventDefault();
            void start();
          } else keepTabInside(e, boxRef.current);
        }}
      >
        <h2 id={titleId} className="dialog-title">
          Best of N
        </h2>
        <p id={hintId} className="small muted best-of-hint">
          One prompt to {MIN_AGENTS}–{MAX_AGENTS} agents at once, each with its model, each in a worktree of its own of the folder. Compare their changes side by side, apply the one
          you pick and discard the others.
        </p>
        <label className="field">
          <span>Prompt</span>
          <textarea
            ref={textRef}
            rows={5}
            data-testid="best-of-text"
            value={text}
            placeholder="What should each agent do?"
            aria-invalid={shown.text != null}
            disabled={busy}
            onChange={(e) => setText(e.target.value)}
          />
        </label>
        {shown.text && (
          <div className="error-text small" data-testid="best-of-text-problem">
            {shown.text}
          </div>
        )}
        <fieldset className="best-of-agents" disabled={busy}>
          <legend className="small">Agents</legend>
          <ol className="best-of-list">
            {agents.map((a, i) => {
              const letter = agentLetter(i);
              const problem = shown.agents[a.id];
              return (
                <li key={a.id} className="best-of-agent" data-testid="best-of-agent">
                  <span className="trial-letter" aria-hidden="true">
                    {letter}
                  </span>
                  <select
                    data-testid="best-of-model"
                    aria-label={`Agent ${letter}'s model`}
                    value={a.pick}
                    aria-invalid={problem != null && a.pick !== TYPED}
                    onChange={(e) => update(a.id, { pick: e.target.value })}
                  >
                    <option value={CONFIGURED}>{configured ? `Configured model (${configured.label})` : "Configured model"}</option>
                    {listed.map((m) => (
                      <option key={m.label} value={m.label}>
                        {m.label}
                      </option>
                    ))}
                    <option value={TYPED}>Another model…</option>
                  </select>
                  {a.pick === TYPED && (
                    <input
                      data-testid="best-of-typed"
                      className="best-of-typed"
                      aria-label={`Agent ${letter}'s model, as provider/model`}
                      placeholder="provider/model"
                      spellCheck={false}
                      autoComplete="off"
                      value={a.typed}
                      aria-invalid={problem != null}
                      onChange={(e) => update(a.id, { typed: e.target.value })}
                    />
                  )}
                  <button
                    type="button"
                    className="icon-btn"
                    data-testid="best-of-remove"
                    aria-label={`Remove agent ${letter}`}
                    title={agents.length <= MIN_AGENTS ? `Best of N takes at least ${MIN_AGENTS} agents` : `Remove agent ${letter}`}
                    disabled={agents.length <= MIN_AGENTS}
                    onClick={() => remove(a.id, i)}
                  >
                    <Icon name="close" size={14} />
                  </button>
                  {problem && (
                    <div className="error-text small best-of-problem" data-testid="best-of-agent-problem">
                      <VisibleText text={problem} inline />
                    </div>
                  )}
                </li>
              );
            })}
          </ol>
          <button ref={addRef} type="button" className="btn small-btn" data-testid="best-of-add" disabled={agents.length >= MAX_AGENTS} onClick={add}>
            <Icon name="plus" size={12} /> Add agent
          </button>
          {agents.length >= MAX_AGENTS && <span className="small muted"> At most {MAX_AGENTS} agents.</span>}
          {shown.count && <div className="error-text small">{shown.count}</div>}
        </fieldset>
        {t.pickFolder && (
          <div className="row small best-of-folder">
            <span className="muted">Folder:</span>
            <span className="grow" data-testid="best-of-folder">
              {folder ? <VisibleText text={folder} inline /> : "the app's folder"}
            </span>
            <button type="button" className="btn small-btn" disabled={busy} onClick={() => void t.pickFolder?.().then((d) => d && setFolder(d))}>
              Choose…
            </button>
          </div>
        )}
        {error && (
          <div className="error-text small" role="alert" data-testid="best-of-error">
            Could not start: <VisibleText text={error} inline />
          </div>
        )}
        <div className="row dialog-actions">
          <button type="button" className="btn" data-testid="best-of-cancel" disabled={busy} onClick={cancel}>
            Cancel
          </button>
          <button type="button" className="btn btn-primary" data-testid="best-of-start" aria-disabled={busy} title="Start (Ctrl+Enter)" onClick={() => void start()}>
            {busy ? "Making the worktrees…" : `Start ${agents.length} agents`}
          </button>
        </div>
      </div>
    </div>,
    document.body,
  );
}
