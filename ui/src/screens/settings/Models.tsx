// Settings → Models: the models in use (main, then fallbacks), a connection test, the
// provider form, local models, and where the configuration and data are. What the calls
// cost is in Cost and limits (Limits.tsx).

import { useState } from "react";
import { useTransport, type Loadable } from "../../app/context";
import { errorText } from "../../lib/format";
import { EmptyState } from "../../components/ui";
import { Load, Section, type SettingsReply } from "./Section";
import { ProviderForm } from "./ProviderForm";
import { LocalModels } from "./LocalModels";

export function Models({ data, reload }: { data: Loadable<SettingsReply>; reload: () => void }) {
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
