// The chat of one session as a pure reducer: stored history plus live events become a
// flat-ish list of display items (bubbles, tool cards, notices, sub-agent groups). Kept
// free of React and the transport so the event logic is unit-tested on its own.

import type { ChatImage, ChatMessage, CheckpointInfo, Event, HookRun, JsonValue, Reply, SummaryInfo, TodoItem, TodoStatus, ToolCallInfo, ToolCallStatus, TurnOutcome, WriteTodosArgs } from "../protocol";
import { tokenCount } from "../lib/contextUsage";
import { blockedPromptReason } from "../lib/hooks";

/** A call's status as stored, plus "waiting" while it waits in the Inbox. */
export type ToolStatus = ToolCallStatus | "waiting";

export interface ToolView {
  id: string;
  name: string;
  arguments: JsonValue;
  labelShort: string;
  labelFull: string;
  path: string | null;
  status: ToolStatus;
  result: string | null;
  /** Set while the call waits in the Inbox (approval or question). */
  inboxId: number | null;
  approval: { label: string; reason: string } | null;
  question: { question: string; suggested: string[] } | null;
  progress: { progress: number; total: number | null; message: string | null } | null;
  /** What the call changed in the chat's folder (or why that could not be recorded). */
  checkpoint: CheckpointInfo | null;
  /** Its PreToolUse, PostToolUse and Notification hooks' runs, as they came (live only). */
  hooks: HookRun[];
  /** The images it showed the model (`read_file` of an image). */
  images?: ChatImage[];
}

/**
 * "blocked": a UserPromptSubmit hook refused it; "withdrawn": its turn was stopped while it
 * waited for a free place (docs/board.md, "Agents at once"). Neither was stored.
 */
export type UserState = "sending" | "queued" | "sent" | "failed" | "blocked" | "withdrawn";

export type Item =
  | {
      kind: "user";
      key: string;
      id: number | null;
      text: string;
      /** The images sent with it (docs/images.md). */
      images?: ChatImage[];
      state: UserState;
      error?: string;
      /** When it was stored (history only), to place restores between messages. */
      at?: number;
      /** The UserPromptSubmit and SessionStart hooks' runs for it (live only). */
      hooks?: HookRun[];
      /** Blocked or withdrawn, and its text already offered back to the composer. */
      returned?: boolean;
      /** Written by Skald, not the person (a delivered task result): not theirs to edit. */
      synthetic?: boolean;
    }
  | {
      kind: "assistant";
      key: string;
      id: number | null;
      text: string;
      /** Server-rendered, sanitised HTML, and the text it was rendered from. */
      html: string | null;
      htmlFor: string | null;
      reasoning: string;
      streaming: boolean;
      interrupted: boolean;
      at?: number;
    }
  | { kind: "tool"; key: string; tool: ToolView }
  | {
      /** The chat's folder was restored (to before a call, or back from a restore). */
      kind: "restore";
      key: string;
      checkpoint: CheckpointInfo;
      /** The label of the call it went back to before, when that call is in the chat. */
      target: string | null;
      /** It undid an earlier restore. */
      undoes: boolean;
      /** A later restore undid it. */
      undone: boolean;
    }
  | { kind: "notice"; key: string; level: "error" | "warning" | "info"; message: string; hint?: string }
  /** Hook runs that belong to no tool card or message (Stop, PreCompact, …), in order. */
  | { kind: "hooks"; key: string; runs: HookRun[] }
  | {
      kind: "agent";
      key: string;
      stackId: number;
      agentId: string;
      depth: number;
      running: boolean;
      outcome: TurnOutcome | null;
      expanded: boolean;
      children: Item[];
    };

export interface ChatState {
  sessionId: number;
  loaded: boolean;
  items: Item[];
  running: boolean;
  /** Older messages exist on the server before the first one shown. */
  hasMore: boolean;
  /** Lowest message id shown, for paging older history. */
  oldestId: number | null;
  /** Open sub-agent frames (innermost last); live events go into the innermost. */
  stack: number[];
  seq: number;
  /** How much of a long prompt a local model has read, while it reads (tokens). */
  reading: { read: number; total: number } | null;
  /** The chat's checkpoints known so far, by id (oldest first). */
  checkpoints: CheckpointInfo[];
  /** The running turn ended before it began: a hook blocked its message. */
  promptBlocked: boolean;
  /**
   * The turn waits for a place among the agents that run at once (`turn_queued`), with how
   * many turns were in line before it (null when not known: the chat was read while it waited).
   */
  queue: { ahead: number | null } | null;
  /** The chat's latest compaction: its messages show folded under it (chat/summary.ts). */
  summary: SummaryInfo | null;
}

