// A chat's model and reasoning effort (docs/models.md "A model per chat", "Reasoning
// effort"): what the chat header's picker and the composer's `/model` and `/effort` ask the
// engine for (`set_session_model`), and how those commands are read — with the composer's
// other commands of the chat, `/plan` and `/act` (its mode, docs/agent-loop.md "Plan mode").

import type { ChatMode, ModelOption } from "../protocol";

export const EFFORTS = ["low", "medium", "high"] as const;
export type Effort = (typeof EFFORTS)[number];

export const EFFORT_TITLES: Record<Effort, string> = { low: "Low", medium: "Medium", high: "High" };

export function isEffort(s: string | undefined | null): s is Effort {
  return (EFFORTS as readonly string[]).includes(s ?? "");
}

/** A chat's own choice: absent model is the configured one, absent effort the model's own. */
export interface ModelChoice {
  model?: string;
  effort?: Effort;
}

/** What `set_session_model` is sent for a choice (besides the chat's id). */
export function choiceRequest(c: ModelChoice): { model?: string; effort?: Effort } {
  return { ...(c.model ? { model: c.model } : {}), ...(c.effort ? { effort: c.effort } : {}) };
}

/** The model's name without its provider: `openai/o3-mini` → `o3-mini`. */
export function modelName(label: string): string {
  const at = label.indexOf("/");
  return at >= 0 ? label.slice(at + 1) : label;
}

/** The configured model, as `list_models` marks it. */
export function defaultModel(models: ModelOption[] | null): ModelOption | null {
  return models?.find((m) => m.default) ?? null;
}

/** The model the chat's next turn asks: its own, else the configured one (null: unknown). */
export function modelInUse(choice: ModelChoice, models: ModelOption[] | null): string | null {
  return choice.model ?? defaultModel(models)?.label ?? null;
}

/**
 * Whether to offer an effort for `label`: what `list_models` says of a model it lists; a
 * model it does not list (typed in) is offered one, and the engine refuses it if need be.
 */
export function offersEffort(label: string | null, models: ModelOption[] | null): boolean {
  if (label == null) return false;
  const listed = models?.find((m) => m.label === label);
  return listed ? listed.takes_effort : true;
}

/**
 * The choice after switching the chat to `next` (null: the configured model): the effort
 * is kept when the next model is known to take one, and otherwise left to the model, as
 * the engine refuses an effort for a model that takes none.
 */
export function switchModel(current: ModelChoice, next: string | null, models: ModelOption[] | null): ModelChoice {
  const label = next ?? defaultModel(models)?.label ?? null;
  const keep = current.effort && label != null && models?.find((m) => m.label === label)?.takes_effort === true;
  return { ...(next ? { model: next } : {}), ...(keep ? { effort: current.effort } : {}) };
}

/** The choice after setting the effort (null: the model's own); the model stays. */
export function switchEffort(current: ModelChoice, effort: Effort | null): ModelChoice {
  return { ...(current.model ? { model: current.model } : {}), ...(effort ? { effort } : {}) };
}

/**
 * A model as typed: `provider/model` as it is; a bare name that is the name of exactly one
 * listed model is that model (`o3-mini` → `openai/o3-mini`); anything else as it is, for
 * the engine to refuse with its reason.
 */
export function resolveModel(typed: string, models: ModelOption[] | null): string {
  const s = typed.trim();
  if (s.includes("/") || !models) return s;
  const named = models.filter((m) => modelName(m.label) === s);
  return named.length === 1 ? named[0]!.label : s;
}

/** The composer's own commands, read from a whole message. */
export type ChatCommand =
  | { kind: "open_picker" }
  | { kind: "model"; model: string | null }
  | { kind: "effort"; effort: Effort | null }
  | { kind: "mode"; mode: ChatMode }
  | { kind: "invalid"; message: string };

export const CHAT_COMMANDS = ["model", "effort", "plan", "act"] as const;
export type ChatCommandName = (typeof CHAT_COMMANDS)[number];

/**
 * `/model` (opens the picker), `/model provider/name`, `/model default`, `/effort
 * low|medium|high|default`, `/plan`, `/act`; null for any other message (sent as it is).
 * The command is the whole message.
 */
