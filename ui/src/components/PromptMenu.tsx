// The composer's slash-command menu (the MCP prompts matching what follows the "/") and,
// once one is picked, the hint line with its arguments. The keyboard stays in the
// composer's text box, which points at the active row with aria-activedescendant.

import { useEffect, useRef } from "react";
import type { McpPromptInfo } from "../protocol";
import { argumentText, promptId } from "../lib/mcpPrompts";

export const promptOptionId = (listId: string, i: number) => `${listId}-${i}`;

export function PromptMenu({ id, prompts, active, onPick, onHover }: { id: string; prompts: McpPromptInfo[]; active: number; onPick: (p: McpPromptInfo) => void; onHover: (i: number) => void }) {
  const list = useRef<HTMLUListElement>(null);
  useEffect(() => {
    list.current?.querySelector<HTMLElement>(`[data-index="${active}"]`)?.scrollIntoView?.({ block: "nearest" });
  }, [active]);
  return (
    <div className="menu composer-menu" data-testid="prompt-menu">
      <ul id={id} ref={list} className="option-list" role="listbox" aria-label="Prompts">
        {prompts.map((p, i) => (
          <li
            key={promptId(p)}
            id={promptOptionId(id, i)}
            data-index={i}
            data-testid="prompt-option"
            role="option"
            aria-selected={i === active}
            className={i === active ? "active" : undefined}
            // The text box keeps the focus (and its caret) while a row is clicked.
            onMouseDown={(e) => e.preventDefault()}
            onMouseEnter={() => onHover(i)}
            onClick={() => onPick(p)}
          >
            <span className="option-main">
              <code className="prompt-command">/{promptId(p)}</code>
              {p.arguments.length > 0 && <PromptArgNames prompt={p} />}
            </span>
            {(p.title || p.description) && (
              <span className="muted small option-detail">
                {p.title && <strong>{p.title}</strong>}
                {p.title && p.description && " — "}
                {p.description}
              </span>
            )}
          </li>
        ))}
      </ul>
    </div>
  );
}

function PromptArgNames({ prompt }: { prompt: McpPromptInfo }) {
  return (
    <span className="prompt-args muted small">
      {prompt.arguments.map((a) => (
        <span key={a.name} className={a.required ? "prompt-arg required" : "prompt-arg"}>
          {a.name}
          {a.required && (
            <>
              <span aria-hidden="true">*</span>
              <span className="sr-only"> (required)</span>
            </>
          )}
        </span>
      ))}
    </span>
  );
}

/** Under the composer once `/server:name ` starts the message: what the prompt takes. */
export function PromptHint({ id, prompt }: { id: string; prompt: McpPromptInfo }) {
  const args = prompt.arguments;
  return (
    <div id={id} className="composer-hint small muted" data-testid="prompt-hint" title={args.map(argumentText).join("\n") || undefined}>
      <code>/{promptId(prompt)}</code>{" "}
      {args.length === 0 ? (
        "takes no arguments"
      ) : (
        <>
          {args.map(argumentText).join(" · ")}
          <span className="composer-hint-how">
            {" "}
            — give <code>key=value</code> pairs, or words in order (the last takes the rest){args.some((a) => a.required) && "; * required"}
          </span>
        </>
      )}
    </div>
  );
}