export type ChatAction =
  /** `ended`: the turn an earlier read saw running has ended since (its `done` came). */
  | { type: "history"; reply: Extract<Reply, { cmd: "history" }>; ended?: boolean }
  | { type: "older"; reply: Extract<Reply, { cmd: "history" }> }
  | { type: "checkpoints"; checkpoints: CheckpointInfo[] }
  | { type: "event"; event: Event }
  | { type: "local_send"; key: string; text: string; images?: ChatImage[] }
  | { type: "send_result"; key: string; queued: boolean }
  | { type: "send_failed"; key: string; error: string }
  | { type: "html"; key: string; html: string; forText: string }
  | { type: "toggle_group"; key: string }
  /** A blocked message's text was offered back to the composer. */
  | { type: "returned"; key: string }
  /** The chat's turn waits for a place, as the board says (a chat read while it waited). */
  | { type: "queue"; ahead: number | null }
  /** The chat's latest compaction as the engine now has it (after one was made or undone). */
  | { type: "summary"; summary: SummaryInfo | null };

export function emptyChat(sessionId: number): ChatState {
  return {
    sessionId,
    loaded: false,
    items: [],
    running: false,
    hasMore: false,
    oldestId: null,
    stack: [],
    reading: null,
    seq: 0,
    checkpoints: [],
    promptBlocked: false,
    summary: null,
    queue: null,
  };
}

export const PROVIDER_HINT = "Check the provider in Settings, then send again.";

function toolFromInfo(t: ToolCallInfo): ToolView {
  return {
    id: t.tool_call_id,
    name: t.name,
    arguments: t.arguments,
    labelShort: t.label_short,
    labelFull: t.label_full,
    path: t.path,
    status: t.status,
    result: t.result,
    inboxId: null,
    approval: null,
    question: null,
    progress: null,
    checkpoint: null,
    hooks: [],
    ...(t.images?.length ? { images: t.images } : {}),
  };
}

/** Builds display items from stored messages and tool calls. */
export function itemsFromHistory(
  messages: ChatMessage[],
  toolCalls: ToolCallInfo[],
  keyPrefix: string,
): Item[] {
  const byMessage = new Map<number, ToolCallInfo[]>();
  const ids = new Set(messages.map((m) => m.id));
  const orphans: ToolCallInfo[] = [];
  for (const t of toolCalls) {
    if (t.message_id != null && ids.has(t.message_id)) {
      const list = byMessage.get(t.message_id) ?? [];
      list.push(t);
      byMessage.set(t.message_id, list);
    } else {
      orphans.push(t);
    }
  }
  // Each entry remembers its sub-agent frame so consecutive ones can be grouped.
  const flat: { stack: number | null; item: Item }[] = [];
  const sorted = [...messages].sort((a, b) => a.id - b.id);
  for (const m of sorted) {
    if (m.role === "user") {
      flat.push({
        stack: m.stack_id,
        item: {
          kind: "user",
          key: `${keyPrefix}m${m.id}`,
          id: m.id,
          text: m.content,
          ...(m.images?.length ? { images: m.images } : {}),
          state: "sent",
          at: m.created_at,
          ...(m.synthetic ? { synthetic: true } : {}),
        },
      });
    } else if (m.role === "assistant") {
      const hasText = m.content.trim() !== "" || (m.reasoning ?? "").trim() !== "";
      if (hasText) {
        flat.push({
          stack: m.stack_id,
          item: {
            kind: "assistant",
            key: `${keyPrefix}m${m.id}`,
            id: m.id,
            text: m.content,
            html: m.html,
            htmlFor: m.html != null ? m.content : null,
            reasoning: m.reasoning ?? "",
            streaming: m.status === "streaming",
            interrupted: m.status === "interrupted",
            at: m.created_at,
          },
        });
      }
    }
    // role tool/system: results show in tool cards; system prompts are not chat.
    for (const t of byMessage.get(m.id) ?? []) {
      flat.push({ stack: t.stack_id, item: { kind: "tool", key: `${keyPrefix}t${t.tool_call_id}`, tool: toolFromInfo(t) } });
    }
  }
  for (const t of orphans) {
    flat.push({ stack: t.stack_id, item: { kind: "tool", key: `${keyPrefix}t${t.tool_call_id}`, tool: toolFromInfo(t) } });
  }
  const out: Item[] = [];
  let group: Extract<Item, { kind: "agent" }> | null = null;
  for (const { stack, item } of flat) {
    if (stack == null) {
      group = null;
      out.push(item);
      continue;
    }
    if (!group || group.stackId !== stack) {
      group = {
        kind: "agent",
        key: `${keyPrefix}a${stack}-${out.length}`,
        stackId: stack,
        agentId: "sub-agent",
        depth: 1,
        running: false,
        outcome: null,
        expanded: false,
        children: [],
      };
      out.push(group);
    }
    group.children.push(item);
  }
  return out;
}

