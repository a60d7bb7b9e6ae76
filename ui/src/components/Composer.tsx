// The chat's message box: sends (or queues) a message, stops the agent, keeps a draft per
// chat, and helps with MCP prompts (the "/" menu and its argument hint) and resources (the
// "Attach resource" picker, and mentions put in from elsewhere through `insertRef`).

import { useEffect, useId, useLayoutEffect, useMemo, useRef, useState, type RefObject } from "react";
import type { McpPromptInfo } from "../protocol";
import type { ChatAction } from "../chat/state";
import { useTransport } from "../app/context";
import { useMcpCatalog } from "../app/mcpCatalog";
import { loadDraft, saveDraft } from "../lib/drafts";
import { errorText } from "../lib/format";
import { insertAt, matchPrompts, pickedPrompt, promptId, resourceMention, slashQuery } from "../lib/mcpPrompts";
import { PromptHint, PromptMenu, promptOptionId } from "./PromptMenu";
import { AttachResource } from "./ResourcePicker";
import { Icon } from "./ui";

/** Puts text into the message at the caret (a resource's `@server:uri` mention). */
export type InsertText = (text: string) => void;

/**
 * `takeFocus`: when the chat opens (not when it opens with its context panel, which takes it).
 * `blocked`: messages a hook blocked, whose text goes back into the box if it is empty.
 * `insertRef`: set to a function that inserts text at the caret, for the rest of the chat.
 */
