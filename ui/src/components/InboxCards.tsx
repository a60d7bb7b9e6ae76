// The answerable cards for Inbox items: approvals (with diff, bypass and "always"), a plan
// to approve (`exit_plan_mode`, docs/agent-loop.md "Plan mode"), agent questions and MCP
// elicitation forms. The chat and the Inbox screen render the
// very same components so an item looks and behaves the same in both places.

import { useEffect, useId, useMemo, useRef, useState } from "react";
import type { InboxAnswer, InboxEntry, InboxKind, RuleDraft } from "../protocol";
import { useApp, useTransport } from "../app/context";
import { unifiedDiff } from "../lib/diff";
import { errorText, pretty } from "../lib/format";
import { fieldsFromSchema, formToJson, initialValues, type FormValues } from "../lib/elicitation";
import { Icon } from "./ui";
import { ArgumentsView, VisibleText } from "./Arguments";
import { escapeControlsInline } from "../lib/visible";
import { sandboxWarns } from "../lib/sandbox";
import { EXIT_PLAN_MODE, PlanView, planOf } from "./PlanView";

/** An Inbox item of one kind, its payload typed by the kind. */
type EntryOf<K extends InboxKind> = Extract<InboxEntry, { kind: K }>;

/** Sends the answer; the card stays with a busy/error state until the server confirms. */
function useAnswer(entry: InboxEntry, onAnswered?: () => void) {
  const t = useTransport();
  const { refreshInbox } = useApp();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const send = async (answer: InboxAnswer) => {
    setBusy(true);
    setError(null);
    try {
      await t.call({ cmd: "answer", inbox_id: entry.id, answer });
      onAnswered?.();
      refreshInbox();
    } catch (e) {
      setError(errorText(e));
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, send };
}

export function InboxCard({ entry, showContext = false }: { entry: InboxEntry; showContext?: boolean }) {
  switch (entry.kind) {
    case "approval":
      return entry.payload.tool === EXIT_PLAN_MODE && planOf(entry.payload.arguments) != null ? (
        <PlanApprovalCard entry={entry} showContext={showContext} />
      ) : (
        <ApprovalCard entry={entry} showContext={showContext} />
      );
    case "question":
      return <QuestionCard entry={entry} showContext={showContext} />;
    case "elicitation":
      return <ElicitationCard entry={entry} showContext={showContext} />;
    default: {
      // Every kind is handled above; a kind from a newer server shows as raw JSON.
      const other = (entry satisfies never) as InboxEntry;
      return (
        <div className="card inbox-card">
          <CardContext entry={other} show={showContext} />
          <div>{other.title}</div>
          <pre className="json">{pretty(other.payload)}</pre>
        </div>
      );
    }
  }
}

function CardContext({ entry, show }: { entry: InboxEntry; show: boolean }) {
  const { openSession } = useApp();
  if (!show && entry.depth === 0) return null;
  return (
    <div className="card-context">
      {show && (
        <button type="button" className="link" onClick={() => openSession(entry.session_id)} title="Open this chat">
          {entry.session_title || `Chat ${entry.session_id}`}
        </button>
      )}
      <span className="chip">{entry.agent_id || "agent"}</span>
      {entry.depth > 0 && <span className="muted">sub-agent, depth {entry.depth}</span>}
    </div>
  );
}

// ---- approvals -------------------------------------------------------------------------

export function ApprovalCard({ entry, showContext }: { entry: EntryOf<"approval">; showContext: boolean }) {
  const { busy, error, send } = useAnswer(entry);
  const { write, reason, category } = entry.payload;
  // For a shell command: the sandbox approving runs it in (absent from older servers).
  const sandbox = entry.payload.sandbox ?? null;
  // The label is a title (cut, one line); the arguments below are the call whole.
  const label = escapeControlsInline(entry.payload.label);
  const [mode, setMode] = useState<"idle" | "reject" | "always">("idle");
  const [note, setNote] = useState("");
  const [menu, setMenu] = useState(false);
  const { openViewer } = useApp();
  const noteRef = useRef<HTMLTextAreaElement>(null);
  useEffect(() => {
    if (mode === "reject") noteRef.current?.focus();
  }, [mode]);

  return (
    <div className="card inbox-card approval-card" data-testid="approval-card" data-inbox-id={entry.id} role="group" aria-label={`Approval: ${label}`}>
      <CardContext entry={entry} show={showContext} />
      <div className="card-title">
        <span className="chip chip-waiting">Needs approval</span>
        <span className="card-label" title={label}>{label}</span>
      </div>
      {reason && (
        <div className="muted small">
          <VisibleText text={reason} />
        </div>
      )}
      {sandbox && (
        <div
          className={sandboxWarns(sandbox) ? "approval-sandbox small warn" : "approval-sandbox small muted"}
          data-testid="approval-sandbox"
          data-mode={sandbox.mode}
          data-available={sandbox.available ? "1" : "0"}
        >
          <Icon name={sandboxWarns(sandbox) ? "warning" : "shield"} size={13} />
          <span>
            {/* The note can quote the agent's reason for a grant: shown with controls escaped. */}
            <VisibleText text={sandbox.note} inline />
          </span>
        </div>
      )}
      {write ? (
        <div>
          <button type="button" className="link path" onClick={() => write.path && openViewer(write.path)}>
            <Icon name="file" size={14} /> <VisibleText text={write.path} inline />
          </button>
          <DiffView oldText={write.old ?? ""} newText={write.new ?? ""} />
        </div>
      ) : (
        <ArgumentsView args={entry.payload.arguments} testId="approval-arguments" />
      )}
      {mode === "reject" && (
        <div className="reject-row">
          <textarea
            ref={noteRef}
            data-testid="reject-note"
            aria-label="Why reject (sent to the agent)"
            placeholder="Tell the agent why, or what to do instead (optional)"
            value={note}
            rows={2}
            onChange={(e) => setNote(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === "Enter" && !e.shiftKey) {
                e.preventDefault();
                void send({ decision: "reject", note });
              } else if (e.key === "Escape") {
                e.stopPropagation();
                setMode("idle");
              }
            }}
          />
          <div className="row">
            <button type="button" className="btn btn-danger" data-testid="reject-confirm" disabled={busy} onClick={() => void send({ decision: "reject", note })}>
              Reject
            </button>
            <button type="button" className="btn" onClick={() => setMode("idle")}>
              Cancel
            </button>
          </div>
        </div>
      )}
      {mode === "always" && <RuleEditor entry={entry} busy={busy} onCancel={() => setMode("idle")} onSave={(rule) => void send({ decision: "always_allow", rule })} />}
      {mode === "idle" && (
        <div className="row actions">
          <button type="button" className="btn btn-primary" data-testid="approve" disabled={busy} onClick={() => void send({ decision: "approve" })}>
            Approve
          </button>
          <button type="button" className="btn" data-testid="reject" disabled={busy} onClick={() => setMode("reject")}>
            Reject…
          </button>
          <div
            className="menu-wrap"
            onBlur={(e) => {
              // Close the menu when focus leaves it (click elsewhere, Tab away).
              if (!e.currentTarget.contains(e.relatedTarget as Node | null)) setMenu(false);
            }}
          >
            <button type="button" className="btn" aria-haspopup="menu" aria-expanded={menu} disabled={busy} onClick={() => setMenu((m) => !m)}>
              Bypass ▾
            </button>
            {menu && (
              <div className="menu" role="menu" onKeyDown={(e) => e.key === "Escape" && setMenu(false)}>
                {category && (
                  <button
                    type="button"
                    role="menuitem"
                    autoFocus
                    onClick={() => {
                      setMenu(false);
                      void send({ decision: "approve_with_bypass", scope: { scope: "category", value: category }, minutes: 30 });
                    }}
                  >
                    Approve all {category} calls for 30 min
                  </button>
                )}
                <button
                  type="button"
                  role="menuitem"
                  autoFocus={!category}
                  onClick={() => {
                    setMenu(false);
                    void send({ decision: "approve_with_bypass", scope: { scope: "all" }, minutes: 30 });
                  }}
                >
                  Approve everything for 30 min
                </button>
              </div>
            )}
          </div>
          <button type="button" className="btn" disabled={busy} onClick={() => setMode("always")}>
            Always…
          </button>
        </div>
      )}
      {error && <div className="error-text" role="alert">{error}</div>}
    </div>
  );
}