// ---- nested item helpers -------------------------------------------------------------

/** Applies `fn` to the children list of the innermost open frame (or the top level). */
function updateContainer(items: Item[], stack: number[], fn: (list: Item[]) => Item[]): Item[] {
  if (stack.length === 0) return fn(items);
  const [head, ...rest] = stack;
  // The frame is the last agent group with that stack id (ids can repeat across turns).
  for (let i = items.length - 1; i >= 0; i--) {
    const it = items[i]!;
    if (it.kind === "agent" && it.stackId === head && it.running) {
      const copy = items.slice();
      copy[i] = { ...it, children: updateContainer(it.children, rest, fn) };
      return copy;
    }
  }
  return fn(items);
}

/** Maps every item (depth first); returns the same array when nothing changed. */
export function mapItems(items: Item[], fn: (it: Item) => Item): Item[] {
  let changed = false;
  const out = items.map((it) => {
    let next = fn(it);
    if (next.kind === "agent") {
      const children = mapItems(next.children, fn);
      if (children !== next.children) next = { ...next, children };
    }
    if (next !== it) changed = true;
    return next;
  });
  return changed ? out : items;
}

export function findItem(items: Item[], pred: (it: Item) => boolean): Item | undefined {
  for (const it of items) {
    if (pred(it)) return it;
    if (it.kind === "agent") {
      const f = findItem(it.children, pred);
      if (f) return f;
    }
  }
  return undefined;
}

function updateTool(items: Item[], id: string, fn: (t: ToolView) => ToolView): Item[] {
  return mapItems(items, (it) => (it.kind === "tool" && it.tool.id === id ? { ...it, tool: fn(it.tool) } : it));
}

function lastOf(list: Item[]): Item | undefined {
  return list[list.length - 1];
}

/** Streaming text goes into the open assistant bubble at the end, or a new one. */
function appendToAssistant(state: ChatState, field: "text" | "reasoning", text: string): ChatState {
  let seq = state.seq;
  const items = updateContainer(state.items, state.stack, (list) => {
    const last = lastOf(list);
    if (last && last.kind === "assistant" && last.streaming) {
      const copy = list.slice();
      copy[copy.length - 1] = { ...last, [field]: last[field] + text };
      return copy;
    }
    seq++;
    return [
      ...list,
      {
        kind: "assistant",
        key: `s${state.sessionId}-live${seq}`,
        id: null,
        text: field === "text" ? text : "",
        html: null,
        htmlFor: null,
        reasoning: field === "reasoning" ? text : "",
        streaming: true,
        interrupted: false,
      },
    ];
  });
  return { ...state, items, seq };
}

function endStreaming(items: Item[]): Item[] {
  return mapItems(items, (it) => (it.kind === "assistant" && it.streaming ? { ...it, streaming: false } : it));
}

function pushItem(state: ChatState, make: (key: string) => Item, top = false): ChatState {
  const seq = state.seq + 1;
  const item = make(`s${state.sessionId}-live${seq}`);
  const items = updateContainer(state.items, top ? [] : state.stack, (list) => [...endStreaming(list), item]);
  return { ...state, items, seq };
}

function notice(level: "error" | "warning" | "info", message: string, hint?: string) {
  return (key: string): Item => (hint ? { kind: "notice", key, level, message, hint } : { kind: "notice", key, level, message });
}

function sameText(a: string, b: string) {
  return a.trim() === b.trim();
}

function sameImages(a: ChatImage[] | undefined, b: ChatImage[] | undefined) {
  const x = a ?? [];
  const y = b ?? [];
  return x.length === y.length && x.every((img, i) => img.sha256 === y[i]!.sha256);
}

// ---- the reducer -------------------------------------------------------------------

