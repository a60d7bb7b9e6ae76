// Settings: models (and a connection test), MCP servers, approval rules, secrets,
// plugins, the TeX bundle LaTeX previews use, and appearance.

import { useEffect, useRef, useState, type ReactNode } from "react";
import type { JsonValue, McpServerInfo, PluginInfo, RecommendedModel, RuleInfo } from "../protocol";
import type { ReplyOf, Transport } from "../transport";
import { useCommand, useEvents, useTransport } from "../app/context";
import { errorText, pretty } from "../lib/format";
import { mcpStatusText } from "../lib/mcp";
import { formatBytes, progressText } from "../lib/bytes";
import type { ThemeChoice } from "../lib/theme";
import { EmptyState, ErrorState, Icon, Spinner } from "../components/ui";
import type { Loadable } from "../app/context";

function Section({ title, children, id }: { title: string; children: ReactNode; id: string }) {
  return (
    <section className="settings-section" aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {children}
    </section>
  );
}

function Load<T>({ data, retry, children }: { data: Loadable<T>; retry: () => void; children: (v: T) => ReactNode }) {
  if (data.state === "loading") return <Spinner />;
  if (data.state === "error") return <ErrorState message={data.error} onRetry={retry} />;
  return <>{children(data.value)}</>;
}

type SettingsReply = ReplyOf<{ cmd: "settings" }>;

export function SettingsView({ theme, onTheme }: { theme: ThemeChoice; onTheme: (t: ThemeChoice) => void }) {
  // One `settings` read for the sections that show it (Models, LaTeX).
  const [settings, reloadSettings] = useCommand({ cmd: "settings" }, []);
  return (
    <section className="screen" aria-labelledby="settings-h">
      <header className="screen-header">
        <h1 id="settings-h">Settings</h1>
      </header>
      <div className="screen-body settings">
        <Models data={settings} reload={reloadSettings} />
        <Mcp />
        <Rules />
        <Secrets />
        <Plugins />
        <Latex data={settings} reload={reloadSettings} />
        <Section title="Appearance" id="s-appearance">
          <label className="field inline">
            <span>Theme</span>
            <select data-testid="theme-select" value={theme} onChange={(e) => onTheme(e.target.value as ThemeChoice)}>
              <option value="system">Follow the system</option>
              <option value="light">Light</option>
              <option value="dark">Dark</option>
            </select>
          </label>
        </Section>
      </div>
    </section>
  );
}

function Models({ data, reload }: { data: Loadable<SettingsReply>; reload: () => void }) {
  const t = useTransport();
  const [testing, setTesting] = useState(false);
  const [result, setResult] = useState<{ ok: boolean; text: string } | null>(null);
  const test = async () => {
    setTesting(true);
    setResult(null);
    try {
      const r = await t.call({ cmd: "test_model" });
      setResult({ ok: r.ok, text: r.ok ? `Connected in ${r.millis} ms. ${r.message}` : r.message });
    } catch (e) {
      setResult({ ok: false, text: errorText(e) });
    } finally {
      setTesting(false);
    }
  };
  return (
    <Section title="Models" id="s-models">
      <Load data={data} retry={reload}>
        {(s) => (
          <>
            {s.model_error && (
              <div className="state-error small" role="alert">
                {s.model_error}
              </div>
            )}
            {s.models.length === 0 ? (
              <EmptyState title="Welcome to Skald">
                Choose the model agents will use: a provider's API (OpenAI or any compatible server, Anthropic), a local Ollama, or a local model Skald
                runs itself (no key needed; see Local model below). Keys stay on this machine.
              </EmptyState>
            ) : (
              <ol className="models">
                {s.models.map((m, i) => (
                  <li key={m}>
                    <code>{m}</code> {i === 0 ? <span className="chip">main</span> : <span className="muted small">fallback</span>}
                  </li>
                ))}
              </ol>
            )}
            <div className="row">
              <button type="button" className="btn" data-testid="test-model" disabled={testing} onClick={() => void test()}>
                {testing ? "Testing…" : "Test connection"}
              </button>
              {result && (
                <span className={result.ok ? "ok-text small" : "error-text small"} data-testid="test-model-result" role="status">
                  {result.text}
                </span>
              )}
            </div>
            <ProviderForm open={s.models.length === 0} onSaved={reload} />
            <LocalModels current={s.models[0]} onSaved={reload} />
            <dl className="facts small">
              <dt>Configuration</dt>
              <dd>
                <code>{s.config_path}</code>
              </dd>
              <dt>Approval mode</dt>
              <dd>{s.approval}</dd>
              <dt>Data folder</dt>
              <dd>
                <code>{s.data_dir}</code>
              </dd>
              <dt>Version</dt>
              <dd>{s.version}</dd>
            </dl>
          </>
        )}
      </Load>
    </Section>
  );
}