export function Composer({
  sessionId,
  running,
  dispatch,
  takeFocus,
  blocked,
  insertRef,
}: {
  sessionId: number;
  running: boolean;
  dispatch: (a: ChatAction) => void;
  takeFocus: boolean;
  blocked: { key: string; text: string }[];
  insertRef?: RefObject<InsertText | null>;
}) {
  const t = useTransport();
  const [text, setText] = useState(() => loadDraft(sessionId));
  const [error, setError] = useState<string | null>(null);
  const ref = useRef<HTMLTextAreaElement>(null);
  const textRef = useRef(text);
  textRef.current = text;
  /** Where the caret goes once the text set with it is in the box (and the box has focus). */
  const caretRef = useRef<number | null>(null);
  const { prompts, resources } = useMcpCatalog();

  const takeFocusRef = useRef(takeFocus);
  takeFocusRef.current = takeFocus;
  useEffect(() => {
    const draft = loadDraft(sessionId);
    setText(draft);
    // Read by the effect below in this same pass, before the state is.
    textRef.current = draft;
    setError(null);
    if (takeFocusRef.current) ref.current?.focus();
  }, [sessionId]);
  // A message a hook blocked was not stored: its text comes back to be edited and sent
  // again — unless something new was typed meanwhile (the chat still shows it).
  useEffect(() => {
    if (blocked.length === 0) return;
    if (textRef.current.trim() === "") {
      const body = blocked.map((b) => b.text).join("\n\n");
      setText(body);
      textRef.current = body;
    }
    for (const b of blocked) dispatch({ type: "returned", key: b.key });
  }, [blocked, dispatch]);
  useEffect(() => {
    saveDraft(sessionId, text);
  }, [sessionId, text]);
  // Grow with the text up to a limit, then scroll; put the caret where an insertion asked.
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    el.style.height = "auto";
    el.style.height = `${Math.min(el.scrollHeight, 240)}px`;
    const caret = caretRef.current;
    if (caret != null) {
      caretRef.current = null;
      el.focus();
      el.setSelectionRange(caret, caret);
    }
  }, [text]);

  /** Replaces the text, the caret at `caret` and the focus in the box. */
  const edit = (next: string, caret: number) => {
    caretRef.current = caret;
    textRef.current = next;
    setText(next);
  };
  const insert: InsertText = (piece) => {
    const el = ref.current;
    const current = textRef.current;
    // The box keeps its selection while the focus is elsewhere (a picker, a tool card).
    const start = el ? el.selectionStart : current.length;
    const end = el ? el.selectionEnd : current.length;
    const r = insertAt(current, start, end, piece);
    edit(r.text, r.caret);
  };
  useEffect(() => {
    if (!insertRef) return;
    insertRef.current = insert;
    return () => {
      insertRef.current = null;
    };
  });

  const menu = useSlashMenu(text, prompts, (p) => edit(`/${promptId(p)} `, promptId(p).length + 2));
  const picked = useMemo(() => pickedPrompt(text, prompts), [text, prompts]);
  const ids = useId();
  const menuId = `${ids}-prompts`;
  const hintId = `${ids}-hint`;

  const send = () => {
    const body = text;
    if (body.trim() === "") return;
    const key = `local-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
    dispatch({ type: "local_send", key, text: body });
    setText("");
    setError(null);
    t.call({ cmd: "send_message", session_id: sessionId, text: body }).then(
      (r) => dispatch({ type: "send_result", key, queued: r.queued }),
      (e: unknown) => {
        dispatch({ type: "send_failed", key, error: errorText(e) });
        // Never lose typed input: put it back if the box is still empty.
        if (textRef.current === "") setText(body);
        setError(errorText(e));
      },
    );
  };
  const stop = () => {
    t.call({ cmd: "stop", session_id: sessionId }).catch((e: unknown) => setError(`Could not stop: ${errorText(e)}`));
  };

  return (
    <form
      className="composer"
      onSubmit={(e) => {
        e.preventDefault();
        send();
      }}
    >
      {error && (
        <div className="error-text small" role="alert">
          {error}
        </div>
      )}
      <div className="composer-row">
        <div className="composer-input">
          {menu.open && <PromptMenu id={menuId} prompts={menu.matches} active={menu.active} onPick={menu.pick} onHover={menu.setIndex} />}
          <textarea
            ref={ref}
            data-testid="composer"
            aria-label="Message"
            aria-autocomplete={prompts.length > 0 ? "list" : undefined}
            aria-controls={menu.open ? menuId : undefined}
            aria-activedescendant={menu.open ? promptOptionId(menuId, menu.active) : undefined}
            aria-describedby={picked ? hintId : undefined}
            placeholder={running ? "Queue a message for the agent's next step…" : prompts.length > 0 ? "Message the agent… (/ for prompts)" : "Message the agent…"}
            rows={1}
            value={text}
            onChange={(e) => setText(e.target.value)}
            onKeyDown={(e) => {
              if (menu.onKeyDown(e)) return;
              if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) {
                e.preventDefault();
                send();
              } else if (e.key === "Escape" && running) {
                e.preventDefault();
                stop();
              }
            }}
          />
        </div>
        <AttachResource resources={resources} onPick={(r) => insert(resourceMention(r.server, r.uri))} />
        {running && (
          <button type="button" className="btn btn-danger icon-text" data-testid="stop" aria-label="Stop the agent (Esc)" title="Stop (Esc)" onClick={stop}>
            <Icon name="stop" /> Stop
          </button>
        )}
        <button type="submit" className="btn btn-primary icon-text" data-testid="send" aria-label={running ? "Queue message" : "Send message"} disabled={text.trim() === ""}>
          <Icon name="send" /> {running ? "Queue" : "Send"}
        </button>
      </div>
      {picked && <PromptHint id={hintId} prompt={picked} />}
    </form>
  );
}

/**
 * The "/" menu's state: open while the text is `/query` (no space yet) and some prompt
 * matches, until Escape closes it for that text. `onKeyDown` handles the menu's keys and
 * says whether it did (Enter then picks rather than sends).
 */
function useSlashMenu(text: string, prompts: McpPromptInfo[], onPick: (p: McpPromptInfo) => void) {
  const query = slashQuery(text);
  const matches = useMemo(() => (query == null || prompts.length === 0 ? [] : matchPrompts(prompts, query)), [prompts, query]);
  const [index, setIndex] = useState(0);
  const [closedAt, setClosedAt] = useState<string | null>(null);
  // A new query starts at the first row.
  useEffect(() => setIndex(0), [query]);
  const open = matches.length > 0 && closedAt !== text;
  const active = Math.max(0, Math.min(index, matches.length - 1));
  const pick = (p: McpPromptInfo) => {
    setClosedAt(null);
    onPick(p);
  };
  const onKeyDown = (e: React.KeyboardEvent): boolean => {
    if (!open || e.nativeEvent.isComposing) return false;
    const n = matches.length;
    if (e.key === "ArrowDown") setIndex((active + 1) % n);
    else if (e.key === "ArrowUp") setIndex((active - 1 + n) % n);
    else if ((e.key === "Enter" || e.key === "Tab") && !e.shiftKey) pick(matches[active]!);
    else if (e.key === "Escape") {
      // Only the menu closes (Escape in the box otherwise stops the agent).
      e.stopPropagation();
      setClosedAt(text);
    } else return false;
    e.preventDefault();
    return true;
  };
  return { open, matches, active, setIndex, pick, onKeyDown };
}