export function chatReducer(state: ChatState, action: ChatAction): ChatState {
  switch (action.type) {
    case "history": {
      const r = action.reply;
      const items = itemsFromHistory(r.messages, r.tool_calls, `s${state.sessionId}-`);
      // Keep messages typed before the history arrived (still sending or queued).
      const local = state.items.filter((it) => it.kind === "user" && it.id == null && it.state !== "sent");
      const streaming = findItem(items, (it) => it.kind === "assistant" && it.streaming) != null;
      return syncCheckpoints({
        ...state,
        loaded: true,
        items: [...items, ...local],
        running: r.session.running || streaming || (state.running && !action.ended),
        queue: r.session.running && !streaming ? state.queue : null,
        hasMore: r.has_more,
        oldestId: r.messages.length ? Math.min(...r.messages.map((m) => m.id)) : state.oldestId,
        stack: [],
        summary: r.summary ?? null,
      });
    }
    case "older": {
      const r = action.reply;
      const older = itemsFromHistory(r.messages, r.tool_calls, `s${state.sessionId}-`);
      const known = new Set(state.items.map((i) => i.key));
      return syncCheckpoints({
        ...state,
        items: [...older.filter((i) => !known.has(i.key)), ...state.items],
        hasMore: r.has_more,
        oldestId: r.messages.length ? Math.min(...r.messages.map((m) => m.id)) : state.oldestId,
        summary: r.summary ?? null,
      });
    }
    case "checkpoints":
      return syncCheckpoints({ ...state, checkpoints: mergeCheckpoints(state.checkpoints, action.checkpoints) });
    case "local_send":
      return {
        ...state,
        items: [
          ...state.items,
          { kind: "user", key: action.key, id: null, text: action.text, ...(action.images?.length ? { images: action.images } : {}), state: "sending" },
        ],
      };
    case "send_result":
      // Its turn already ended, blocked by a hook or stopped in line, before this reply came.
      if (state.items.some((it) => it.kind === "user" && it.key === action.key && (it.state === "blocked" || it.state === "withdrawn"))) return state;
      return {
        ...state,
        running: true,
        items: state.items.map((it) =>
          it.kind === "user" && it.key === action.key && it.state === "sending"
            ? { ...it, state: action.queued ? "queued" : "sent" }
            : it,
        ),
      };
    case "send_failed":
      return {
        ...state,
        items: state.items.map((it) =>
          it.kind === "user" && it.key === action.key ? { ...it, state: "failed", error: action.error } : it,
        ),
      };
    case "html":
      return {
        ...state,
        items: mapItems(state.items, (it) =>
          it.kind === "assistant" && it.key === action.key ? { ...it, html: action.html, htmlFor: action.forText } : it,
        ),
      };
    case "toggle_group":
      return {
        ...state,
        items: mapItems(state.items, (it) => (it.kind === "agent" && it.key === action.key ? { ...it, expanded: !it.expanded } : it)),
      };
    case "returned":
      return {
        ...state,
        items: state.items.map((it) => (it.kind === "user" && it.key === action.key ? { ...it, returned: true } : it)),
      };
    case "summary":
      return { ...state, summary: action.summary };
    case "queue":
      return state.running ? { ...state, queue: { ahead: action.ahead } } : state;
    case "event":
      return applyEvent(state, action.event);
  }
}