type Provider = { kind: string; label: string; url: string; key: boolean; example: string };
const OPENAI: Provider = { kind: "openai", label: "OpenAI or an OpenAI-compatible server", url: "https://api.openai.com/v1", key: true, example: "gpt-4.1" };
const PROVIDERS: Provider[] = [
  OPENAI,
  { kind: "anthropic", label: "Anthropic", url: "https://api.anthropic.com", key: true, example: "claude-sonnet-4-5" },
  { kind: "ollama", label: "Ollama (local)", url: "http://127.0.0.1:11434", key: false, example: "llama3.2" },
];

/** Picks the provider and model: written to config.toml, the key kept as a secret. */
function ProviderForm({ open, onSaved }: { open: boolean; onSaved: () => void }) {
  const t = useTransport();
  const [shown, setShown] = useState(open);
  const [kind, setKind] = useState("openai");
  const [model, setModel] = useState("");
  const [url, setUrl] = useState("");
  const [key, setKey] = useState("");
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<{ ok: boolean; text: string } | null>(null);
  const p = PROVIDERS.find((x) => x.kind === kind) ?? OPENAI;
  if (!shown) {
    return (
      <button type="button" className="btn" data-testid="provider-change" onClick={() => setShown(true)}>
        Change provider…
      </button>
    );
  }
  const save = async () => {
    setBusy(true);
    setResult(null);
    try {
      const r = await t.call({
        cmd: "configure_model",
        kind,
        model: model.trim(),
        ...(url.trim() ? { base_url: url.trim() } : {}),
        ...(p.key && key ? { api_key: key } : {}),
      });
      setKey("");
      setResult({ ok: true, text: `Now using ${r.models[0]}.` });
      onSaved();
    } catch (e) {
      setResult({ ok: false, text: errorText(e) });
    } finally {
      setBusy(false);
    }
  };
  return (
    <form
      className="provider-form"
      aria-label="Model provider"
      onSubmit={(e) => {
        e.preventDefault();
        void save();
      }}
    >
      <label className="field">
        <span>Provider</span>
        <select data-testid="provider-kind" value={kind} onChange={(e) => setKind(e.target.value)}>
          {PROVIDERS.map((x) => (
            <option key={x.kind} value={x.kind}>
              {x.label}
            </option>
          ))}
        </select>
      </label>
      <label className="field">
        <span>Model</span>
        <input data-testid="provider-model" required value={model} placeholder={p.example} onChange={(e) => setModel(e.target.value)} />
      </label>
      <label className="field">
        <span>Address</span>
        <input data-testid="provider-url" value={url} placeholder={p.url} onChange={(e) => setUrl(e.target.value)} />
      </label>
      {p.key && (
        <label className="field">
          <span>API key</span>
          <input
            data-testid="provider-key"
            type="password"
            autoComplete="off"
            value={key}
            placeholder="stored as a secret, never in config.toml; empty keeps the current one"
            onChange={(e) => setKey(e.target.value)}
          />
        </label>
      )}
      <div className="row">
        <button type="submit" className="btn btn-primary" data-testid="provider-save" disabled={busy || !model.trim()}>
          {busy ? "Saving…" : "Use this model"}
        </button>
        {result && (
          <span className={result.ok ? "ok-text small" : "error-text small"} data-testid="provider-result" role="status">
            {result.text}
          </span>
        )}
      </div>
    </form>
  );
}

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
function LocalModels({ current, onSaved }: { current: string | undefined; onSaved: () => void }) {
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

function Mcp() {
  const t = useTransport();
  const [data, reload] = useCommand({ cmd: "list_mcp" }, []);
  const [error, setError] = useState<string | null>(null);
  useEvents((_s, e) => {
    if (e.type === "mcp_status") reload();
  });
  const [signingIn, setSigningIn] = useState<string | null>(null);
  const toggle = async (s: McpServerInfo, enabled: boolean) => {
    setError(null);
    try {
      await t.call({ cmd: "set_mcp_enabled", name: s.name, enabled });
      reload();
    } catch (e) {
      setError(errorText(e));
    }
  };
  // The engine opens the system browser and answers when the browser is back.
  const signIn = async (s: McpServerInfo) => {
    setError(null);
    setSigningIn(s.name);
    try {
      await t.call({ cmd: "mcp_login", name: s.name });
      reload();
    } catch (e) {
      setError(errorText(e));
    } finally {
      setSigningIn(null);
    }
  };
  return (
    <Section title="MCP servers" id="s-mcp">
      <Load data={data} retry={reload}>
        {(r) =>
          r.servers.length === 0 ? (
            <EmptyState title="No MCP servers">Add one with <code>skald mcp add</code>, or ask an agent to register one, to give agents more tools.</EmptyState>
          ) : (
            <ul className="rows">
              {r.servers.map((s) => (
                <li key={s.name} className="row-card">
                  <div className="row-main">
                    <label className="switch" title={s.enabled ? "Enabled" : "Disabled"}>
                      <input type="checkbox" role="switch" aria-label={`${s.name} enabled`} checked={s.enabled} onChange={(e) => void toggle(s, e.target.checked)} />
                      <span />
                    </label>
                    <strong>{s.name}</strong>
                    <span className="muted small">{s.transport}</span>
                    {s.sandbox && (
                      <span className="chip" data-testid="mcp-sandboxed" title="Runs in the command sandbox: it writes only a temporary folder of its own and sees no secrets">
                        sandboxed{s.sandbox_network ? " · network" : ""}
                      </span>
                    )}
                    <span className={`chip chip-${s.status.state}`}>{mcpStatusText(s.status)}</span>
                    {s.status.state === "needs_login" && (
                      <button
                        type="button"
                        className="btn small-btn grow-right"
                        data-testid="mcp-sign-in"
                        disabled={signingIn !== null}
                        onClick={() => void signIn(s)}
                        title="Sign in with this server's account in your browser (OAuth)"
                      >
                        {signingIn === s.name ? "Waiting for the browser…" : "Sign in"}
                      </button>
                    )}
                  </div>
                  {s.description && <div className="small muted">{s.description}</div>}
                  {s.log_tail.length > 0 && (
                    <details>
                      <summary className="small">Log</summary>
                      <pre className="result">{s.log_tail.join("\n")}</pre>
                    </details>
                  )}
                </li>
              ))}
            </ul>
          )
        }
      </Load>
      {error && <div className="error-text small">{error}</div>}
    </Section>
  );
}

function ruleSummary(rule: RuleInfo): string {
  const parts = [rule.tool_pattern || "*"];
  if (rule.path_pattern) parts.push(`path ${rule.path_pattern}`);
  if (rule.command_pattern) parts.push(`command ${rule.command_pattern}`);
  if (rule.working_dir) parts.push(`in ${rule.working_dir}`);
  if (rule.network) parts.push("with the network");
  return parts.join(" · ");
}

function Rules() {
  const t = useTransport();
  const [data, reload] = useCommand({ cmd: "list_rules" }, []);
  const [error, setError] = useState<string | null>(null);
  const remove = async (id: number) => {
    setError(null);
    try {
      await t.call({ cmd: "remove_rule", id });
      reload();
    } catch (e) {
      setError(errorText(e));
    }
  };
  return (
    <Section title="Approval rules" id="s-rules">
      <Load data={data} retry={reload}>
        {(r) =>
          r.rules.length === 0 ? (
            <EmptyState title="No rules">Choose “Always…” on an approval to add one.</EmptyState>
          ) : (
            <ul className="rows">
              {r.rules.map((rule) => (
                <li key={rule.id} className="row-card">
                  <div className="row-main">
                    <span className={`chip chip-${rule.action}`}>{rule.action}</span>
                    <code className="small">{ruleSummary(rule)}</code>
                    {rule.group_name && <span className="muted small">{rule.group_name}</span>}
                    <span className="muted small grow-right">{rule.note}</span>
                    <button type="button" className="icon-btn" aria-label="Remove rule" title="Remove rule" onClick={() => void remove(rule.id)}>
                      <Icon name="trash" size={14} />
                    </button>
                  </div>
                </li>
              ))}
            </ul>
          )
        }
      </Load>
      {error && <div className="error-text small">{error}</div>}
    </Section>
  );
}

function Secrets() {
  const t = useTransport();
  const [data, reload] = useCommand({ cmd: "list_secrets" }, []);
  const [name, setName] = useState("");
  const [value, setValue] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const run = async (f: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await f();
      reload();
      return true;
    } catch (e) {
      setError(errorText(e));
      return false;
    } finally {
      setBusy(false);
    }
  };
  return (
    <Section title="Secrets" id="s-secrets">
      <Load data={data} retry={reload}>
        {(r) => (
          <>
            <div className="small muted">Stored in {r.store}. Values are never shown again.</div>
            {r.names.length === 0 ? (
              <div className="muted small">No secrets yet.</div>
            ) : (
              <ul className="rows">
                {r.names.map((n) => (
                  <li key={n} className="row-card">
                    <div className="row-main">
                      <code>{n}</code>
                      <button type="button" className="icon-btn grow-right-btn" aria-label={`Remove secret ${n}`} disabled={busy} onClick={() => void run(() => t.call({ cmd: "remove_secret", name: n }))}>
                        <Icon name="trash" size={14} />
                      </button>
                    </div>
                  </li>
                ))}
              </ul>
            )}
          </>
        )}
      </Load>
      <form
        className="row wrap"
        onSubmit={(e) => {
          e.preventDefault();
          if (!name.trim() || !value) return;
          void run(() => t.call({ cmd: "set_secret", name: name.trim(), value })).then((ok) => {
            if (ok) {
              setName("");
              setValue("");
            }
          });
        }}
      >
        <input aria-label="Secret name" placeholder="NAME" value={name} onChange={(e) => setName(e.target.value)} autoComplete="off" spellCheck={false} />
        <input aria-label="Secret value" type="password" placeholder="value" value={value} onChange={(e) => setValue(e.target.value)} autoComplete="new-password" />
        <button type="submit" className="btn" disabled={busy || !name.trim() || !value}>
          Save secret
        </button>
      </form>
      {error && <div className="error-text small">{error}</div>}
    </Section>
  );
}

