// Settings: models (and a connection test), MCP servers, approval rules, secrets,
// plugins and appearance.

import { useState, type ReactNode } from "react";
import type { JsonValue, McpServerInfo } from "../protocol";
import { useCommand, useEvents, useTransport } from "../app/context";
import { asObject, bool, errorText, num, pretty, statusText, str } from "../lib/json";
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

export function SettingsView({ theme, onTheme }: { theme: ThemeChoice; onTheme: (t: ThemeChoice) => void }) {
  return (
    <section className="screen" aria-labelledby="settings-h">
      <header className="screen-header">
        <h1 id="settings-h">Settings</h1>
      </header>
      <div className="screen-body settings">
        <Models />
        <Mcp />
        <Rules />
        <Secrets />
        <Plugins />
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

function Models() {
  const t = useTransport();
  const [data, reload] = useCommand({ cmd: "settings" }, []);
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
                Choose the model agents will use: a provider's API (OpenAI or any compatible server, Anthropic) or a local Ollama. The key stays on this machine.
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

function Mcp() {
  const t = useTransport();
  const [data, reload] = useCommand({ cmd: "list_mcp" }, []);
  const [error, setError] = useState<string | null>(null);
  useEvents((_s, e) => {
    if (e.type === "mcp_status") reload();
  });
  const toggle = async (s: McpServerInfo, enabled: boolean) => {
    setError(null);
    try {
      await t.call({ cmd: "set_mcp_enabled", name: s.name, enabled });
      reload();
    } catch (e) {
      setError(errorText(e));
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
                    <span className={`chip chip-${statusText(s.status).split(":")[0]}`}>{statusText(s.status)}</span>
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

function ruleSummary(o: ReturnType<typeof asObject>): string {
  const parts = [str(o, "tool_pattern", "tool") ?? "*"];
  const path = str(o, "path_pattern");
  const cmd = str(o, "command_pattern");
  const wd = str(o, "working_dir");
  if (path) parts.push(`path ${path}`);
  if (cmd) parts.push(`command ${cmd}`);
  if (wd) parts.push(`in ${wd}`);
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
              {r.rules.map((rule: JsonValue, i) => {
                const o = asObject(rule);
                const id = num(o, "id");
                return (
                  <li key={id ?? i} className="row-card">
                    <div className="row-main">
                      <span className={`chip chip-${str(o, "action") ?? "allow"}`}>{str(o, "action") ?? "allow"}</span>
                      <code className="small">{ruleSummary(o)}</code>
                      {str(o, "group") && <span className="muted small">{str(o, "group")}</span>}
                      <span className="muted small grow-right">{str(o, "note")}</span>
                      {id != null && (
                        <button type="button" className="icon-btn" aria-label="Remove rule" title="Remove rule" onClick={() => void remove(id)}>
                          <Icon name="trash" size={14} />
                        </button>
                      )}
                    </div>
                    {!o && <pre className="json">{pretty(rule)}</pre>}
                  </li>
                );
              })}
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
              {r.plugins.map((p, i) => (
                <PluginRow key={str(asObject(p), "id") ?? i} plugin={p} onChanged={reload} />
              ))}
            </ul>
          )
        }
      </Load>
    </Section>
  );
}

/** A plugin: on/off, and its configuration as JSON (the engine checks it against the plugin's schema). */
function PluginRow({ plugin, onChanged }: { plugin: JsonValue; onChanged: () => void }) {
  const t = useTransport();
  const o = asObject(plugin);
  const id = str(o, "id") ?? "";
  const enabled = bool(o, "enabled") ?? false;
  const [editing, setEditing] = useState(false);
  const [text, setText] = useState(() => pretty(o?.config ?? {}));
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
          <input type="checkbox" role="switch" aria-label={`${str(o, "name") ?? id} on`} checked={enabled} disabled={busy || !id} onChange={(e) => void configure({ enabled: e.target.checked })} />
          <span />
        </label>
        <strong>{str(o, "name", "id") ?? "plugin"}</strong>
        {bool(o, "running") && <span className="chip chip-done">running</span>}
        <button type="button" className="btn small-btn grow-right" onClick={() => setEditing((v) => !v)}>
          {editing ? "Close" : "Configure…"}
        </button>
      </div>
      {str(o, "description") && <div className="small muted">{str(o, "description")}</div>}
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