export function applyEvent(state: ChatState, e: Event): ChatState {
  switch (e.type) {
    case "turn_queued":
      return { ...state, running: true, queue: { ahead: e.ahead } };
    case "turn_running":
      return { ...state, running: true, queue: null };
    case "user_message": {
      // Our own optimistic bubble (sending/queued) becomes the stored message; a
      // message typed elsewhere (another window, the CLI) is added.
      const idx = state.items.findIndex(
        (it) => it.kind === "user" && it.id == null && it.state !== "failed" && it.state !== "blocked" && sameText(it.text, e.text) && sameImages(it.images, e.images),
      );
      if (idx >= 0) {
        const items = state.items.slice();
        const it = items[idx] as Extract<Item, { kind: "user" }>;
        items.splice(idx, 1);
        // A queued message is delivered now: it moves to where the turn picks it up.
        return {
          ...state,
          running: true,
          items: [...endStreaming(items), { ...it, id: e.message_id, ...(e.images?.length ? { images: e.images } : {}), state: "sent" }],
        };
      }
      if (findItem(state.items, (it) => it.kind === "user" && it.id === e.message_id)) return state;
      return pushItem(
        { ...state, running: true },
        (key) => ({ kind: "user", key, id: e.message_id, text: e.text, ...(e.images?.length ? { images: e.images } : {}), state: "sent" }),
        true,
      );
    }
    case "prompt_progress":
      return { ...state, running: true, reading: e.read < e.total ? { read: e.read, total: e.total } : null };
    case "token_delta":
      return appendToAssistant({ ...state, running: true, reading: null }, "text", e.text);
    case "thinking":
      return appendToAssistant({ ...state, running: true, reading: null }, "reasoning", e.text);
    case "tool_start": {
      if (findItem(state.items, (it) => it.kind === "tool" && it.tool.id === e.tool_call_id)) {
        return { ...state, items: updateTool(state.items, e.tool_call_id, (t) => ({ ...t, status: "running" })) };
      }
      const tool: ToolView = {
        id: e.tool_call_id,
        name: e.name,
        arguments: e.arguments,
        labelShort: e.label_short,
        labelFull: e.label_full,
        path: e.path ?? null,
        status: "running",
        result: null,
        inboxId: null,
        approval: null,
        question: null,
        progress: null,
        checkpoint: null,
        hooks: [],
      };
      return pushItem(state, (key) => ({ kind: "tool", key, tool }));
    }
    case "tool_progress":
      return {
        ...state,
        items: updateTool(state.items, e.tool_call_id, (t) => ({
          ...t,
          progress: { progress: e.progress, total: e.total ?? null, message: e.message ?? null },
        })),
      };
    case "approval_required":
      return {
        ...state,
        items: updateTool(state.items, e.tool_call_id, (t) => ({
          ...t,
          status: "waiting",
          inboxId: e.inbox_id,
          approval: { label: e.label, reason: e.reason },
        })),
      };
    case "agent_question":
      return {
        ...state,
        items: updateTool(state.items, e.tool_call_id, (t) => ({
          ...t,
          status: "waiting",
          inboxId: e.inbox_id,
          question: { question: e.question, suggested: e.suggested_answers },
        })),
      };
    case "inbox_resolved":
      return {
        ...state,
        items: mapItems(state.items, (it) =>
          it.kind === "tool" && it.tool.inboxId === e.id
            ? { ...it, tool: { ...it.tool, inboxId: null, status: it.tool.status === "waiting" ? "running" : it.tool.status } }
            : it,
        ),
      };
    case "tool_done": {
      const items = finishTool(state.items, e.tool_call_id, "done", e.result);
      const images = e.images;
      if (!images?.length) return { ...state, items };
      return { ...state, items: updateTool(items, e.tool_call_id, (t) => ({ ...t, images })) };
    }
    case "tool_error":
      return { ...state, items: finishTool(state.items, e.tool_call_id, "failed", e.error) };
    case "tool_cancelled":
      return { ...state, items: finishTool(state.items, e.tool_call_id, "cancelled", null) };
    case "tool_rejected":
      return { ...state, items: finishTool(state.items, e.tool_call_id, "rejected", e.reason || null) };
    case "agent_start": {
      const next = pushItem(state, (key) => ({
        kind: "agent",
        key,
        stackId: e.stack_id,
        agentId: e.agent_id,
        depth: e.depth,
        running: true,
        outcome: null,
        // Open while it works so its approvals and questions are in sight.
        expanded: true,
        children: [],
      }));
      return { ...next, stack: [...state.stack, e.stack_id] };
    }
    case "agent_done": {
      const idx = state.stack.lastIndexOf(e.stack_id);
      const frames = idx >= 0 ? state.stack.slice(0, idx + 1) : state.stack;
      // Close the frame (found while it is still open), then pop it.
      const items = updateContainer(state.items, frames.slice(0, -1), (list) => {
        for (let i = list.length - 1; i >= 0; i--) {
          const it = list[i]!;
          if (it.kind === "agent" && it.stackId === e.stack_id && it.running) {
            const copy = list.slice();
            copy[i] = { ...it, running: false, outcome: e.outcome, expanded: false, children: endStreaming(it.children) };
            return copy;
          }
        }
        return list;
      });
      return { ...state, items, stack: idx >= 0 ? state.stack.slice(0, idx) : state.stack };
    }
    case "llm_failed":
      return pushItem(
        state,
        notice(
          e.retrying ? "warning" : "error",
          e.retrying ? `The model failed, retrying: ${e.message}` : `The model failed: ${e.message}`,
          e.retrying ? undefined : PROVIDER_HINT,
        ),
        true,
      );
    case "hook":
      return addHookRun(state, e.hook);
    case "error": {
      const reason = blockedPromptReason(e.message);
      if (reason != null) return blockPrompt(state, reason, e.message);
      return pushItem(state, notice("error", e.message, PROVIDER_HINT), true);
    }
    case "model_fallback":
      return pushItem(state, notice("info", `Switched model from ${e.from} to ${e.to}: ${e.reason}`), true);
    case "compaction_started":
      // Said before the summary is asked for: the turn waits for it.
      return pushItem(
        state,
        notice("info", `Summarising older turns to keep the context within the model's window — ${tokenCount(e.tokens)} of ${tokenCount(e.window)} tokens`),
        true,
      );
    case "context_compacted":
      return pushItem(state, notice("info", "Older turns summarised: the summary stands in for them from now on."), true);
    case "done": {
      // Stopped while it waited for a place: its messages were never stored; they go back
      // to the composer as a blocked one's do, and no "Stopped." is added.
      if (state.queue && e.outcome === "cancelled") return finishTurn({ ...withdraw(state), reading: null, promptBlocked: false, queue: null }, e.outcome, e.text, true);
      return finishTurn({ ...state, reading: null, promptBlocked: false, queue: null }, e.outcome, e.text, state.promptBlocked);
    }
    case "checkpoint": {
      const c = e.checkpoint;
      let next: ChatState = { ...state, checkpoints: mergeCheckpoints(state.checkpoints, [c]) };
      // A restore happens between turns: it goes after what the chat shows now.
      if (c.kind === "restore" && !findItem(next.items, (it) => it.kind === "restore" && it.checkpoint.id === c.id)) {
        next = pushItem(next, () => restoreItem(state.sessionId, c), true);
      }
      return syncCheckpoints(next);
    }
    default:
      // Global events (inbox, tasks, files, MCP) are handled outside the chat.
      return state;
  }
}

