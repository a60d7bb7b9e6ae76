// Settings → Models → Local model: the GGUF models Skald runs itself, installed and
// recommended, with downloads that outlive the screen.

import { useEffect, useRef, useState } from "react";
import type { RecommendedModel } from "../../protocol";
import type { Transport } from "../../transport";
import { useCommand, useEvents, useTransport } from "../../app/context";
import { errorText } from "../../lib/format";
import { formatBytes, progressText } from "../../lib/bytes";
import { ErrorState, Icon, Spinner } from "../../components/ui";

/** What a download ends in: the model in use, or downloaded but not made the default. */
type PullOutcome = { models: string[] } | { useError: string };

/**
 * Downloads in flight, by transport and model name. They outlive the Settings screen
 * (leaving it does not stop a download), so coming back follows them again instead of
 * asking for a second download the engine would refuse.
 */
const inflight = new WeakMap<Transport, Map<string, Promise<PullOutcome>>>();

function inflightOf(t: Transport): Map<string, Promise<PullOutcome>> {
  const m = inflight.get(t) ?? new Map<string, Promise<PullOutcome>>();
  inflight.set(t, m);
  return m;
}

/** Downloads `name` (resuming a broken download) and makes it the default model. Rejects only when the download fails. */
function pullAndUse(t: Transport, name: string): Promise<PullOutcome> {
  const running = inflightOf(t);
  const already = running.get(name);
  if (already) return already;
  const p = (async (): Promise<PullOutcome> => {
    await t.call({ cmd: "pull_model", name });
    try {
      const r = await t.call({ cmd: "configure_model", kind: "local", model: name });
      return { models: r.models };
    } catch (e) {
      return { useError: `Downloaded ${name}, but could not make it the default: ${errorText(e)}` };
    }
  })();
  running.set(name, p);
  const forget = () => {
    if (running.get(name) === p) running.delete(name);
  };
  p.then(forget, forget);
  return p;
}

function without<T>(r: Record<string, T>, key: string): Record<string, T> {
  if (!(key in r)) return r;
  const copy = { ...r };
  delete copy[key];
  return copy;
}

