// Background tasks and scheduled (cron) jobs. Both arrive as untyped JSON objects, so
// every field is read defensively.

import { useState } from "react";
import type { JsonValue } from "../protocol";
import { useApp, useCommand, useEvents, useTransport } from "../app/context";
import { asObject, bool, errorText, formatTime, num, str } from "../lib/json";
import { EmptyState, ErrorState, Icon, Spinner } from "../components/ui";

export function TasksView() {
  const [tasks, reloadTasks] = useCommand({ cmd: "list_tasks" }, []);
  const [cron, reloadCron] = useCommand({ cmd: "list_cron" }, []);
  useEvents((_sid, e) => {
    if (e.type === "task_update") reloadTasks();
  });
  return (
    <section className="screen" aria-labelledby="tasks-h">
      <header className="screen-header">
        <h1 id="tasks-h">Tasks</h1>
        <button
          type="button"
          className="icon-btn"
          aria-label="Refresh"
          title="Refresh"
          onClick={() => {
            reloadTasks();
            reloadCron();
          }}
        >
          <Icon name="refresh" />
        </button>
      </header>
      <div className="screen-body">
        <h2>Background tasks</h2>
        {tasks.state === "loading" ? (
          <Spinner />
        ) : tasks.state === "error" ? (
          <ErrorState message={tasks.error} onRetry={reloadTasks} />
        ) : tasks.value.tasks.length === 0 ? (
          <EmptyState title="No background tasks">Agents start them to work on something while you keep chatting.</EmptyState>
        ) : (
          <ul className="rows" aria-label="Background tasks">
            {[...tasks.value.tasks]
              .sort((a, b) => (num(asObject(b), "created_at") ?? 0) - (num(asObject(a), "created_at") ?? 0))
              .map((t, i) => (
                <TaskRow key={num(asObject(t), "id") ?? i} task={t} />
              ))}
          </ul>
        )}
        <h2>Scheduled jobs</h2>
        {cron.state === "loading" ? (
          <Spinner />
        ) : cron.state === "error" ? (
          <ErrorState message={cron.error} onRetry={reloadCron} />
        ) : cron.value.jobs.length === 0 ? (
          <EmptyState title="No scheduled jobs">Ask an agent to run something on a schedule, and the job shows up here.</EmptyState>
        ) : (
          <ul className="rows" aria-label="Scheduled jobs">
            {cron.value.jobs.map((j, i) => (
              <CronRow key={num(asObject(j), "id") ?? i} job={j} onChanged={reloadCron} />
            ))}
          </ul>
        )}
      </div>
    </section>
  );
}

function TaskRow({ task }: { task: JsonValue }) {
  const { openSession } = useApp();
  const o = asObject(task);
  const status = str(o, "status") ?? "unknown";
  const sessionId = num(o, "session_id");
  const result = str(o, "result");
  return (
    <li className="row-card">
      <div className="row-main">
        <span className={`chip chip-${status}`}>{status}</span>
        <strong>{str(o, "title") ?? `Task ${num(o, "id") ?? ""}`}</strong>
        <span className="muted small">{str(o, "agent_id")}</span>
        <span className="muted small grow-right">{formatTime(num(o, "created_at"))}</span>
        {sessionId != null && (
          <button type="button" className="btn small-btn" onClick={() => openSession(sessionId)}>
            Open chat
          </button>
        )}
      </div>
      {str(o, "description") && <div className="small muted">{str(o, "description")}</div>}
      {result && (
        <details>
          <summary className="small">Result</summary>
          <pre className="result">{result}</pre>
        </details>
      )}
    </li>
  );
}