function Plugins() {
  const [data, reload] = useCommand({ cmd: "list_plugins" }, []);
  return (
    <Section title="Plugins" id="s-plugins">
      <Load data={data} retry={reload}>
        {(r) =>
          r.plugins.length === 0 ? (
            <EmptyState title="No plugins installed" />
          ) : (
            <ul className="rows">
              {r.plugins.map((p) => (
                <PluginRow key={p.id} plugin={p} onChanged={reload} />
              ))}
            </ul>
          )
        }
      </Load>
    </Section>
  );
}

/** A plugin: on/off, and its configuration as JSON (the engine checks it against the plugin's schema). */
function PluginRow({ plugin, onChanged }: { plugin: PluginInfo; onChanged: () => void }) {
  const t = useTransport();
  const { id, enabled } = plugin;
  const name = plugin.name || id;
  const [editing, setEditing] = useState(false);
  const [text, setText] = useState(() => pretty(plugin.config ?? {}));
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const configure = async (change: { enabled?: boolean; config?: JsonValue }) => {
    setBusy(true);
    setMessage(null);
    try {
      const r = await t.call({ cmd: "configure_plugin", id, ...change });
      setMessage({ ok: true, text: r.message });
      setEditing(false);
      onChanged();
    } catch (e) {
      setMessage({ ok: false, text: errorText(e) });
    } finally {
      setBusy(false);
    }
  };
  const saveConfig = () => {
    let config: JsonValue;
    try {
      config = JSON.parse(text) as JsonValue;
    } catch (e) {
      setMessage({ ok: false, text: `Not JSON: ${errorText(e)}` });
      return;
    }
    void configure({ config });
  };
  return (
    <li className="row-card">
      <div className="row-main">
        <label className="switch" title={enabled ? "On" : "Off"}>
          <input type="checkbox" role="switch" aria-label={`${name} on`} checked={enabled} disabled={busy} onChange={(e) => void configure({ enabled: e.target.checked })} />
          <span />
        </label>
        <strong>{name}</strong>
        {plugin.running && <span className="chip chip-done">running</span>}
        <button type="button" className="btn small-btn grow-right" onClick={() => setEditing((v) => !v)}>
          {editing ? "Close" : "Configure…"}
        </button>
      </div>
      {plugin.description && <div className="small muted">{plugin.description}</div>}
      {editing && (
        <div className="plugin-config">
          <textarea aria-label={`${id} configuration (JSON)`} rows={6} className="json" value={text} onChange={(e) => setText(e.target.value)} spellCheck={false} />
          <div className="row">
            <button type="button" className="btn btn-primary" disabled={busy} onClick={saveConfig}>
              Save configuration
            </button>
          </div>
        </div>
      )}
      {message && (
        <div className={message.ok ? "ok-text small" : "error-text small"} role="status">
          {message.text}
        </div>
      )}
    </li>
  );
}

