// The composer's slash-command menu — the MCP prompts matching what follows the "/", and
// the chat's own commands (`/model`, `/effort` with their values once one is typed, `/plan`,
// `/act`) — and,
// once a prompt is picked, the hint line with its arguments (or a command's). The keyboard
// stays in the composer's text box, which points at the active row with
// aria-activedescendant.

import { useEffect, useRef } from "react";
import type { McpPromptInfo } from "../protocol";
import { argumentText, promptId } from "../lib/mcpPrompts";
import { COMMAND_HELP, suggestionText, type ChatCommandName, type CommandSuggestion } from "../lib/models";

export const promptOptionId = (listId: string, i: number) => `${listId}-${i}`;

/** A row of the menu: a server's prompt, or one of the chat's own commands (or its value). */
export type SlashItem = { kind: "prompt"; prompt: McpPromptInfo } | CommandSuggestion;

const itemKey = (item: SlashItem) =>
  item.kind === "prompt" ? `prompt:${promptId(item.prompt)}` : item.kind === "command" ? `command:${item.name}` : `value:${item.name}:${item.value}`;

/** The text picking a row puts in the box. */
export const slashItemText = (item: SlashItem) => (item.kind === "prompt" ? `/${promptId(item.prompt)} ` : suggestionText(item));

export function PromptMenu({ id, items, active, onPick, onHover }: { id: string; items: SlashItem[]; active: number; onPick: (item: SlashItem) => void; onHover: (i: number) => void }) {
  const list = useRef<HTMLUListElement>(null);
  useEffect(() => {
    list.current?.querySelector<HTMLElement>(`[data-index="${active}"]`)?.scrollIntoView?.({ block: "nearest" });
  }, [active]);
  return (
    <div className="menu composer-menu" data-testid="prompt-menu">
      <ul id={id} ref={list} className="option-list" role="listbox" aria-label="Commands and prompts">
        {items.map((item, i) => (
          <li
            key={itemKey(item)}
            id={promptOptionId(id, i)}
            data-index={i}
            data-testid={item.kind === "prompt" ? "prompt-option" : "command-option"}
            role="option"
            aria-selected={i === active}
            className={i === active ? "active" : undefined}
            // The text box keeps the focus (and its caret) while a row is clicked.
            onMouseDown={(e) => e.preventDefault()}
            onMouseEnter={() => onHover(i)}
            onClick={() => onPick(item)}
          >
            {item.kind === "prompt" ? <PromptRow prompt={item.prompt} /> : <CommandRow item={item} />}
          </li>
        ))}
      </ul>
    </div>
  );
}

function PromptRow({ prompt: p }: { prompt: McpPromptInfo }) {
  return (
    <>
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
    </>
  );
}

function CommandRow({ item }: { item: CommandSuggestion }) {
  const help = COMMAND_HELP[item.name];
  return item.kind === "command" ? (
    <>
      <span className="option-main">
        <code className="prompt-command">/{item.name}</code>
        <span className="prompt-args muted small">{help.args}</span>
      </span>
      <span className="muted small option-detail">{help.detail}</span>
    </>
  ) : (
    <>
      <span className="option-main">
        <code className="prompt-command">
          /{item.name} {item.value}
        </code>
      </span>
      {item.detail && <span className="muted small option-detail">{item.detail}</span>}
    </>
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

/** Under the composer while a message is one of the chat's commands: what the command takes. */
export function CommandHint({ id, name }: { id: string; name: ChatCommandName }) {
  return (
    <div id={id} className="composer-hint small muted" data-testid="command-hint">
      {name === "model" ? (
        <>
          <code>/model</code> alone opens the model picker; <code>/model provider/model</code> gives this chat that model, <code>/model default</code>{" "}
          the configured one — from its next turn.
        </>
      ) : name === "effort" ? (
        <>
          <code>/effort low</code>, <code>medium</code> or <code>high</code>: how hard this chat's model reasons, where it takes an effort; <code>/effort default</code>{" "}
          leaves it to the model.
        </>
      ) : (
        <>
          <code>/plan</code>: the agent reads, searches and asks, and changes nothing until you approve its plan; <code>/act</code>: it works as usual.
          Shift+Tab switches too.
        </>
      )}
    </div>
  );
}
