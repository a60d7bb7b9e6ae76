// The rows of the chat: user and assistant bubbles (with their actions: edit and resend,
// fork from here), tool cards, notices, hook runs and sub-agent groups. Rows live inside a
// virtualised list, so any state that must survive scrolling out of view (expanded cards,
// the message being edited) is kept outside the components, in `ExpandedContext` and
// `MessageActionsContext`.

import { createContext, memo, useContext, useEffect, useRef, useState } from "react";
import type { InboxEntry } from "../protocol";
import type { Item, ToolStatus, ToolView } from "../chat/state";
import { useApp } from "../app/context";
import { highlightWithin } from "../lib/highlight";
import { InboxCard } from "./InboxCards";
import { CheckpointStrip, RestoreLine } from "./Checkpoints";
import { ArgumentsView, VisibleText } from "./Arguments";
import { HookRuns } from "./HookRuns";
import { ImageStrip } from "./Images";
import { MessageActions, MessageActionsContext, MessageEditor } from "./MessageActions";
import { EXIT_PLAN_MODE, PlanView, planOf } from "./PlanView";
import { escapeControlsInline } from "../lib/visible";
import { mcpServerOf, resourceMention, splitResourceLinks } from "../lib/mcpPrompts";
import { Icon, basename } from "./ui";

/** Expanded tool cards by key; a ref-backed set so virtualised rows remember it. */
export interface Expanded {
  has(key: string): boolean;
  toggle(key: string): void;
}
export const ExpandedContext = createContext<Expanded>({ has: () => false, toggle: () => {} });

/** Puts a resource's `@server:uri` mention into the chat's composer (none outside a chat). */
export const InsertMentionContext = createContext<((text: string) => void) | null>(null);

export const STATUS_LABEL: Record<ToolStatus, string> = {
  pending: "pending",
  running: "running",
  waiting: "waiting for approval",
  done: "done",
  failed: "failed",
  cancelled: "cancelled",
  rejected: "rejected",
  interrupted: "interrupted",
};

/** `nested`: inside a sub-agent's group (its messages are not the chat's own to edit or fork at). */
export const ChatRow = memo(function ChatRow({ item, onToggleGroup, nested = false }: { item: Item; onToggleGroup: (key: string) => void; nested?: boolean }) {
  switch (item.kind) {
    case "user":
      return <UserBubble item={item} nested={nested} />;
    case "assistant":
      return <AssistantBubble item={item} nested={nested} />;
    case "tool":
      return <ToolCard tool={item.tool} cardKey={item.key} />;
    case "notice":
      return (
        <div className={`notice notice-${item.level}`} role={item.level === "error" ? "alert" : "status"}>
          <span>{item.message}</span>
          {item.hint && <span className="hint">{item.hint}</span>}
        </div>
      );
    case "agent":
      return <AgentGroup item={item} onToggleGroup={onToggleGroup} />;
    case "restore":
      return <RestoreRow item={item} />;
    case "hooks":
      return <HooksLine item={item} />;
  }
});

function HooksLine({ item }: { item: Extract<Item, { kind: "hooks" }> }) {
  const expanded = useContext(ExpandedContext);
  return (
    <div className="hook-line" data-testid="hook-line">
      <HookRuns runs={item.runs} groupKey={item.key} expanded={expanded} />
    </div>
  );
}

function RestoreRow({ item }: { item: Extract<Item, { kind: "restore" }> }) {
  const expanded = useContext(ExpandedContext);
  return <RestoreLine item={item} open={expanded.has(item.key)} onToggle={() => expanded.toggle(item.key)} />;
}