export function parseChatCommand(text: string): ChatCommand | null {
  const m = /^\/(model|effort|plan|act)(?:\s+([\s\S]*))?$/.exec(text.trim());
  if (!m) return null;
  const args = (m[2] ?? "").trim().split(/\s+/).filter(Boolean);
  if (m[1] === "plan" || m[1] === "act") {
    if (args.length > 0) return { kind: "invalid", message: `/${m[1]} takes nothing: it switches the chat, then send your message.` };
    return { kind: "mode", mode: m[1] };
  }
  if (m[1] === "model") {
    if (args.length === 0) return { kind: "open_picker" };
    if (args.length > 1) return { kind: "invalid", message: "/model takes one model: provider/model, or default." };
    const arg = args[0]!;
    return { kind: "model", model: arg.toLowerCase() === "default" ? null : arg };
  }
  const arg = args.length === 1 ? args[0]!.toLowerCase() : "";
  if (arg === "default") return { kind: "effort", effort: null };
  if (isEffort(arg)) return { kind: "effort", effort: arg };
  return { kind: "invalid", message: "/effort takes low, medium, high or default." };
}

/** What a composer command is about, for the line under the box. */
export const COMMAND_HELP: Record<ChatCommandName, { args: string; detail: string }> = {
  model: { args: "provider/model | default", detail: "The chat's model, from its next turn (alone: the model picker)" },
  effort: { args: "low | medium | high | default", detail: "How hard the chat's model reasons, where it takes an effort" },
  plan: { args: "", detail: "Plan mode: the agent reads and asks, and changes nothing until you approve its plan" },
  act: { args: "", detail: "Act mode: the agent changes files and runs commands as your rules allow" },
};

/** One row of the composer's "/" menu for the chat's own commands. */
export type CommandSuggestion =
  | { kind: "command"; name: ChatCommandName }
  | { kind: "value"; name: ChatCommandName; value: string; detail: string };

/** The text a suggestion puts in the composer. */
export function suggestionText(s: CommandSuggestion): string {
  // A command that takes nothing is whole as it is (Enter then runs it).
  if (s.kind === "command") return COMMAND_HELP[s.name].args ? `/${s.name} ` : `/${s.name}`;
  return `/${s.name} ${s.value}`;
}

/** What a listed model can do, in words: "default · sees images · takes an effort". */
export function modelAbilities(m: ModelOption): string {
  return [m.default ? "default" : "", m.sees_images ? "sees images" : "", m.takes_effort ? "takes an effort" : ""].filter(Boolean).join(" · ");
}

/**
 * The chat's commands that fit what is typed: `/mo` → `/model`; `/model o3` → the listed
 * models containing "o3" (and `default`); `/effort h` → `high`.
 */
export function commandSuggestions(text: string, models: ModelOption[] | null): CommandSuggestion[] {
  if (!text.startsWith("/")) return [];
  const bare = /^\/(\S*)$/.exec(text);
  if (bare) {
    const q = bare[1]!.toLowerCase();
    return CHAT_COMMANDS.filter((n) => n.includes(q)).map((name) => ({ kind: "command", name }));
  }
  const arg = /^\/(model|effort)\s+(\S*)$/.exec(text);
  if (!arg) return [];
  const name = arg[1] as ChatCommandName;
  const q = arg[2]!.toLowerCase();
  const values: CommandSuggestion[] =
    name === "model"
      ? [
          { kind: "value", name, value: "default", detail: `use the configured model${defaultModel(models) ? ` (${defaultModel(models)!.label})` : ""}` },
          ...(models ?? []).map((m): CommandSuggestion => ({ kind: "value", name, value: m.label, detail: modelAbilities(m) })),
        ]
      : [
          ...EFFORTS.map((e): CommandSuggestion => ({ kind: "value", name, value: e, detail: `${EFFORT_TITLES[e]} reasoning effort` })),
          { kind: "value", name, value: "default", detail: "the model's own" },
        ];
  return values.filter((v) => v.kind === "value" && v.value.toLowerCase().includes(q));
}

/** The button's words for a chat's choice: "o3-mini · high", "scripted-model (default)". */
export function choiceLabel(choice: ModelChoice, models: ModelOption[] | null): string {
  const model = choice.model ? modelName(choice.model) : defaultModel(models) ? `${modelName(defaultModel(models)!.label)} (default)` : "Default model";
  return choice.effort ? `${model} · ${choice.effort}` : model;
}