function CronRow({ job, onChanged }: { job: JsonValue; onChanged: () => void }) {
  const t = useTransport();
  const o = asObject(job);
  const id = num(o, "id");
  const enabled = bool(o, "enabled") ?? false;
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [confirm, setConfirm] = useState(false);
  const [editing, setEditing] = useState(false);
  const run = async (f: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await f();
      onChanged();
    } catch (e) {
      setError(errorText(e));
    } finally {
      setBusy(false);
    }
  };
  const name = str(o, "name") ?? `Job ${id ?? ""}`;
  return (
    <li className="row-card">
      <div className="row-main">
        <label className="switch" title={enabled ? "Enabled" : "Disabled"}>
          <input type="checkbox" role="switch" aria-label={`${name} enabled`} checked={enabled} disabled={busy || id == null} onChange={(e) => void run(() => t.call({ cmd: "set_cron_enabled", id: id!, enabled: e.target.checked }))} />
          <span />
        </label>
        <strong>{name}</strong>
        <code className="small">{str(o, "cron", "schedule")}</code>
        <span className="muted small">{str(o, "timezone", "tz")}</span>
        <span className="muted small">{str(o, "agent_id")}</span>
        <span className="grow-right small muted">
          next: {formatTime(num(o, "next_run_at", "next_run"))}
          {num(o, "last_run_at", "last_run") != null && <> · last: {formatTime(num(o, "last_run_at", "last_run"))}</>}
        </span>
        <button type="button" className="icon-btn" aria-label={`Edit ${name}`} data-testid="cron-edit" disabled={id == null} onClick={() => setEditing((v) => !v)}>
          <Icon name="edit" size={14} />
        </button>
        {confirm ? (
          <>
            <button type="button" className="btn btn-danger small-btn" autoFocus disabled={busy} onClick={() => void run(() => t.call({ cmd: "remove_cron", id: id! }))}>
              Delete
            </button>
            <button type="button" className="btn small-btn" onClick={() => setConfirm(false)}>
              Cancel
            </button>
          </>
        ) : (
          <button type="button" className="icon-btn" aria-label={`Delete ${name}`} disabled={id == null} onClick={() => setConfirm(true)}>
            <Icon name="trash" size={14} />
          </button>
        )}
      </div>
      {editing && id != null ? (
        <CronEditor
          job={o}
          busy={busy}
          onCancel={() => setEditing(false)}
          onSave={(v) =>
            void run(async () => {
              await t.call({ cmd: "update_cron", id, ...v });
              setEditing(false);
            })
          }
        />
      ) : (
        str(o, "prompt") && <div className="small muted clamp">{str(o, "prompt")}</div>
      )}
      {error && <div className="error-text small" role="alert">{error}</div>}
    </li>
  );
}

type CronFields = { name: string; prompt: string; cron: string; timezone: string };

/** A job's name, prompt and schedule, checked by the engine when saved. */
function CronEditor({
  job,
  busy,
  onSave,
  onCancel,
}: {
  job: ReturnType<typeof asObject>;
  busy: boolean;
  onSave: (v: CronFields) => void;
  onCancel: () => void;
}) {
  const [v, setV] = useState<CronFields>({
    name: str(job, "name") ?? "",
    prompt: str(job, "prompt") ?? "",
    cron: str(job, "cron") ?? "",
    timezone: str(job, "timezone") ?? "",
  });
  const field = (k: keyof CronFields) => (e: { target: { value: string } }) => setV((old) => ({ ...old, [k]: e.target.value }));
  return (
    <form
      className="cron-editor"
      aria-label="Edit the scheduled job"
      onSubmit={(e) => {
        e.preventDefault();
        onSave(v);
      }}
    >
      <label className="field">
        <span>Name</span>
        <input data-testid="cron-name" value={v.name} onChange={field("name")} />
      </label>
      <label className="field">
        <span>Schedule (cron: minute hour day month weekday, or seconds first)</span>
        <input data-testid="cron-expr" value={v.cron} required onChange={field("cron")} />
      </label>
      <label className="field">
        <span>Time zone</span>
        <input data-testid="cron-tz" value={v.timezone} required onChange={field("timezone")} />
      </label>
      <label className="field">
        <span>Prompt</span>
        <textarea data-testid="cron-prompt" rows={3} value={v.prompt} required onChange={field("prompt")} />
      </label>
      <div className="row">
        <button type="submit" className="btn btn-primary" data-testid="cron-save" disabled={busy}>
          Save
        </button>
        <button type="button" className="btn" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