// ---- checkpoints ----------------------------------------------------------------------

function mergeCheckpoints(known: CheckpointInfo[], more: CheckpointInfo[]): CheckpointInfo[] {
  if (more.length === 0) return known;
  const byId = new Map(known.map((c) => [c.id, c]));
  for (const c of more) byId.set(c.id, c);
  return [...byId.values()].sort((a, b) => a.id - b.id);
}

function restoreItem(sessionId: number, c: CheckpointInfo): Item {
  return { kind: "restore", key: `s${sessionId}-cp${c.id}`, checkpoint: c, target: null, undoes: false, undone: false };
}

/** When an item happened, where known: a stored message's time, a restore's, a group's first. */
function itemAt(it: Item): number | undefined {
  switch (it.kind) {
    case "user":
    case "assistant":
      return it.at;
    case "restore":
      return it.checkpoint.created_at;
    case "agent":
      for (const c of it.children) {
        const at = itemAt(c);
        if (at !== undefined) return at;
      }
      return undefined;
    default:
      return undefined;
  }
}

/**
 * Puts the known checkpoints where the chat shows them: each call's on its tool card, each
 * restore as a line of its own after the last message before it (one older than all the
 * loaded history waits for that history), labelled with the call it went back to before
 * and marked when a later restore undid it.
 */
export function syncCheckpoints(state: ChatState): ChatState {
  const list = state.checkpoints;
  if (list.length === 0) return state;
  const byId = new Map(list.map((c) => [c.id, c]));
  const byCall = new Map<string, CheckpointInfo>();
  for (const c of list) if (c.kind === "call" && c.tool_call_id != null) byCall.set(c.tool_call_id, c);
  // Undone: a later restore, itself not undone, went back to before it.
  const undone = new Set<number>();
  for (let i = list.length - 1; i >= 0; i--) {
    const c = list[i]!;
    if (c.kind !== "restore" || undone.has(c.id) || c.restored_to == null) continue;
    if (byId.get(c.restored_to)?.kind === "restore") undone.add(c.restored_to);
  }
  const labels = new Map<string, string>();
  const walk = (items: Item[]) => {
    for (const it of items) {
      if (it.kind === "tool") labels.set(it.tool.id, it.tool.labelShort || it.tool.name);
      else if (it.kind === "agent") walk(it.children);
    }
  };
  walk(state.items);
  const view = (c: CheckpointInfo) => {
    const to = c.restored_to != null ? byId.get(c.restored_to) : undefined;
    return {
      target: to?.kind === "call" && to.tool_call_id != null ? labels.get(to.tool_call_id) ?? null : null,
      undoes: to?.kind === "restore",
      undone: undone.has(c.id),
    };
  };
  const placed = new Set<number>();
  let items = mapItems(state.items, (it) => {
    if (it.kind === "tool") {
      const cp = byCall.get(it.tool.id) ?? it.tool.checkpoint;
      return cp === it.tool.checkpoint ? it : { ...it, tool: { ...it.tool, checkpoint: cp } };
    }
    if (it.kind === "restore") {
      placed.add(it.checkpoint.id);
      const cp = byId.get(it.checkpoint.id) ?? it.checkpoint;
      const v = view(cp);
      const same = cp === it.checkpoint && v.target === it.target && v.undoes === it.undoes && v.undone === it.undone;
      return same ? it : { ...it, checkpoint: cp, ...v };
    }
    return it;
  });
  for (const c of list) {
    if (c.kind !== "restore" || placed.has(c.id)) continue;
    let first: number | undefined;
    let index = items.length;
    for (let i = 0; i < items.length; i++) {
      const at = itemAt(items[i]!);
      if (at === undefined) continue;
      first ??= at;
      if (at > c.created_at) {
        index = i;
        break;
      }
    }
    if (state.hasMore && first !== undefined && c.created_at < first) continue;
    const item = { ...(restoreItem(state.sessionId, c) as Extract<Item, { kind: "restore" }>), ...view(c) };
    items = [...items.slice(0, index), item, ...items.slice(index)];
  }
  return items === state.items ? state : { ...state, items };
}