/**
 * A plan to approve: the agent of a chat in plan mode presents it with `exit_plan_mode`.
 * Approved, the chat acts (the engine switches it, and the agent carries the plan out in the
 * same turn); not, the note tells the agent what to change and it keeps planning. A plan is
 * not a call to allow always or for a while: no bypass, no rule.
 */
export function PlanApprovalCard({ entry, showContext }: { entry: EntryOf<"approval">; showContext: boolean }) {
  const { busy, error, send } = useAnswer(entry);
  const plan = planOf(entry.payload.arguments) ?? "";
  const [keepPlanning, setKeepPlanning] = useState(false);
  const [note, setNote] = useState("");
  const noteRef = useRef<HTMLTextAreaElement>(null);
  useEffect(() => {
    if (keepPlanning) noteRef.current?.focus();
  }, [keepPlanning]);
  const reject = () => void send({ decision: "reject", note });
  return (
    <div className="card inbox-card approval-card plan-card" data-testid="approval-card" data-plan="1" data-inbox-id={entry.id} role="group" aria-label="The agent's plan, to approve">
      <CardContext entry={entry} show={showContext} />
      <div className="card-title">
        <span className="chip chip-plan">
          <Icon name="plan" size={11} /> Plan
        </span>
        <span className="card-label">The agent's plan — approve it to let the agent act</span>
      </div>
      <PlanView plan={plan} sessionId={entry.session_id} />
      {keepPlanning ? (
        <div className="reject-row">
          <textarea
            ref={noteRef}
            data-testid="reject-note"
            aria-label="What should change in the plan (sent to the agent)"
            placeholder="What should change in the plan? (sent to the agent; optional)"
            value={note}
            rows={2}
            onChange={(e) => setNote(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === "Enter" && !e.shiftKey) {
                e.preventDefault();
                reject();
              } else if (e.key === "Escape") {
                e.stopPropagation();
                setKeepPlanning(false);
              }
            }}
          />
          <div className="row">
            <button type="button" className="btn" data-testid="reject-confirm" disabled={busy} onClick={reject}>
              Keep planning
            </button>
            <button type="button" className="btn" onClick={() => setKeepPlanning(false)}>
              Cancel
            </button>
          </div>
        </div>
      ) : (
        <>
          <div className="row actions">
            <button type="button" className="btn btn-primary" data-testid="approve" disabled={busy} onClick={() => void send({ decision: "approve" })}>
              Approve plan and start
            </button>
            <button type="button" className="btn" data-testid="reject" disabled={busy} onClick={() => setKeepPlanning(true)}>
              Keep planning…
            </button>
          </div>
          <div className="muted small">Approving switches this chat to act mode: the agent can change files and run commands as your rules allow.</div>
        </>
      )}
      {error && <div className="error-text" role="alert">{error}</div>}
    </div>
  );
}