function UserBubble({ item, nested }: { item: Extract<Item, { kind: "user" }>; nested: boolean }) {
  const expanded = useContext(ExpandedContext);
  const actions = useContext(MessageActionsContext);
  const editing = actions?.editing === item.key;
  // Stored, and the chat's own: a fork can start from it; the person's own can be edited.
  const stored = item.id != null && item.state === "sent" && !nested;
  // Cancelled editing gives the focus back to the Edit button.
  const ref = useRef<HTMLDivElement>(null);
  const wasEditing = useRef(editing);
  useEffect(() => {
    if (wasEditing.current && !editing) ref.current?.querySelector<HTMLElement>("[data-testid='message-edit']")?.focus();
    wasEditing.current = editing;
  }, [editing]);
  return (
    <div
      ref={ref}
      className={`message message-user state-${item.state}${editing ? " editing" : ""}`}
      data-testid="message"
      data-role="user"
      data-state={item.state}
      data-message-id={item.id ?? undefined}
    >
      {item.images && item.images.length > 0 && <ImageStrip images={item.images} label="Images sent with this message" />}
      {editing ? <MessageEditor item={item} /> : (item.text !== "" || !item.images?.length) && <div className="bubble plain">{item.text}</div>}
      {stored && !editing && <MessageActions item={item} canEdit={!item.synthetic} />}
      {item.state === "queued" && <div className="meta">queued — delivered at the agent's next step</div>}
      {item.state === "sending" && <div className="meta">sending…</div>}
      {item.state === "failed" && <div className="meta error-text">Not sent: {item.error}</div>}
      {item.state === "blocked" && (
        <div className="meta blocked-text" data-testid="blocked-reason" role="status">
          <Icon name="warning" size={12} />
          <span>
            Not sent: a hook blocked it — <VisibleText text={item.error ?? ""} />
          </span>
        </div>
      )}
      {item.state === "withdrawn" && (
        <div className="meta blocked-text" data-testid="withdrawn-reason" role="status">
          <Icon name="info" size={12} />
          <span>Not sent: stopped while it waited for a free place — its text is back in the message box.</span>
        </div>
      )}
      {item.hooks && item.hooks.length > 0 && <HookRuns runs={item.hooks} groupKey={item.key} expanded={expanded} />}
    </div>
  );
}

function AssistantBubble({ item, nested }: { item: Extract<Item, { kind: "assistant" }>; nested: boolean }) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (ref.current) highlightWithin(ref.current);
  }, [item.html]);
  return (
    <div className="message message-assistant" data-testid="message" data-role="assistant" data-message-id={item.id ?? undefined}>
      {item.reasoning && (
        <details className="reasoning">
          <summary>{item.streaming && !item.text ? "Thinking…" : "Reasoning"}</summary>
          <div className="plain small">{item.reasoning}</div>
        </details>
      )}
      {item.html != null ? (
        // Sanitised by the server (ammonia); the server is the one Markdown renderer.
        <div ref={ref} className="bubble markdown" dangerouslySetInnerHTML={{ __html: item.html }} />
      ) : (
        item.text && <div className="bubble plain">{item.text}</div>
      )}
      {item.streaming && <span className="streaming-cursor" data-testid="streaming" aria-label="The agent is writing" />}
      {item.interrupted && <div className="meta">interrupted</div>}
      {!item.streaming && !nested && item.text.trim() !== "" && <MessageActions item={item} canEdit={false} />}
    </div>
  );
}

function findEntry(inbox: InboxEntry[], tool: ToolView): InboxEntry | undefined {
  return (tool.inboxId != null ? inbox.find((e) => e.id === tool.inboxId) : undefined) ?? inbox.find((e) => e.tool_call_id === tool.id);
}