type BuiltBundle = ReplyOf<{ cmd: "build_tex_bundle" }>;

/**
 * The offline TeX bundle being built, by transport. Like a model download it outlives the
 * Settings screen, so coming back follows it again instead of asking for a second build
 * the engine would refuse.
 */
const texBuilds = new WeakMap<Transport, Promise<BuiltBundle>>();

function buildTexBundle(t: Transport): Promise<BuiltBundle> {
  const already = texBuilds.get(t);
  if (already) return already;
  const p = t.call({ cmd: "build_tex_bundle" });
  texBuilds.set(t, p);
  const forget = () => {
    if (texBuilds.get(t) === p) texBuilds.delete(t);
  };
  p.then(forget, forget);
  return p;
}

/** Which TeX bundle LaTeX previews use, and building the offline one from the installed TeX Live. */
function Latex({ data, reload }: { data: Loadable<SettingsReply>; reload: () => void }) {
  const t = useTransport();
  /** The build this screen follows, with its last progress (files); null when none. */
  const [progress, setProgress] = useState<{ done: number; total: number } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [result, setResult] = useState<string | null>(null);
  const mounted = useRef(false);
  const followed = useRef<Promise<BuiltBundle> | null>(null);
  const reloadRef = useRef(reload);
  reloadRef.current = reload;

  useEvents((_sid, e) => {
    if (e.type !== "tex_bundle" || !followed.current) return;
    setProgress({ done: e.done, total: e.total });
  });

  const follow = (p: Promise<BuiltBundle>) => {
    if (followed.current === p) return;
    followed.current = p;
    setProgress((x) => x ?? { done: 0, total: 0 });
    setError(null);
    setResult(null);
    p.then(
      (r) => {
        if (mounted.current) setResult(`Built the offline bundle: ${r.files} files, ${formatBytes(r.bytes)}, at ${r.path}.`);
      },
      (e: unknown) => {
        if (mounted.current) setError(errorText(e));
      },
    ).finally(() => {
      if (followed.current === p) followed.current = null;
      if (!mounted.current) return;
      setProgress(null);
      // `tex` now says which bundle applies (offline, when the build worked).
      reloadRef.current();
    });
  };

  // A build started before this screen was (re)opened.
  useEffect(() => {
    mounted.current = true;
    const p = texBuilds.get(t);
    if (p) follow(p);
    return () => {
      mounted.current = false;
    };
    // Once per transport: `follow` only uses refs and state setters.
  }, [t]);

  return (
    <Section title="LaTeX" id="s-latex">
      <Load data={data} retry={reload}>
        {({ tex }) => (
          <>
            <div className="row wrap">
              <span className="small">
                <span className="muted">Previews use: </span>
                <span data-testid="tex-status">{tex.bundle}</span>
              </span>
              {tex.offline && (
                <span className="chip chip-done" data-testid="tex-offline">
                  Works offline
                </span>
              )}
            </div>
            {!tex.offline && tex.system_tex != null && (
              <>
                <div className="row wrap">
                  <button type="button" className="btn" data-testid="tex-build" disabled={progress != null} onClick={() => follow(buildTexBundle(t))}>
                    {progress ? "Building…" : "Build offline bundle"}
                  </button>
                  <span className="small muted">
                    From the TeX Live in <code>{tex.system_tex}</code>; about a minute.
                  </span>
                </div>
                {progress && (
                  <div className="pull-progress tex-progress" data-testid="tex-progress">
                    <progress aria-label="Building the offline TeX bundle" value={Math.min(progress.done, progress.total)} max={progress.total || 1} />
                    <span className="small muted">{progress.total > 0 ? `Bundling TeX files: ${progress.done}/${progress.total}` : "Bundling TeX files…"}</span>
                  </div>
                )}
              </>
            )}
            {!tex.offline && tex.system_tex == null && (
              <p className="small muted" data-testid="tex-hint">
                To work offline, install TeX Live (<code>apt install texlive-latex-base texlive-xetex lmodern</code>), then build a bundle here or run{" "}
                <code>skald latex bundle --from-system</code>.
              </p>
            )}
          </>
        )}
      </Load>
      {error && (
        <div className="state-error small" role="alert" data-testid="tex-error">
          {error}
        </div>
      )}
      {result && (
        <div className="ok-text small" role="status" data-testid="tex-result">
          {result}
        </div>
      )}
    </Section>
  );
}
