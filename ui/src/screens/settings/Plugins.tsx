// Settings → Plugins: each plugin on/off, and its configuration as JSON.

import { useState } from "react";
import type { JsonValue, PluginInfo } from "../../protocol";
import { useCommand, useTransport } from "../../app/context";
import { errorText, pretty } from "../../lib/format";
import { EmptyState } from "../../components/ui";
import { Load, Section } from "./Section";

export function Plugins() {
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