/** GGUF models run in-process by llama.cpp: the installed ones, and the recommended ones to download. */
export function LocalModels({ current, onSaved }: { current: string | undefined; onSaved: () => void }) {
  const t = useTransport();
  const [data, reload] = useCommand({ cmd: "local_models" }, []);
  /**
   * Downloads this screen follows, with their last progress: bytes while downloading, then
   * tokens while the model reads a new chat's prompt once (`preparing`).
   */
  const [pulls, setPulls] = useState<Record<string, { done: number; total: number; preparing?: boolean }>>({});
  const [failed, setFailed] = useState<Record<string, string>>({});
  const [using, setUsing] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [result, setResult] = useState<string | null>(null);
  const mounted = useRef(false);
  const followed = useRef(new Set<string>());
  const onSavedRef = useRef(onSaved);
  onSavedRef.current = onSaved;

  useEvents((_sid, e) => {
    if (e.type === "model_pull" && followed.current.has(e.name)) {
      setPulls((p) => ({ ...p, [e.name]: { done: e.done, total: e.total } }));
    } else if (e.type === "model_prepare" && followed.current.has(e.name)) {
      setPulls((p) => ({ ...p, [e.name]: { done: e.read, total: e.total, preparing: true } }));
    }
  });

  const follow = (name: string, total: number, p: Promise<PullOutcome>) => {
    if (followed.current.has(name)) return;
    followed.current.add(name);
    setPulls((x) => ({ ...x, [name]: x[name] ?? { done: 0, total } }));
    setFailed((f) => without(f, name));
    p.then(
      (r) => {
        if (!mounted.current) return;
        if ("models" in r) {
          setResult(`Downloaded ${name}. Now using ${r.models[0] ?? `local/${name}`}; its first answer takes a few seconds while it loads.`);
          onSavedRef.current();
        } else {
          setError(r.useError);
        }
      },
      (e: unknown) => {
        if (mounted.current) setFailed((f) => ({ ...f, [name]: errorText(e) }));
      },
    ).finally(() => {
      followed.current.delete(name);
      if (!mounted.current) return;
      setPulls((x) => without(x, name));
      reload();
    });
  };

  // Downloads started before this screen was (re)opened.
  useEffect(() => {
    mounted.current = true;
    for (const [name, p] of inflightOf(t)) follow(name, 0, p);
    return () => {
      mounted.current = false;
    };
    // Once per transport: `follow` only uses refs, state setters and the stable `reload`.
  }, [t]);

  const download = (m: RecommendedModel) => {
    setError(null);
    setResult(null);
    follow(m.name, m.bytes, pullAndUse(t, m.name));
  };

  const use = async (name: string) => {
    setUsing(name);
    setError(null);
    setResult(null);
    try {
      const r = await t.call({ cmd: "configure_model", kind: "local", model: name });
      setResult(`Now using ${r.models[0] ?? `local/${name}`}; its first answer takes a few seconds while it loads.`);
      onSaved();
    } catch (e) {
      setError(errorText(e));
    } finally {
      setUsing(null);
    }
  };

  return (
    <section className="local-models" data-testid="local-models" aria-labelledby="s-local-models">
      <div className="row">
        <h3 id="s-local-models">Local model</h3>
        {data.state === "ready" && data.value.available && (
          <button type="button" className="icon-btn grow-right-btn" aria-label="Refresh local models" title="Refresh local models" onClick={reload}>
            <Icon name="refresh" size={14} />
          </button>
        )}
      </div>
      {data.state === "loading" ? (
        <Spinner label="Looking for local models…" />
      ) : data.state === "error" ? (
        <ErrorState message={data.error} onRetry={reload} testId="local-models-error" />
      ) : !data.value.available ? (
        <p className="small muted">This build of Skald cannot run local models. Choose a provider above; Ollama also runs models on this computer.</p>
      ) : (
        <>
          <p className="small muted">Runs inside Skald on this computer: no key, no network, your files stay here. Small models are quick but far less capable than a provider's.</p>
          {data.value.installed.length === 0 ? (
            <div className="small muted">No local model yet.</div>
          ) : (
            <ul className="rows">
              {data.value.installed.map((m) => {
                const main = current === `local/${m.name}`;
                return (
                  <li key={m.name} className="row-card" data-testid="local-model" data-name={m.name}>
                    <div className="row-main">
                      <code>{m.name}</code>
                      <span className="muted small">{formatBytes(m.bytes)}</span>
                      {main && <span className="chip">main</span>}
                      <button
                        type="button"
                        className="btn small-btn grow-right"
                        data-testid="use-local-model"
                        aria-label={main ? `${m.name} is the main model` : `Use ${m.name} as the main model`}
                        disabled={main || using !== null}
                        onClick={() => void use(m.name)}
                      >
                        {using === m.name ? "Switching…" : "Use"}
                      </button>
                    </div>
                  </li>
                );
              })}
            </ul>
          )}
          {data.value.recommended.length > 0 && (
            <ul className="rows">
              {data.value.recommended.map((m) => {
                const pull = pulls[m.name];
                const failure = failed[m.name];
                const checking = pull != null && !pull.preparing && pull.total > 0 && pull.done >= pull.total;
                return (
                  <li key={m.name} className="row-card" data-testid="recommended-model" data-name={m.name}>
                    <div className="row-main">
                      <code>{m.name}</code>
                      <span className="muted small">{formatBytes(m.bytes)}</span>
                      <button
                        type="button"
                        className={failure ? "btn small-btn grow-right" : "btn btn-primary small-btn grow-right"}
                        data-testid="pull-model"
                        aria-label={failure ? `Retry downloading ${m.name}` : `Download ${m.name} (${formatBytes(m.bytes)}) and use it`}
                        title={failure ? "Goes on from where the download stopped" : undefined}
                        disabled={pull != null}
                        onClick={() => download(m)}
                      >
                        {pull ? (pull.preparing ? "Preparing…" : "Downloading…") : failure ? "Retry" : "Download"}
                      </button>
                    </div>
                    <div className="small muted">{m.description}</div>
                    {pull && (
                      <div className="pull-progress">
                        <progress data-testid="pull-progress" aria-label={`Downloading ${m.name}`} value={Math.min(pull.done, pull.total)} max={pull.total || 1} />
                        <span className="small muted">
                          {pull.preparing
                            ? `Preparing for chats: reading the agent's prompt… ${Math.floor((100 * pull.done) / Math.max(pull.total, 1))}%`
                            : checking
                              ? "Checking the download…"
                              : pull.total > 0
                                ? progressText(pull.done, pull.total)
                                : "Downloading…"}
                        </span>
                      </div>
                    )}
                    {failure && (
                      <div className="state-error small" role="alert" data-testid="local-models-error">
                        {failure}
                      </div>
                    )}
                  </li>
                );
              })}
            </ul>
          )}
          <div className="small muted">
            Models folder: <code>{data.value.folder}</code>. A <code>.gguf</code> file put there shows up here.
          </div>
        </>
      )}
      {error && (
        <div className="state-error small" role="alert" data-testid="local-models-error">
          {error}
        </div>
      )}
      {result && (
        <div className="ok-text small" role="status" data-testid="local-models-result">
          {result}
        </div>
      )}
    </section>
  );
}
