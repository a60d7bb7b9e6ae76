// The chat's message box: sends (or queues) a message, stops the agent, keeps a draft per
// chat, takes images (pasted, dropped on the chat through `attachRef`, or chosen with the
// attach button; docs/images.md), runs the chat's own commands (`/model`, `/effort`;
// docs/models.md; `/plan`, `/act` and Shift+Tab, the chat's mode, docs/agent-loop.md "Plan
// mode", which it wears: a plan-mode chat's box says so), and helps with MCP prompts (the
// "/" menu and its argument hint) and resources (the "Attach resource" picker, and mentions
// put in from elsewhere through `insertRef`).

import { useEffect, useId, useLayoutEffect, useMemo, useRef, useState, useSyncExternalStore, type RefObject } from "react";
import type { ChatImage, ChatMode, McpPromptInfo, ModelOption } from "../protocol";
import type { ChatAction, UserState } from "../chat/state";
import { useTransport } from "../app/context";
import { useMcpCatalog } from "../app/mcpCatalog";
import type { ChatModel } from "../app/useChatModel";
import { MODE_DETAIL, type ChatModeControl } from "../app/useChatMode";
import { attachmentStore, attachmentWarnings, type Attachment } from "../lib/attachments";
import { loadDraft, saveDraft } from "../lib/drafts";
import { errorText } from "../lib/format";
import { fileBase64, fileLabel, IMAGE_TYPES, imageLabel, pastedImages, refusal, rememberImageUrl } from "../lib/images";
import { insertAt, matchPrompts, pickedPrompt, resourceMention, slashQuery } from "../lib/mcpPrompts";
import { commandSuggestions, defaultModel, parseChatCommand, resolveModel, type ChatCommand, type ChatCommandName, type ModelChoice } from "../lib/models";
import { ImageThumb } from "./Images";
import { CommandHint, PromptHint, PromptMenu, promptOptionId, slashItemText, type SlashItem } from "./PromptMenu";
import { AttachResource } from "./ResourcePicker";
import { Icon } from "./ui";

/** Puts text into the message at the caret (a resource's `@server:uri` mention). */
export type InsertText = (text: string) => void;

/** Attaches image files to the message (a drop on the chat). */
export type AttachFiles = (files: File[]) => void;

/**
 * `takeFocus`: when the chat opens (not when it opens with its context panel, which takes it).
 * `blocked`: messages not stored, whose text goes back into the box: one a hook blocked if
 * the box is empty; one withdrawn (its turn stopped while it waited for a place) always,
 * before what the box holds.
 * `insertRef`: set to a function that inserts text at the caret, for the rest of the chat.
 * `model`: the chat's model and effort, which `/model` and `/effort` change.
 * `mode`: the chat's mode, which `/plan`, `/act` and Shift+Tab change.
 */
