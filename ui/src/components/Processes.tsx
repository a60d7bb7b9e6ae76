// The chat's background processes (docs/processes.md): commands an agent started with
// `execute_cmd` and `background: true` (a dev server, a watcher) that run on. A strip
// above the composer, shown once the chat has one: a row each with a status dot, its
// command, how long it has run or how it ended, and Stop while it runs. A row opens to its
// output (the latest 256 KB), read again every second while it is open and running.
// Listed when the chat opens and again on each of the chat's `process_update` events.
// Commands and output are the agent's data: rendered as text, controls escaped.

import { memo, useCallback, useEffect, useId, useLayoutEffect, useMemo, useRef, useState } from "react";
import type { ProcessInfo } from "../protocol";
import { useCommand, useEvents, useTransport } from "../app/context";
import { errorText, formatTime } from "../lib/format";
import { newer, processTone, sameInfo, sortProcesses, stateText, terminalText } from "../lib/processes";
import { escapeControls, escapeControlsInline } from "../lib/visible";
import { VisibleText } from "./Arguments";
import { Icon } from "./ui";

/** How often an open, running process's output is read again. */
export const OUTPUT_POLL_MS = 1000;
/** How long to wait before reading again after a read failed. */
const OUTPUT_RETRY_MS = 3000;

type Note = (p: ProcessInfo) => void;

/** The time now, ticking every second while `active` (a running process's age). */
function useNow(active: boolean): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!active) return;
    setNow(Date.now());
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [active]);
  return now;
}

function summaryText(processes: ProcessInfo[]): string {
  const running = processes.filter((p) => p.status === "running").length;
  const ended = processes.length - running;
  return [running > 0 ? `${running} running` : "", ended > 0 ? `${ended} ended` : ""].filter(Boolean).join(" · ");
}

export function ProcessesPanel({ sessionId }: { sessionId: number }) {
  const [list, reload] = useCommand({ cmd: "list_processes", session_id: sessionId }, [sessionId]);
  // The last list the server gave (kept when a reload fails), and reports newer than it:
  // events, output reads and stop replies. Each new list starts them afresh.
  const [listed, setListed] = useState<ProcessInfo[] | null>(null);
  const [later, setLater] = useState<ReadonlyMap<number, ProcessInfo>>(() => new Map());
  useEffect(() => {
    if (list.state !== "ready") return;
    setListed(list.value.processes);
    setLater(new Map());
  }, [list]);
  const note = useCallback<Note>((p) => {
    setLater((m) => {
      const known = m.get(p.id);
      if (known && (sameInfo(known, p) || newer(known, p) === known)) return m;
      return new Map(m).set(p.id, p);
    });
  }, []);
  useEvents((_sid, e) => {
    if (e.type !== "process_update" || e.process.session_id !== sessionId) return;
    note(e.process);
    reload();
  });

  const processes = useMemo(() => {
    if (!listed) return null;
    const byId = new Map(listed.map((p) => [p.id, p]));
    for (const p of later.values()) {
      const known = byId.get(p.id);
      byId.set(p.id, known ? newer(known, p) : p);
    }
    return sortProcesses([...byId.values()]);
  }, [listed, later]);

  const now = useNow(processes?.some((p) => p.status === "running") ?? false);
  const [open, setOpen] = useState(true);
  const listId = useId();
  if (!processes || processes.length === 0) return null;
  return (
    <section className="processes" aria-label="Background processes" data-testid="processes">
      <div className="processes-head">
        <button type="button" className="todos-head" aria-expanded={open} aria-controls={listId} onClick={() => setOpen(!open)}>
          <span className={open ? "chev open" : "chev"}>
            <Icon name="chevron" size={12} />
          </span>
          Processes <span className="muted small" data-testid="processes-summary">{summaryText(processes)}</span>
        </button>
        {list.state === "error" && (
          <span className="error-text small" role="alert">
            Could not refresh the list: <VisibleText text={list.error} inline />{" "}
            <button type="button" className="link small" onClick={reload}>
              Retry
            </button>
          </span>
        )}
      </div>
      {open && (
        <ul id={listId} className="process-list" aria-label="Background processes of this chat">
          {processes.map((p) => (
            <ProcessRow key={p.id} process={p} sessionId={sessionId} now={now} onInfo={note} />
          ))}
        </ul>
      )}
    </section>
  );
}

/** The dot's meaning in words, for screen readers (the row's text says the rest). */
const TONE_WORDS = { running: "Running", ok: "Exited", failed: "Failed", stopped: "Stopped" } as const;

