// Background tasks and scheduled (cron) jobs.

import { useState } from "react";
import type { CronJobInfo, TaskInfo } from "../protocol";
import { useApp, useCommand, useEvents, useTransport } from "../app/context";
import { errorText, formatTime } from "../lib/format";
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
              .sort((a, b) => b.created_at - a.created_at)
              .map((t) => (
                <TaskRow key={t.id} task={t} />
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
            {cron.value.jobs.map((j) => (
              <CronRow key={j.id} job={j} onChanged={reloadCron} />
            ))}
          </ul>
        )}
      </div>
    </section>
  );
}

function TaskRow({ task }: { task: TaskInfo }) {
  const { openSession } = useApp();
  const { status, session_id: sessionId, result } = task;
  return (
    <li className="row-card">
      <div className="row-main">
        <span className={`chip chip-${status}`}>{status}</span>
        <strong>{task.title || `Task ${task.id}`}</strong>
        <span className="muted small">{task.agent_id}</span>
        <span className="muted small grow-right">{formatTime(task.created_at)}</span>
        {sessionId != null && (
          <button type="button" className="btn small-btn" onClick={() => openSession(sessionId)}>
            Open chat
          </button>
        )}
      </div>
      {task.description && <div className="small muted">{task.description}</div>}
      {result && (
        <details>
          <summary className="small">Result</summary>
          <pre className="result">{result}</pre>
        </details>
      )}
    </li>
  );
}

function CronRow({ job, onChanged }: { job: CronJobInfo; onChanged: () => void }) {
  const t = useTransport();
  const { id, enabled } = job;
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
  const name = job.name || `Job ${id}`;
  return (
    <li className="row-card">
      <div className="row-main">
        <label className="switch" title={enabled ? "Enabled" : "Disabled"}>
          <input type="checkbox" role="switch" aria-label={`${name} enabled`} checked={enabled} disabled={busy} onChange={(e) => void run(() => t.call({ cmd: "set_cron_enabled", id, enabled: e.target.checked }))} />
          <span />
        </label>
        <strong>{name}</strong>
        <code className="small">{job.cron}</code>
        <span className="muted small">{job.timezone}</span>
        <span className="muted small">{job.agent_id}</span>
        <span className="grow-right small muted">next: {formatTime(job.next_run_at)}</span>
        <button type="button" className="icon-btn" aria-label={`Edit ${name}`} data-testid="cron-edit" onClick={() => setEditing((v) => !v)}>
          <Icon name="edit" size={14} />
        </button>
        {confirm ? (
          <>
            <button type="button" className="btn btn-danger small-btn" autoFocus disabled={busy} onClick={() => void run(() => t.call({ cmd: "remove_cron", id }))}>
              Delete
            </button>
            <button type="button" className="btn small-btn" onClick={() => setConfirm(false)}>
              Cancel
            </button>
          </>
        ) : (
          <button type="button" className="icon-btn" aria-label={`Delete ${name}`} onClick={() => setConfirm(true)}>
            <Icon name="trash" size={14} />
          </button>
        )}
      </div>
      {editing ? (
        <CronEditor
          job={job}
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
        job.prompt && <div className="small muted clamp">{job.prompt}</div>
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
  job: CronJobInfo;
  busy: boolean;
  onSave: (v: CronFields) => void;
  onCancel: () => void;
}) {
  const [v, setV] = useState<CronFields>({ name: job.name, prompt: job.prompt, cron: job.cron, timezone: job.timezone });
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