export function Composer({
  sessionId,
  running,
  dispatch,
  takeFocus,
  blocked,
  insertRef,
  attachRef,
  model,
  mode,
}: {
  sessionId: number;
  running: boolean;
  dispatch: (a: ChatAction) => void;
  takeFocus: boolean;
  blocked: { key: string; text: string; images?: ChatImage[]; state?: UserState }[];
  insertRef?: RefObject<InsertText | null>;
  attachRef?: RefObject<AttachFiles | null>;
  model?: ChatModel;
  mode?: ChatModeControl;
}) {
  const t = useTransport();
  const [text, setText] = useState(() => loadDraft(sessionId));
  const [error, setError] = useState<string | null>(null);
  /** What a command just did (`/model`, `/effort`), until the text changes. */
  const [note, setNote] = useState<string | null>(null);
  const ref = useRef<HTMLTextAreaElement>(null);
  const textRef = useRef(text);
  textRef.current = text;
  /** Where the caret goes once the text set with it is in the box (and the box has focus). */
  const caretRef = useRef<number | null>(null);
  const { prompts, resources } = useMcpCatalog();
  const images = useAttachments(sessionId, setError);

  const takeFocusRef = useRef(takeFocus);
  takeFocusRef.current = takeFocus;
  useEffect(() => {
    const draft = loadDraft(sessionId);
    setText(draft);
    // Read by the effect below in this same pass, before the state is.
    textRef.current = draft;
    setError(null);
    setNote(null);
    if (takeFocusRef.current) ref.current?.focus();
  }, [sessionId]);
  // A message a hook blocked was not stored: its text comes back to be edited and sent
  // again — unless something new was typed meanwhile (the chat still shows it). One whose
  // turn was stopped while it waited in line comes back whatever the box holds, first.
  useEffect(() => {
    if (blocked.length === 0) return;
    const draft = textRef.current;
    const back = blocked.filter((b) => draft.trim() === "" || b.state === "withdrawn").map((b) => b.text);
    if (back.length > 0) {
      const body = [...back, ...(draft.trim() === "" ? [] : [draft])].join("\n\n");
      setText(body);
      textRef.current = body;
    }
    images.putBack(blocked.flatMap((b) => b.images ?? []));
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
  useEffect(() => {
    if (!attachRef) return;
    attachRef.current = images.add;
    return () => {
      attachRef.current = null;
    };
  });

  const commands = model != null || mode != null;
  const menu = useSlashMenu(text, prompts, model?.models ?? null, commands, (item) => {
    const next = slashItemText(item);
    edit(next, next.length);
  });
  const picked = useMemo(() => pickedPrompt(text, prompts), [text, prompts]);
  const commandHint = commands ? (/^\/(model|effort|plan|act)(\s|$)/.exec(text)?.[1] as ChatCommandName | undefined) : undefined;
  const ids = useId();
  const menuId = `${ids}-prompts`;
  const hintId = `${ids}-hint`;
  const modeId = `${ids}-mode`;
  const planning = mode?.mode === "plan";

  // A message may be images alone; it waits for the images still on their way.
  const canSend = !images.attaching && (text.trim() !== "" || images.ready.length > 0);
  const send = () => {
    const body = text;
    const command = commands ? parseChatCommand(body) : null;
    if (command) {
      // The menu would cover what the command says (a refusal above the box).
      menu.dismiss();
      runCommand(command, body);
      return;
    }
    if (!canSend) return;
    const shown = images.ready;
    const key = `local-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
    dispatch({ type: "local_send", key, text: body, images: shown });
    setText("");
    images.clear();
    setError(null);
    setNote(null);
    t.call({ cmd: "send_message", session_id: sessionId, text: body, ...(shown.length > 0 ? { images: shown } : {}) }).then(
      (r) => dispatch({ type: "send_result", key, queued: r.queued }),
      (e: unknown) => {
        dispatch({ type: "send_failed", key, error: errorText(e) });
        // Never lose typed input: put it back if the box is still empty.
        if (textRef.current === "") setText(body);
        images.putBack(shown);
        setError(errorText(e));
      },
    );
  };
  /**
   * `/model` and `/effort` change the chat's model (its next turn uses it) rather than being
   * sent; attached images stay for the next message. A refusal shows above the box, the
   * command still in it.
   */
  const runCommand = (command: ChatCommand, body: string) => {
    setError(null);
    setNote(null);
    const done = (said: string) => {
      // Cleared unless something else was typed meanwhile.
      if (textRef.current === body) setText("");
      setNote(said);
    };
    if (command.kind === "invalid") {
      setError(command.message);
      return;
    }
    if (command.kind === "mode") {
      if (!mode) return setError("This chat's mode cannot be changed here.");
      mode.setMode(command.mode).then(
        (m) => done(modeNote(m)),
        (e: unknown) => setError(`Could not switch to ${command.mode} mode: ${errorText(e)}`),
      );
      return;
    }
    const chat = model;
    if (!chat) return setError("This chat's model cannot be changed here.");
    switch (command.kind) {
      case "open_picker":
        setText("");
        chat.setPickerOpen(true);
        return;
      case "model":
        chat.chooseModel(command.model == null ? null : resolveModel(command.model, chat.models)).then(
          (c) => done(modelNote(c, chat)),
          (e: unknown) => setError(`Could not change the model: ${errorText(e)}`),
        );
        return;
      case "effort":
        chat.chooseEffort(command.effort).then(
          (c) => done(c.effort ? `This chat's model reasons with ${c.effort} effort from its next turn.` : "This chat's model reasons with its own effort from its next turn."),
          (e: unknown) => setError(`Could not change the effort: ${errorText(e)}`),
        );
        return;
    }
  };
  const stop = () => {
    t.call({ cmd: "stop", session_id: sessionId }).catch((e: unknown) => setError(`Could not stop: ${errorText(e)}`));
  };
  /** Shift+Tab: act ↔ plan, the text left as it is. */
  const switchMode = (control: ChatModeControl) => {
    setError(null);
    control.cycle().then(
      (m) => setNote(modeNote(m)),
      (e: unknown) => setError(`Could not switch the mode: ${errorText(e)}`),
    );
  };

  const warnings = attachmentWarnings(images.list);
  return (
    <form
      className={planning ? "composer composer-plan" : "composer"}
      data-mode={mode?.mode}
      onSubmit={(e) => {
        e.preventDefault();
        send();
      }}
    >
      {planning && (
        <div id={modeId} className="composer-mode small" data-testid="plan-mode-note">
          <Icon name="plan" size={13} />
          <span>
            <strong>Plan mode</strong> — the agent changes nothing until you approve its plan
          </span>
          <span className="composer-mode-how muted">Shift+Tab or /act to act</span>
        </div>
      )}
      {error && (
        <div className="error-text small composer-error" role="alert" data-testid="composer-error">
          {error}
        </div>
      )}
      {note && (
        <div className="composer-note small muted" role="status" data-testid="composer-note">
          {note}
        </div>
      )}
      {warnings.map((w) => (
        <div key={w} className="composer-warning small" role="status" data-testid="image-warning">
          <Icon name="warning" size={14} />
          <span>{w}</span>
        </div>
      ))}
      {images.list.length > 0 && <Attachments list={images.list} onRemove={images.remove} focusBox={() => ref.current?.focus()} />}
      <div className="composer-row">
        <div className="composer-input">
          {menu.open && <PromptMenu id={menuId} items={menu.matches} active={menu.active} onPick={menu.pick} onHover={menu.setIndex} />}
          <textarea
            ref={ref}
            data-testid="composer"
            aria-label="Message"
            aria-autocomplete={prompts.length > 0 || commands ? "list" : undefined}
            aria-controls={menu.open ? menuId : undefined}
            aria-activedescendant={menu.open ? promptOptionId(menuId, menu.active) : undefined}
            aria-describedby={[picked || commandHint ? hintId : "", planning ? modeId : ""].filter(Boolean).join(" ") || undefined}
            placeholder={
              running
                ? "Queue a message for the agent's next step…"
                : planning
                  ? "Ask the agent for a plan… (Shift+Tab: act mode)"
                  : prompts.length > 0
                    ? "Message the agent… (/ for prompts and commands)"
                    : commands
                      ? "Message the agent… (/ for commands)"
                      : "Message the agent…"
            }
            rows={1}
            value={text}
            onChange={(e) => {
              setText(e.target.value);
              setNote(null);
            }}
            onPaste={(e) => {
              const files = pastedImages(e.clipboardData);
              if (files.length === 0) return;
              e.preventDefault();
              images.add(files);
            }}
            onKeyDown={(e) => {
              if (menu.onKeyDown(e)) return;
              if (e.key === "Tab" && e.shiftKey && mode && !e.altKey && !e.ctrlKey && !e.metaKey && !e.nativeEvent.isComposing) {
                // As in Claude Code: the chat's mode, not the focus, moves.
                e.preventDefault();
                switchMode(mode);
              } else if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) {
                e.preventDefault();
                send();
              } else if (e.key === "Escape" && running) {
                e.preventDefault();
                stop();
              }
            }}
          />
        </div>
        <AttachImages onFiles={images.add} />
        <AttachResource resources={resources} onPick={(r) => insert(resourceMention(r.server, r.uri))} />
        {running && (
          <button type="button" className="btn btn-danger icon-text" data-testid="stop" aria-label="Stop the agent (Esc)" title="Stop (Esc)" onClick={stop}>
            <Icon name="stop" /> Stop
          </button>
        )}
        <button type="submit" className="btn btn-primary icon-text" data-testid="send" aria-label={running ? "Queue message" : "Send message"} disabled={!canSend}>
          <Icon name="send" /> {running ? "Queue" : "Send"}
        </button>
      </div>
      {picked && <PromptHint id={hintId} prompt={picked} />}
      {!picked && commandHint && <CommandHint id={hintId} name={commandHint} />}
    </form>
  );
}