function ProcessRow({ process: p, sessionId, now, onInfo }: { process: ProcessInfo; sessionId: number; now: number; onInfo: Note }) {
  const t = useTransport();
  const [open, setOpen] = useState(false);
  const [stopping, setStopping] = useState(false);
  const [stopError, setStopError] = useState<string | null>(null);
  const toggleRef = useRef<HTMLButtonElement>(null);
  const stopRef = useRef<HTMLButtonElement>(null);
  const bodyId = useId();
  const tone = processTone(p);
  const running = p.status === "running";

  const stop = async () => {
    if (stopping) return;
    setStopping(true);
    setStopError(null);
    try {
      const r = await t.call({ cmd: "stop_process", session_id: sessionId, process_id: p.id });
      // The Stop button goes with the process: the focus moves to its row.
      if (r.process.status !== "running" && document.activeElement === stopRef.current) toggleRef.current?.focus();
      onInfo(r.process);
      if (r.process.status === "running") setStopError("Could not stop it: it was still running a few seconds after being told to stop.");
    } catch (e) {
      setStopError(`Could not stop it: ${errorText(e)}`);
    } finally {
      setStopping(false);
    }
  };

  const ended = p.ended ? `\n${escapeControls(p.ended)}` : "";
  return (
    <li className={`process process-${tone}`} data-testid="process-row" data-process-id={p.id} data-status={p.status}>
      <div className="process-head">
        <button ref={toggleRef} type="button" className="process-toggle" data-testid="process-toggle" aria-expanded={open} aria-controls={open ? bodyId : undefined} onClick={() => setOpen(!open)}>
          <span className={open ? "chev open" : "chev"}>
            <Icon name="chevron" size={12} />
          </span>
          <span className={`process-dot process-dot-${tone}`} aria-hidden="true" />
          <span className="sr-only">{TONE_WORDS[tone]}: </span>
          <span className="process-command" data-testid="process-command" title={escapeControls(p.command)}>
            <VisibleText text={p.command} inline />
          </span>
          <span className="process-state" data-testid="process-state" title={`Started ${formatTime(p.started_at)}${ended}`}>
            {stateText(p, now)}
          </span>
        </button>
        {running && (
          <button
            ref={stopRef}
            type="button"
            className="btn small-btn process-stop"
            data-testid="process-stop"
            aria-label={`Stop ${escapeControlsInline(p.command)}`}
            // Not `disabled` while the stop is on its way: the focus would be lost.
            aria-disabled={stopping}
            title="Stop it and every process it started"
            onClick={() => void stop()}
          >
            <Icon name="stop" size={11} /> {stopping ? "Stopping…" : "Stop"}
          </button>
        )}
      </div>
      {stopError && (
        <div className="error-text small process-error" role="alert" data-testid="process-error">
          <VisibleText text={stopError} inline />
        </div>
      )}
      {open && <ProcessBody id={bodyId} sessionId={sessionId} process={p} onInfo={onInfo} />}
    </li>
  );
}

/** The line the server puts first when it kept only the latest output. */
const NOT_KEPT = /^\[… \d+ earlier bytes not kept …\]\n/;

/** The output, escaped; re-rendered only when it changed (it can be 256 KB). */
const OutputText = memo(function OutputText({ text }: { text: string }) {
  const cut = NOT_KEPT.exec(text)?.[0];
  return (
    <>
      {cut && <span className="process-output-cut">{cut}</span>}
      <VisibleText text={cut ? text.slice(cut.length) : text} />
    </>
  );
});

/**
 * An open row: where it runs, how it ended, and its output — read when it opens, then
 * every second while it runs; once more when it ends. Follows the bottom while the person
 * has not scrolled up.
 */
function ProcessBody({ id, sessionId, process: p, onInfo }: { id: string; sessionId: number; process: ProcessInfo; onInfo: Note }) {
  const t = useTransport();
  const [output, setOutput] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const running = p.status === "running";
  const onInfoRef = useRef(onInfo);
  onInfoRef.current = onInfo;
  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const read = () => {
      t.call({ cmd: "process_output", session_id: sessionId, process_id: p.id }).then(
        (r) => {
          if (!live) return;
          setOutput(r.output);
          setError(null);
          onInfoRef.current(r.process);
          if (r.process.status === "running") timer = setTimeout(read, OUTPUT_POLL_MS);
        },
        (e: unknown) => {
          if (!live) return;
          setError(errorText(e));
          if (running) timer = setTimeout(read, OUTPUT_RETRY_MS);
        },
      );
    };
    read();
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [t, sessionId, p.id, running]);

  const text = useMemo(() => (output == null ? null : terminalText(output)), [output]);
  const boxRef = useRef<HTMLPreElement>(null);
  const stick = useRef(true);
  const onScroll = () => {
    const el = boxRef.current;
    if (el) stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < 24;
  };
  useLayoutEffect(() => {
    const el = boxRef.current;
    if (el && stick.current) el.scrollTop = el.scrollHeight;
  }, [text]);

  return (
    <div id={id} className="process-body" data-testid="process-body">
      <div className="muted small process-where">
        In <span className="process-workdir"><VisibleText text={p.workdir} inline /></span>, started {formatTime(p.started_at)}
      </div>
      {p.ended && (
        <div className={p.status === "exited" && processTone(p) === "failed" ? "small process-ended error-text" : "small process-ended"} data-testid="process-ended">
          <VisibleText text={p.ended} />
        </div>
      )}
      {text == null ? (
        !error && (
          <div className="muted small" role="status">
            <span className="spinner small-spinner" aria-hidden="true" /> Reading its output…
          </div>
        )
      ) : text === "" ? (
        <div className="muted small" data-testid="process-no-output">
          {running ? "No output yet." : "It wrote nothing."}
        </div>
      ) : (
        <pre ref={boxRef} className="process-output" data-testid="process-output" tabIndex={0} role="region" aria-label="Output" onScroll={onScroll}>
          <OutputText text={text} />
        </pre>
      )}
      {error && (
        <div className="error-text small" role="alert" data-testid="process-output-error">
          Could not read its output: <VisibleText text={error} inline />
        </div>
      )}
    </div>
  );
}
