// Best of N (docs/worktrees.md, "Best of N"): the dialog's agents — each a model from
// `list_models`, the configured one, or one typed in — checked before anything is sent,
// the `best_of` command they make, and a trial's columns as the side-by-side view shows
// them (each agent's letter, model and state). Pure, so the rules are unit-tested.

import type { AgentState, BoardAgent, Command, ModelOption, SessionInfo, WorktreeInfo } from "../protocol";
import { resolveModel } from "./models";
import { trialLetter } from "./worktrees";

/** How many agents a trial has: the engine takes 2 to 4. */
export const MIN_AGENTS = 2;
export const MAX_AGENTS = 4;

/** The `pick` of an agent whose model is typed in. */
export const TYPED = "typed";
/** The `pick` of an agent on the configured model (sent as null). */
export const CONFIGURED = "configured";

/** One agent of the dialog: the configured model, a listed model's label, or one typed in. */
export interface AgentDraft {
  id: number;
  pick: string;
  typed: string;
}

/** The model an agent is sent with: null for the configured one. */
export function agentModel(a: AgentDraft, models: ModelOption[] | null): string | null {
  if (a.pick === CONFIGURED) return null;
  if (a.pick === TYPED) return resolveModel(a.typed, models);
  return a.pick;
}

/** What is wrong before anything is sent: with the prompt, the number of agents, each typed model. */
export interface BestOfProblems {
  text?: string;
  count?: string;
  /** By agent id. */
  agents: Record<number, string>;
}

export function bestOfProblems(text: string, agents: readonly AgentDraft[], models: ModelOption[] | null): BestOfProblems {
  const out: BestOfProblems = { agents: {} };
  if (text.trim() === "") out.text = "Write the prompt the agents are given.";
  if (agents.length < MIN_AGENTS || agents.length > MAX_AGENTS) out.count = `Best of N takes ${MIN_AGENTS} to ${MAX_AGENTS} agents.`;
  for (const a of agents) {
    if (a.pick !== TYPED) continue;
    const m = agentModel(a, models) ?? "";
    if (m === "") out.agents[a.id] = "Type a model, as provider/model.";
    else if (!/^[^/\s]+\/\S+$/.test(m)) out.agents[a.id] = `Name a provider and a model, as provider/model (not “${m}”).`;
  }
  return out;
}

export function hasProblems(p: BestOfProblems): boolean {
  return p.text != null || p.count != null || Object.keys(p.agents).length > 0;
}

/** The `best_of` command the dialog sends. */
export function bestOfCommand(text: string, agents: readonly AgentDraft[], models: ModelOption[] | null, workingDir?: string | null): Extract<Command, { cmd: "best_of" }> {
  return { cmd: "best_of", text, models: agents.map((a) => agentModel(a, models)), ...(workingDir ? { working_dir: workingDir } : {}) };
}

/** The letter of the agent at `i` (0: A). */
export function agentLetter(i: number): string {
  return String.fromCharCode(65 + i);
}

// ---- the side-by-side view ----

/** One agent of a trial, as its column shows it. */
export interface TrialColumn {
  worktree: WorktreeInfo;
  letter: string;
  /** Its chat, unless deleted. */
  session?: SessionInfo;
  /** Its row on the board, once read. */
  agent?: BoardAgent;
  state: AgentState;
  /** Its chat's own model; null: the configured one. */
  model: string | null;
}

const ACTIVE: ReadonlySet<AgentState> = new Set(["queued", "working", "waiting"]);

/**
 * An agent's state: the chat's own `running`/`queued` (this process's, always current)
 * first, the board's word for how it is going or how it ended otherwise.
 */
export function columnState(session: SessionInfo | undefined, agent: BoardAgent | undefined): AgentState {
  if (session?.queued) return "queued";
  if (session?.running) return agent && (agent.state === "working" || agent.state === "waiting") ? agent.state : "working";
  if (agent && !ACTIVE.has(agent.state)) return agent.state;
  // The board, read before the turn ended, still says it runs: it ended.
  return agent ? "done" : "idle";
}

/** Whether an agent is still at it (its diff may still change). */
export function isActive(state: AgentState): boolean {
  return ACTIVE.has(state);
}

/** A trial's columns, by letter. */
export function trialColumns(worktrees: readonly WorktreeInfo[], sessions: readonly SessionInfo[], agents: readonly BoardAgent[] | null): TrialColumn[] {
  return [...worktrees]
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((w) => {
      const session = w.session_id != null ? sessions.find((s) => s.id === w.session_id) : undefined;
      const agent = w.session_id != null ? agents?.find((a) => a.session_id === w.session_id) : undefined;
      return { worktree: w, letter: trialLetter(w), session, agent, state: columnState(session, agent), model: session?.model ?? agent?.model ?? null };
    });
}