/**
 * The chat's attached images (kept per chat while another is open), and what changes them:
 * `add` refuses a file too large or not an image at once, and sends the others to the
 * engine (`attach_image`), each shown as "attaching" until it answers.
 */
function useAttachments(sessionId: number, setError: (e: string | null) => void) {
  const t = useTransport();
  const store = attachmentStore(t);
  const list = useSyncExternalStore(store.subscribe, () => store.get(sessionId));
  const ready = useMemo(() => list.flatMap((a) => (a.image ? [a.image] : [])), [list]);
  const attaching = list.some((a) => a.image == null);

  const add = (files: File[]) => {
    const problems: string[] = [];
    for (const file of files) {
      const refused = refusal(file);
      if (refused) {
        problems.push(refused);
        continue;
      }
      const key = `img-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
      const name = fileLabel(file.name);
      store.update(sessionId, (l) => [...l, { key, name, image: null }]);
      const drop = () => store.update(sessionId, (l) => (l.some((a) => a.key === key) ? l.filter((a) => a.key !== key) : l));
      fileBase64(file)
        // The chat's id: the warning is about its model.
        .then((data) => t.call({ cmd: "attach_image", data, ...(file.name ? { name: file.name } : {}), session_id: sessionId }))
        .then(
          (r) => {
            rememberImageUrl(t, r.image.sha256, file);
            // Removed while it was on its way: it stays out.
            store.update(sessionId, (l) =>
              l.some((a) => a.key === key) ? l.map((a): Attachment => (a.key === key ? { ...a, image: r.image, ...(r.warning ? { warning: r.warning } : {}) } : a)) : l,
            );
          },
          (e: unknown) => {
            drop();
            setError(`Could not attach ${name}: ${errorText(e)}`);
          },
        );
    }
    setError(problems.length > 0 ? problems.join(" ") : null);
  };
  const remove = (key: string) => store.update(sessionId, (l) => l.filter((a) => a.key !== key));
  const clear = () => store.update(sessionId, (l) => (l.length === 0 ? l : []));
  /** Images of a message that was not sent come back, unless others were attached since. */
  const putBack = (images: ChatImage[]) => {
    if (images.length === 0) return;
    store.update(sessionId, (l) =>
      l.length > 0 ? l : images.map((image, i) => ({ key: `back-${Date.now()}-${i}`, name: imageLabel(image), image })),
    );
  };
  return { list, ready, attaching, add, remove, clear, putBack };
}

/** The attach button and its hidden file input. */
function AttachImages({ onFiles }: { onFiles: (files: File[]) => void }) {
  const input = useRef<HTMLInputElement>(null);
  return (
    <>
      <input
        ref={input}
        type="file"
        accept={IMAGE_TYPES.join(",")}
        multiple
        hidden
        data-testid="attach-image-input"
        onChange={(e) => {
          const files = [...(e.target.files ?? [])];
          // The same file may be chosen again.
          e.target.value = "";
          if (files.length > 0) onFiles(files);
        }}
      />
      <button
        type="button"
        className="btn composer-attach"
        data-testid="attach-image"
        aria-label="Attach images"
        title="Attach images (PNG, JPEG, WebP or GIF) — or paste or drop them"
        onClick={() => input.current?.click()}
      >
        <Icon name="image" />
      </button>
    </>
  );
}

/** The attached images as thumbnails, each with its name and a remove button. */
function Attachments({ list, onRemove, focusBox }: { list: Attachment[]; onRemove: (key: string) => void; focusBox: () => void }) {
  const removeButtons = useRef(new Map<string, HTMLButtonElement>());
  const removeAt = (i: number) => {
    const key = list[i]!.key;
    // The focus goes to the next image's remove button, the previous one's, or the box.
    const next = list[i + 1] ?? list[i - 1];
    onRemove(key);
    const el = next ? removeButtons.current.get(next.key) : null;
    if (el) el.focus();
    else focusBox();
  };
  return (
    <ul className="attachments" aria-label="Attached images" data-testid="attachments">
      {list.map((a, i) => (
        <li key={a.key} className={a.image ? "attachment" : "attachment attaching"} data-testid="attachment" data-state={a.image ? "ready" : "attaching"}>
          {a.image ? (
            <ImageThumb image={a.image} box={{ width: 96, height: 64 }} />
          ) : (
            <span className="image-thumb image-loading" style={{ width: 64, height: 64 }} aria-hidden="true" />
          )}
          <span className="attachment-name" title={a.name}>
            {a.image ? a.name : `Attaching ${a.name}…`}
          </span>
          <button
            ref={(el) => {
              if (el) removeButtons.current.set(a.key, el);
              else removeButtons.current.delete(a.key);
            }}
            type="button"
            className="attachment-remove"
            data-testid="attachment-remove"
            aria-label={`Remove ${a.name}`}
            title={`Remove ${a.name}`}
            onClick={() => removeAt(i)}
            onKeyDown={(e) => {
              if (e.key === "Delete" || e.key === "Backspace") {
                e.preventDefault();
                removeAt(i);
              }
            }}
          >
            <Icon name="close" size={12} />
          </button>
        </li>
      ))}
    </ul>
  );
}

/** What `/plan`, `/act` and Shift+Tab tell once the chat is in its new mode. */
function modeNote(m: ChatMode): string {
  const detail = MODE_DETAIL[m];
  return `${m === "plan" ? "Plan" : "Act"} mode: ${detail.charAt(0).toLowerCase()}${detail.slice(1)}`;
}

/** What `/model` tells once the chat has its new model. */
function modelNote(c: ModelChoice, chat: ChatModel): string {
  if (c.model) return `This chat uses ${c.model} from its next turn${c.effort ? `, with ${c.effort} effort` : ""}.`;
  const fallback = defaultModel(chat.models);
  return `This chat uses the default model${fallback ? ` (${fallback.label})` : ""} again from its next turn.`;
}

/**
 * The "/" menu's state: open while the text is `/query` (no space yet) and some prompt or
 * chat command matches — or `/model …`, `/effort …` and some value does — until Escape
 * closes it for that text. A command typed whole (`/model`, `/effort high`) comes first,
 * and Enter runs it rather than picks it. `onKeyDown` handles the menu's keys and says
 * whether it did (Enter then picks rather than sends).
 */
function useSlashMenu(text: string, prompts: McpPromptInfo[], models: ModelOption[] | null, commands: boolean, onPick: (item: SlashItem) => void) {
  const query = slashQuery(text);
  const matches = useMemo(() => {
    const found: SlashItem[] = query == null || prompts.length === 0 ? [] : matchPrompts(prompts, query).map((prompt) => ({ kind: "prompt", prompt }));
    if (!commands) return found;
    const own: SlashItem[] = commandSuggestions(text, models);
    const whole = own.filter((s) => isWhole(s, text));
    return [...whole, ...found, ...own.filter((s) => !whole.includes(s))];
  }, [prompts, query, text, models, commands]);
  const [index, setIndex] = useState(0);
  const [closedAt, setClosedAt] = useState<string | null>(null);
  // A new query starts at the first row.
  const key = query ?? (commands ? /^\/(?:model|effort)\s+\S*$/.exec(text)?.[0] : undefined);
  useEffect(() => setIndex(0), [key]);
  const open = matches.length > 0 && closedAt !== text;
  const active = Math.max(0, Math.min(index, matches.length - 1));
  const pick = (item: SlashItem) => {
    setClosedAt(null);
    onPick(item);
  };
  const onKeyDown = (e: React.KeyboardEvent): boolean => {
    if (!open || e.nativeEvent.isComposing) return false;
    const n = matches.length;
    const current = matches[active]!;
    if (e.key === "ArrowDown") setIndex((active + 1) % n);
    else if (e.key === "ArrowUp") setIndex((active - 1 + n) % n);
    else if (e.key === "Enter" && !e.shiftKey && isWhole(current, text)) return false;
    else if ((e.key === "Enter" || e.key === "Tab") && !e.shiftKey) pick(current);
    else if (e.key === "Escape") {
      // Only the menu closes (Escape in the box otherwise stops the agent).
      e.stopPropagation();
      setClosedAt(text);
    } else return false;
    e.preventDefault();
    return true;
  };
  /** Closes the menu for the text as it is (it opens again once the text changes). */
  const dismiss = () => setClosedAt(text);
  return { open, matches, active, setIndex, pick, onKeyDown, dismiss };
}

/** A chat command's row that is what is typed already (`/model`, `/effort high`). */
const isWhole = (item: SlashItem, text: string) => item.kind !== "prompt" && slashItemText(item).trim().toLowerCase() === text.trim().toLowerCase();