// ---- hooks ----------------------------------------------------------------------------

/** Events whose runs are about the call that is running: shown on its card. */
const CALL_EVENTS = new Set(["PreToolUse", "PostToolUse", "Notification"]);
/** Events whose runs are about the message just sent: shown under it. */
const PROMPT_EVENTS = new Set(["UserPromptSubmit", "SessionStart"]);

const LIVE_TOOL: ReadonlySet<ToolStatus> = new Set(["running", "waiting", "pending"]);

/**
 * The message a starting turn is about: the first of ours not yet stored. Its hooks run,
 * and it may be blocked, before the server stores it (and says `user_message`).
 */
function pendingUser(items: Item[]): number {
  return items.findIndex((it) => it.kind === "user" && it.id == null && (it.state === "sending" || it.state === "sent" || it.state === "queued"));
}

/**
 * A hook's run goes where it belongs: on the card of the call it ran around (the one it
 * names; an older server's runs name none, and go on the one call running in the innermost
 * frame), under the message it ran for, else in a line of hook runs of its own in the
 * chat's order.
 */
function addHookRun(state: ChatState, run: HookRun): ChatState {
  if (PROMPT_EVENTS.has(run.event) && state.stack.length === 0) {
    const idx = pendingUser(state.items);
    if (idx >= 0) {
      const items = state.items.slice();
      const it = items[idx] as Extract<Item, { kind: "user" }>;
      items[idx] = { ...it, hooks: [...(it.hooks ?? []), run] };
      return { ...state, items };
    }
  }
  if (CALL_EVENTS.has(run.event)) {
    let attached = false;
    const items = updateContainer(state.items, state.stack, (list) => {
      const named = run.tool_call_id;
      const live = list.flatMap((it, i) =>
        it.kind === "tool" && (named ? it.tool.id === named : LIVE_TOOL.has(it.tool.status)) ? [i] : [],
      );
      // Two calls at once (delegations run side by side): which one is not known.
      if (live.length !== 1) return list;
      const i = live[0]!;
      const it = list[i] as Extract<Item, { kind: "tool" }>;
      const copy = list.slice();
      copy[i] = { ...it, tool: { ...it.tool, hooks: [...it.tool.hooks, run] } };
      attached = true;
      return copy;
    });
    if (attached) return { ...state, items };
  }
  let added = false;
  const items = updateContainer(state.items, state.stack, (list) => {
    const last = lastOf(list);
    if (last?.kind !== "hooks") return list;
    added = true;
    const copy = list.slice();
    copy[copy.length - 1] = { ...last, runs: [...last.runs, run] };
    return copy;
  });
  if (added) return { ...state, items };
  return pushItem(state, (key) => ({ kind: "hooks", key, runs: [run] }));
}

/**
 * A UserPromptSubmit hook blocked the message the turn began with: it was not stored. Ours
 * is marked so, with the hook's reason (its text goes back to the composer); one sent
 * elsewhere becomes a notice. The turn's `done` (cancelled) then adds no "Stopped.".
 */
function blockPrompt(state: ChatState, reason: string, message: string): ChatState {
  const next = { ...state, promptBlocked: true };
  const idx = pendingUser(state.items);
  if (idx < 0) return pushItem(next, notice("warning", message), true);
  const items = state.items.slice();
  const it = items[idx] as Extract<Item, { kind: "user" }>;
  items[idx] = { ...it, state: "blocked", error: reason };
  return { ...next, items };
}

/** Our messages a hook blocked or a stop withdrew whose text has not yet been offered back to the composer. */
export function blockedToReturn(items: Item[]): Extract<Item, { kind: "user" }>[] {
  return items.filter((it): it is Extract<Item, { kind: "user" }> => it.kind === "user" && (it.state === "blocked" || it.state === "withdrawn") && !it.returned);
}

/**
 * A turn stopped while it waited for a place never stored its messages: ours not yet
 * stored (the one it began with, and any sent while it waited) are marked withdrawn.
 */