export function ToolCard({ tool, cardKey }: { tool: ToolView; cardKey: string }) {
  const expanded = useContext(ExpandedContext);
  const { inbox, openViewer, currentSessionId } = useApp();
  const open = expanded.has(cardKey);
  // An agent's plan (plan mode) reads as the Markdown it is.
  const plan = tool.name === EXIT_PLAN_MODE ? planOf(tool.arguments) : null;
  const entry = findEntry(inbox, tool);
  const status: ToolStatus = entry && (tool.status === "pending" || tool.status === "running" || tool.status === "waiting") ? "waiting" : tool.status;
  const statusLabel = entry?.kind === "question" ? "waiting for answer" : STATUS_LABEL[status];
  return (
    <div className={`tool-card status-${status}`} data-testid="tool-card" data-tool={tool.name} data-status={status}>
      <div className="tool-head">
        <button type="button" className="tool-toggle" aria-expanded={open} aria-label={open ? "Hide details" : "Show details"} onClick={() => expanded.toggle(cardKey)}>
          <span className={open ? "chev open" : "chev"}>
            <Icon name="chevron" size={12} />
          </span>
          <span className="tool-label" title={escapeControlsInline(tool.labelFull)}>
            {escapeControlsInline(tool.labelShort || tool.name)}
          </span>
        </button>
        {tool.path && (
          <button type="button" className="link path" title={`Open ${tool.path} in the viewer`} onClick={() => openViewer(tool.path!)}>
            {basename(tool.path)}
          </button>
        )}
        <span className={`chip chip-${status}`}>{statusLabel}</span>
      </div>
      {tool.hooks.length > 0 && <HookRuns runs={tool.hooks} groupKey={`${cardKey}:hooks`} expanded={expanded} />}
      {tool.images && tool.images.length > 0 && <ImageStrip images={tool.images} label="Images the tool showed the agent" />}
      {tool.progress && (
        <div className="progress" role="progressbar" aria-valuenow={tool.progress.progress} aria-valuemax={tool.progress.total ?? undefined}>
          <div className="bar" style={{ width: tool.progress.total ? `${Math.min(100, (100 * tool.progress.progress) / tool.progress.total)}%` : "30%" }} />
          {tool.progress.message && <span className="small muted">{tool.progress.message}</span>}
        </div>
      )}
      {open && (
        <div className="tool-body">
          <div className="small muted">{escapeControlsInline(tool.labelFull)}</div>
          {plan != null ? (
            <>
              <div className="small label">Plan</div>
              <PlanView plan={plan} sessionId={currentSessionId} />
            </>
          ) : (
            <>
              <div className="small label">Arguments</div>
              <ArgumentsView args={tool.arguments} testId="tool-arguments" />
            </>
          )}
          {tool.result != null && (
            <>
              <div className="small label">{status === "failed" ? "Error" : "Result"}</div>
              <ToolResult text={tool.result} server={mcpServerOf(tool.name)} />
            </>
          )}
        </div>
      )}
      {tool.checkpoint && (
        <CheckpointStrip
          checkpoint={tool.checkpoint}
          label={tool.labelShort || tool.name}
          open={expanded.has(`${cardKey}:checkpoint`)}
          onToggle={() => expanded.toggle(`${cardKey}:checkpoint`)}
        />
      )}
      {entry ? (
        <InboxCard entry={entry} />
      ) : (
        tool.inboxId != null && <div className="small muted">Waiting for the Inbox item…</div>
      )}
    </div>
  );
}

const RESULT_PREVIEW = 20_000;

/** `server`: an MCP tool's, whose `[resource link URI (NAME)]` lines become buttons. */
function ToolResult({ text, server }: { text: string; server: string | null }) {
  const [all, setAll] = useState(false);
  const long = text.length > RESULT_PREVIEW;
  const shown = long && !all ? text.slice(0, RESULT_PREVIEW) + "\n…" : text;
  return (
    <>
      <pre className="result">{server ? <WithResourceLinks text={shown} server={server} /> : shown}</pre>
      {long && (
        <button type="button" className="link small" onClick={() => setAll(!all)}>
          {all ? "Show less" : `Show all ${text.length.toLocaleString()} characters`}
        </button>
      )}
    </>
  );
}

function WithResourceLinks({ text, server }: { text: string; server: string }) {
  const insert = useContext(InsertMentionContext);
  if (!insert) return text;
  return splitResourceLinks(text).map((part, i) =>
    "text" in part ? (
      part.text
    ) : (
      <button
        key={i}
        type="button"
        className="link resource-link"
        data-testid="resource-link"
        title={`Attach ${part.link.uri} to your next message`}
        aria-label={`Attach ${part.link.name} (${part.link.uri}) to your next message`}
        onClick={() => insert(resourceMention(server, part.link.uri))}
      >
        <Icon name="attach" size={12} />
        <span className="resource-link-name">{part.link.name}</span>
        <span className="resource-link-uri">{part.link.uri}</span>
      </button>
    ),
  );
}

function AgentGroup({ item, onToggleGroup }: { item: Extract<Item, { kind: "agent" }>; onToggleGroup: (key: string) => void }) {
  const count = item.children.length;
  return (
    <div className="agent-group" data-testid="agent-group" style={{ marginLeft: Math.min(item.depth - 1, 4) * 12 }}>
      <button type="button" className="agent-head" aria-expanded={item.expanded} onClick={() => onToggleGroup(item.key)}>
        <span className={item.expanded ? "chev open" : "chev"}>
          <Icon name="chevron" size={12} />
        </span>
        <span>
          Sub-agent <strong>{item.agentId}</strong>
        </span>
        <span className="muted small">
          {count} step{count === 1 ? "" : "s"}
        </span>
        {item.running ? <span className="chip chip-running">running</span> : item.outcome && item.outcome !== "final" && <span className={`chip chip-${item.outcome}`}>{item.outcome}</span>}
      </button>
      {item.expanded && (
        <div className="agent-children">
          {item.children.map((c) => (
            <ChatRow key={c.key} item={c} onToggleGroup={onToggleGroup} nested />
          ))}
        </div>
      )}
    </div>
  );
}
