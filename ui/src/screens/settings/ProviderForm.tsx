// Settings → Models: the provider form (OpenAI or compatible, Anthropic, Ollama).

import { useState } from "react";
import { useTransport } from "../../app/context";
import { errorText } from "../../lib/format";

type Provider = { kind: string; label: string; url: string; key: boolean; example: string };
const OPENAI: Provider = { kind: "openai", label: "OpenAI or an OpenAI-compatible server", url: "https://api.openai.com/v1", key: true, example: "gpt-4.1" };
const PROVIDERS: Provider[] = [
  OPENAI,
  { kind: "anthropic", label: "Anthropic", url: "https://api.anthropic.com", key: true, example: "claude-sonnet-4-5" },
  { kind: "ollama", label: "Ollama (local)", url: "http://127.0.0.1:11434", key: false, example: "llama3.2" },
];

/** Picks the provider and model: written to config.toml, the key kept as a secret. */
export function ProviderForm({ open, onSaved }: { open: boolean; onSaved: () => void }) {
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
