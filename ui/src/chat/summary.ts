// A compacted chat (docs/agent-loop.md "Long conversations"): the messages a summary
// stands for stay in the chat, folded under the summary's card. Pure, as state.ts.

import type { SummaryInfo } from "../protocol";
import type { Item } from "./state";

/** A stored message's id, where the item has one (a group: its first child's). */
function idOf(it: Item): number | null {
  switch (it.kind) {
    case "user":
    case "assistant":
      return it.id;
    case "agent":
      for (const c of it.children) {
        const id = idOf(c);
        if (id != null) return id;
      }
      return null;
    default:
      return null;
  }
}

/**
 * Where the summary's card goes: before the first item of a message it does not cover.
 * The engine always cuts before a person's message, so everything before that one (tool
 * cards, notices, live answers not yet reloaded) went into the summary. When no loaded
 * item is newer, the fold ends after the last one it covers.
 */
export function summaryBoundary(items: Item[], upTo: number): number {
  let lastCovered = -1;
  for (let i = 0; i < items.length; i++) {
    const id = idOf(items[i]!);
    if (id == null) continue;
    if (id > upTo) return i;
    lastCovered = i;
  }
  return lastCovered + 1;
}

/** How many of the folded items are messages (the person's or the agent's). */
export function messagesIn(items: Item[]): number {
  return items.filter((it) => it.kind === "user" || it.kind === "assistant" || it.kind === "agent").length;
}

/**
 * The summary's text and its last "Left out:" line (what it does not keep), apart; `leftOut`
 * is null when the model wrote none.
 */
export function splitLeftOut(text: string): { body: string; leftOut: string | null } {
  const lines = text.trimEnd().split("\n");
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!.trim();
    if (line === "") continue;
    const m = /^\**left out:?\**:?\s*(.*)$/i.exec(line);
    if (!m) break;
    return { body: lines.slice(0, i).join("\n").trimEnd(), leftOut: m[1]!.replace(/\*+$/, "").trim() };
  }
  return { body: text.trim(), leftOut: null };
}

/** The key of a summary's card: a new compaction is a new card, folded again. */
export const summaryKey = (sessionId: number, s: SummaryInfo) => `s${sessionId}-summary${s.up_to_message_id}-${s.created_at}`;

/** A row of the chat's list: an item (`folded`: one the summary stands for, shown under it) or the summary's card. */
export type Row =
  | { kind: "item"; key: string; item: Item; folded: boolean }
  | { kind: "summary"; key: string; summary: SummaryInfo; messages: number; open: boolean };

/** The chat's rows, read one at a time (a long chat's are not copied). */
export interface Rows {
  count: number;
  at(i: number): Row | undefined;
  keyAt(i: number): string | undefined;
  /** How many loaded items the summary folds. */
  folded: number;
  /** The summary's card shows them. */
  open: boolean;
}

/**
 * The chat's rows with its latest summary: its card first, the items it stands for folded
 * under it (shown after it when the card's key is `openKey`), then the rest.
 */
export function foldUnderSummary(items: Item[], summary: SummaryInfo | null, sessionId: number, openKey: string | null): Rows {
  const item = (i: number, folded: boolean): Row | undefined => {
    const it = items[i];
    return it && { kind: "item", key: it.key, item: it, folded };
  };
  if (!summary) return { count: items.length, at: (i) => item(i, false), keyAt: (i) => items[i]?.key, folded: 0, open: false };
  const key = summaryKey(sessionId, summary);
  const open = openKey === key;
  const cut = summaryBoundary(items, summary.up_to_message_id);
  const card: Row = { kind: "summary", key, summary, messages: messagesIn(items.slice(0, cut)), open };
  // Row 0 is the card; then every item (open), or those after the cut.
  const skip = open ? 0 : cut;
  return {
    count: 1 + items.length - skip,
    at: (i) => (i === 0 ? card : item(skip + i - 1, skip + i - 1 < cut)),
    keyAt: (i) => (i === 0 ? key : items[skip + i - 1]?.key),
    folded: cut,
    open,
  };
}