function withdraw(state: ChatState): ChatState {
  // Nothing of the turn came before them: they are the chat's last items.
  const items = state.items.slice();
  for (let i = items.length - 1; i >= 0; i--) {
    const it = items[i]!;
    if (it.kind !== "user" || it.id != null) break;
    if (it.state === "sending" || it.state === "sent" || it.state === "queued") items[i] = { ...it, state: "withdrawn" };
  }
  return { ...state, items };
}

function finishTool(items: Item[], id: string, status: ToolStatus, result: string | null): Item[] {
  return updateTool(items, id, (t) => ({ ...t, status, result, inboxId: null, progress: null }));
}

/** `blocked`: the turn never began, a hook blocked its message (which says so itself). */
function finishTurn(state: ChatState, outcome: TurnOutcome, text: string, blocked = false): ChatState {
  let items = endStreaming(state.items);
  // Frames left open (the turn was stopped mid-delegation) close with the turn.
  items = mapItems(items, (it) => {
    if (it.kind === "agent" && it.running) return { ...it, running: false, outcome, expanded: false };
    if (it.kind === "tool" && (it.tool.status === "running" || it.tool.status === "waiting" || it.tool.status === "pending"))
      // A stop cancels what was running; a failure leaves it interrupted.
      return {
        ...it,
        tool: { ...it.tool, status: outcome === "final" ? it.tool.status : outcome === "cancelled" ? "cancelled" : "interrupted", inboxId: null },
      };
    return it;
  });
  // Queued messages the turn never picked up were dropped by the server (stop drops them);
  // after a blocked message they start the next turn.
  items = items.map((it) =>
    it.kind === "user" && it.state === "queued" && outcome !== "final" && !blocked ? { ...it, state: "failed", error: "Not delivered: the turn ended" } : it,
  );
  let next: ChatState = { ...state, items, running: false, stack: [] };
  // The final answer, if no tokens were streamed for it (a provider without streaming).
  if (text.trim() !== "") {
    let lastUser = -1;
    next.items.forEach((it, i) => {
      if (it.kind === "user") lastUser = i;
    });
    const answered = next.items.slice(lastUser + 1).some((it) => it.kind === "assistant" && sameText(it.text, text));
    if (!answered) {
      next = pushItem(next, (key) => ({
        kind: "assistant",
        key,
        id: null,
        text,
        html: null,
        htmlFor: null,
        reasoning: "",
        streaming: false,
        interrupted: false,
      }), true);
    }
  }
  if (outcome === "failed") {
    next = pushItem(next, notice("error", "The turn failed before the agent could finish.", PROVIDER_HINT), true);
  } else if (outcome === "exhausted") {
    next = pushItem(next, notice("warning", "The agent used up its step budget for this turn. Send a message to let it continue."), true);
  } else if (outcome === "cancelled" && !blocked) {
    next = pushItem(next, notice("info", "Stopped."), true);
  }
  return next;
}

const TODO_STATUSES: Record<TodoStatus, true> = { pending: true, in_progress: true, completed: true };

function isTodoStatus(v: JsonValue | undefined): v is TodoStatus {
  return typeof v === "string" && Object.hasOwn(TODO_STATUSES, v);
}

/**
 * A `write_todos` call's arguments as `WriteTodosArgs`. They are the model's JSON, so a
 * malformed call keeps only the items with a text; an unknown status reads as pending.
 */
function todosOf(args: JsonValue): WriteTodosArgs | null {
  if (typeof args !== "object" || args === null || Array.isArray(args)) return null;
  const todos = args["todos"];
  if (!Array.isArray(todos)) return null;
  return {
    todos: todos.flatMap((t): TodoItem[] => {
      if (typeof t !== "object" || t === null || Array.isArray(t) || typeof t["content"] !== "string") return [];
      const status = t["status"];
      return [{ content: t["content"], status: isTodoStatus(status) ? status : "pending" }];
    }),
  };
}

/** The latest `write_todos` list in the chat, for the checklist above the composer. */
export function latestTodos(items: Item[]): TodoItem[] | null {
  for (let i = items.length - 1; i >= 0; i--) {
    const it = items[i]!;
    if (it.kind === "tool" && it.tool.name === "write_todos") {
      const args = todosOf(it.tool.arguments);
      if (args) return args.todos;
    }
  }
  return null;
}

/** Assistant items whose HTML is missing or stale (for throttled rendering). */
export function staleAssistants(items: Item[]): Extract<Item, { kind: "assistant" }>[] {
  const out: Extract<Item, { kind: "assistant" }>[] = [];
  const walk = (list: Item[]) => {
    for (const it of list) {
      if (it.kind === "assistant" && it.text !== "" && it.htmlFor !== it.text) out.push(it);
      else if (it.kind === "agent") walk(it.children);
    }
  };
  walk(items);
  return out;
}
