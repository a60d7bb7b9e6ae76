// Settings → Secrets: their names (never their values), adding and removing one.

import { useState } from "react";
import { useCommand, useTransport } from "../../app/context";
import { errorText } from "../../lib/format";
import { Icon } from "../../components/ui";
import { Load, Section } from "./Section";

export function Secrets() {
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