export function DiffView({ oldText, newText }: { oldText: string; newText: string }) {
  const diff = useMemo(() => unifiedDiff(oldText, newText), [oldText, newText]);
  return (
    <div className="diff" data-testid="diff-view" role="table" aria-label="Changes">
      <div className="diff-stats small">
        <span className="add">+{diff.added}</span> <span className="del">−{diff.removed}</span>
        {oldText === "" && <span className="muted"> (new file)</span>}
      </div>
      {diff.rows.length === 0 && <div className="muted small">No changes.</div>}
      {diff.rows.map((r, i) =>
        r.kind === "hunk" || r.kind === "note" ? (
          <div key={i} className={`diff-row diff-${r.kind}`} role="row">
            {r.text}
          </div>
        ) : (
          <div key={i} className={`diff-row diff-${r.kind}`} role="row">
            <span className="ln">{r.oldNo ?? ""}</span>
            <span className="ln">{r.newNo ?? ""}</span>
            <span className="mark">{r.kind === "add" ? "+" : r.kind === "del" ? "-" : " "}</span>
            <span className="code">
              <VisibleText text={r.text} />
            </span>
          </div>
        ),
      )}
    </div>
  );
}

function RuleEditor({ entry, busy, onCancel, onSave }: { entry: EntryOf<"approval">; busy: boolean; onCancel: () => void; onSave: (r: RuleDraft) => void }) {
  const t = useTransport();
  const [rule, setRule] = useState<RuleDraft | null>(null);
  const [matched, setMatched] = useState<number | null>(null);
  const [reach, setReach] = useState<string | null>(null);
  const [proposed, setProposed] = useState<RuleDraft | null>(null);
  const [error, setError] = useState<string | null>(null);
  const hostHint = useId();
  useEffect(() => {
    let live = true;
    t.call({ cmd: "propose_rule", inbox_id: entry.id }).then(
      (r) => {
        if (!live) return;
        setRule(r.rule);
        setProposed(r.rule);
        setMatched(r.matched);
        setReach(r.reach);
      },
      (e: unknown) => live && setError(errorText(e)),
    );
    return () => {
      live = false;
    };
  }, [t, entry.id]);
  if (error) return <div className="error-text" role="alert">Could not propose a rule: {error}</div>;
  if (!rule) return <div className="muted small">Proposing a rule…</div>;
  const field = (key: "tool_pattern" | "path_pattern" | "command_pattern" | "domain_pattern" | "working_dir" | "note", label: string, optional: boolean, describedBy?: string) => (
    <label className="field">
      <span>{label}</span>
      <input
        data-testid={`rule-${key}`}
        aria-describedby={describedBy}
        value={rule[key] ?? ""}
        placeholder={optional ? "any" : ""}
        onChange={(e) => {
          const v = e.target.value;
          setRule({ ...rule, [key]: optional && v === "" ? null : v });
        }}
      />
    </label>
  );
  return (
    <form
      className="rule-editor"
      onSubmit={(e) => {
        e.preventDefault();
        onSave(rule.domain_pattern == null ? rule : { ...rule, domain_pattern: rule.domain_pattern.trim() || null });
      }}
    >
      <div className="small">
        Always allow calls matching this rule{matched != null && <> — it would have matched <strong>{matched}</strong> earlier call{matched === 1 ? "" : "s"}</>}.
      </div>
      {reach && (
        <div className="small muted" data-testid="rule-reach">
          {reach}
          {JSON.stringify(rule) !== JSON.stringify(proposed) && " (said of the rule as proposed, before your edits)"}
        </div>
      )}
      {field("tool_pattern", "Tool", false)}
      {field("path_pattern", "Path pattern", true)}
      {field("command_pattern", "Command pattern", true)}
      {/* The web tools' rules are about a host (docs/web.md, "Approval"). */}
      {(proposed?.domain_pattern != null || rule.domain_pattern != null) && (
        <>
          {field("domain_pattern", "Host", true, hostHint)}
          <div className="small muted" id={hostHint}>
            A host (<code>docs.rs</code>), any host below a domain (<code>*.python.org</code>), either with a port (<code>localhost:3000</code>). A host named
            without <code>*</code> may be reached at a local address too.
          </div>
        </>
      )}
      {field("working_dir", "Working folder", true)}
      {rule.tool_pattern === "execute_cmd" && (
        <label className="row small" data-testid="rule-network">
          <input type="checkbox" checked={rule.network} onChange={(e) => setRule({ ...rule, network: e.target.checked })} />
          The commands it allows may use the network (in the sandbox)
        </label>
      )}
      {field("note", "Note", false)}
      <div className="row">
        <button type="submit" className="btn btn-primary" disabled={busy || rule.tool_pattern.trim() === ""}>
          Save rule and approve
        </button>
        <button type="button" className="btn" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

// ---- questions ---------------------------------------------------------------------

/**
 * A question: the agent's (`ask_user_clarification`, answered with a suggested answer or in
 * words), or Skald's own, asked outside any tool call (the daily budget's "Run it" or
 * "Stop", docs/models.md "Cost and limits"): its title shown, answered only with one of its
 * suggested answers, which are all it understands.
 */
export function QuestionCard({ entry, showContext }: { entry: EntryOf<"question">; showContext: boolean }) {
  const { busy, error, send } = useAnswer(entry);
  const { question, suggested_answers: suggested } = entry.payload;
  const fromSkald = entry.tool_call_id == null && suggested.length > 0;
  const title = entry.payload.title || entry.title;
  const [text, setText] = useState("");
  const submit = () => {
    if (text.trim() !== "") void send({ decision: "text", text });
  };
  return (
    <div
      className={fromSkald ? "card inbox-card question-card skald-question" : "card inbox-card question-card"}
      data-testid="question-card"
      data-inbox-id={entry.id}
      data-from={fromSkald ? "skald" : "agent"}
      role="group"
      aria-label={fromSkald ? `${title}: a question from Skald` : "Question from the agent"}
    >
      <CardContext entry={entry} show={showContext} />
      <div className="card-title">
        <span className="chip chip-waiting">Question</span>
        {fromSkald && title && <span className="card-label">{title}</span>}
      </div>
      <div className="question">{question}</div>
      {suggested.length > 0 && (
        <div className="row wrap">
          {suggested.map((s) => (
            <button key={s} type="button" className="btn" data-testid="suggested-answer" disabled={busy} onClick={() => void send({ decision: "text", text: s })}>
              {s}
            </button>
          ))}
        </div>
      )}
      {!fromSkald && (
        <form
          className="row"
          onSubmit={(e) => {
            e.preventDefault();
            submit();
          }}
        >
          <input data-testid="answer-input" className="grow" aria-label="Your answer" placeholder="Type an answer…" value={text} onChange={(e) => setText(e.target.value)} />
          <button type="submit" className="btn btn-primary" data-testid="answer-submit" disabled={busy || text.trim() === ""}>
            Answer
          </button>
        </form>
      )}
      {error && <div className="error-text" role="alert">{error}</div>}
    </div>
  );
}

// ---- elicitation -------------------------------------------------------------------

export function ElicitationCard({ entry, showContext }: { entry: EntryOf<"elicitation">; showContext: boolean }) {
  const { busy, error, send } = useAnswer(entry);
  const { message, schema } = entry.payload;
  const fields = useMemo(() => fieldsFromSchema(schema), [schema]);
  const [values, setValues] = useState<FormValues>(() => initialValues(fields));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const submit = () => {
    const r = formToJson(fields, values);
    setErrors(r.errors);
    if (r.ok) void send({ decision: "text", text: JSON.stringify(r.value) });
  };
  return (
    <div className="card inbox-card elicitation-card" data-testid="question-card" data-inbox-id={entry.id} role="group" aria-label="A tool asks for input">
      <CardContext entry={entry} show={showContext} />
      <div className="card-title">
        <span className="chip chip-waiting">Input requested</span>
        <span className="muted small">{entry.title}</span>
      </div>
      <div className="question">{message}</div>
      <form
        className="elicitation-form"
        onSubmit={(e) => {
          e.preventDefault();
          submit();
        }}
      >
        {fields.map((f) => (
          <label key={f.name} className={f.kind === "boolean" ? "field field-check" : "field"}>
            <span>
              {f.title}
              {f.required && <span aria-hidden="true"> *</span>}
            </span>
            {f.kind === "boolean" ? (
              <input type="checkbox" checked={values[f.name] === true} onChange={(e) => setValues({ ...values, [f.name]: e.target.checked })} />
            ) : f.kind === "enum" ? (
              <select value={String(values[f.name] ?? "")} onChange={(e) => setValues({ ...values, [f.name]: e.target.value })}>
                {!f.required && <option value="">—</option>}
                {f.options.map((o, i) => (
                  <option key={o} value={o}>
                    {f.optionLabels[i]}
                  </option>
                ))}
              </select>
            ) : (
              <input
                type={f.kind === "string" ? (f.format === "email" ? "email" : "text") : "number"}
                step={f.kind === "integer" ? 1 : "any"}
                required={f.required}
                value={String(values[f.name] ?? "")}
                onChange={(e) => setValues({ ...values, [f.name]: e.target.value })}
              />
            )}
            {f.description && <span className="muted small">{f.description}</span>}
            {errors[f.name] && <span className="error-text small">{errors[f.name]}</span>}
          </label>
        ))}
        <div className="row">
          <button type="submit" className="btn btn-primary" data-testid="answer-submit" disabled={busy}>
            Submit
          </button>
          <button type="button" className="btn" data-testid="reject" disabled={busy} onClick={() => void send({ decision: "reject", note: "" })}>
            Decline
          </button>
        </div>
      </form>
      {error && <div className="error-text" role="alert">{error}</div>}
    </div>
  );
}
