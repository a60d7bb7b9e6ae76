// What a person can do with a message of the chat (docs/store.md "Forks"): edit one they
// wrote and send it again — as a new chat with the conversation before it, the original
// left as it is — and "Fork from here" on any message, a new chat with the conversation up
// to and including it. Both open the new chat. The actions show on a message's hover or
// focus; a refusal shows under the message where the person acted.
//
// Rows live in a virtualised list: which message is being edited is kept by the list
// (`MessageActionsContext`), not the row.

import { createContext, useContext, useEffect, useRef, useState } from "react";
import type { Item } from "../chat/state";
import type { Transport } from "../transport";
import { errorText } from "../lib/format";
import { Icon } from "./ui";

type UserItem = Extract<Item, { kind: "user" }>;
type AssistantItem = Extract<Item, { kind: "assistant" }>;

export interface MessageActionsValue {
  /** The key of the message being edited, if one is. */
  editing: string | null;
  setEditing(key: string | null): void;
  /** Sends `text` instead of the message, in a new chat, and opens it. Throws the refusal. */
  edit(item: UserItem, text: string): Promise<void>;
  /** A new chat with the conversation up to and including the message, opened. Throws. */
  fork(item: UserItem | AssistantItem): Promise<void>;
}

export const MessageActionsContext = createContext<MessageActionsValue | null>(null);

/**
 * The stored id of a message: a streamed answer's is not known to the chat until it is
 * read again, so it is looked up among the chat's latest messages by its text.
 */
export async function storedMessageId(t: Transport, sessionId: number, item: UserItem | AssistantItem): Promise<number> {
  if (item.id != null) return item.id;
  const r = await t.call({ cmd: "history", session_id: sessionId, limit: 50 });
  const want = item.text.trim();
  const found = [...r.messages].reverse().find((m) => m.role === item.kind && m.stack_id == null && m.content.trim() === want);
  if (!found) throw new Error("this message is not stored yet: reload the chat and try again");
  return found.id;
}

/** The message's actions: "Edit" for a message the person wrote, "Fork from here". */
export function MessageActions({ item, canEdit }: { item: UserItem | AssistantItem; canEdit: boolean }) {
  const actions = useContext(MessageActionsContext);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  if (!actions) return null;
  const fork = async () => {
    if (busy) return;
    setBusy(true);
    setError(null);
    try {
      await actions.fork(item);
    } catch (e) {
      setError(`Could not fork the chat: ${errorText(e)}`);
      setBusy(false);
    }
  };
  return (
    <>
      <div className="message-actions" role="toolbar" aria-label="Message actions" data-testid="message-actions">
        {canEdit && (
          <button
            type="button"
            className="message-action"
            data-testid="message-edit"
            title="Edit and send again, as a new chat (this one stays as it is)"
            onClick={() => {
              setError(null);
              actions.setEditing(item.key);
            }}
          >
            <Icon name="edit" size={12} /> Edit
          </button>
        )}
        <button
          type="button"
          className="message-action"
          data-testid="message-fork"
          title="A new chat with the conversation up to here (this one stays as it is)"
          aria-disabled={busy}
          onClick={() => void fork()}
        >
          <Icon name="fork" size={12} /> {busy ? "Forking…" : "Fork from here"}
        </button>
      </div>
      {error && (
        <div className="meta error-text" role="alert" data-testid="message-action-error">
          {error}
        </div>
      )}
    </>
  );
}

/**
 * A message the person wrote, being edited in place: Enter (or Send) sends it as a new
 * chat, Shift+Enter starts a new line, Escape (or Cancel) leaves it as it was.
 */
export function MessageEditor({ item }: { item: UserItem }) {
  const actions = useContext(MessageActionsContext);
  const [text, setText] = useState(item.text);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const ref = useRef<HTMLTextAreaElement>(null);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    el.focus();
    el.setSelectionRange(el.value.length, el.value.length);
  }, []);
  // Grow with the text, up to a limit.
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    el.style.height = "auto";
    el.style.height = `${Math.min(el.scrollHeight, 320)}px`;
  }, [text]);
  if (!actions) return null;
  const empty = text.trim() === "" && !item.images?.length;
  const cancel = () => actions.setEditing(null);
  const send = async () => {
    if (busy) return;
    if (empty) {
      setError("The message is empty.");
      return;
    }
    setBusy(true);
    setError(null);
    try {
      await actions.edit(item, text);
    } catch (e) {
      // The text stays, to correct or send again.
      setError(`Could not send the edited message: ${errorText(e)}`);
      setBusy(false);
    }
  };
  return (
    <form
      className="message-editor"
      data-testid="message-editor"
      aria-busy={busy}
      onSubmit={(e) => {
        e.preventDefault();
        void send();
      }}
    >
      <textarea
        ref={ref}
        data-testid="message-editor-input"
        aria-label="Edit the message"
        value={text}
        rows={1}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) {
            e.preventDefault();
            void send();
          } else if (e.key === "Escape") {
            e.preventDefault();
            e.stopPropagation();
            cancel();
          }
        }}
      />
      <div className="message-editor-foot">
        <span className="muted small">Sent in a new chat with the conversation before it; this chat stays as it is.</span>
        <button type="button" className="btn" data-testid="message-editor-cancel" onClick={cancel}>
          Cancel
        </button>
        <button type="submit" className="btn btn-primary" data-testid="message-editor-send" aria-disabled={busy || empty}>
          {busy ? "Sending…" : "Send"}
        </button>
      </div>
      {error && (
        <div className="error-text small" role="alert" data-testid="message-editor-error">
          {error}
        </div>
      )}
    </form>
  );
}
