// Settings → MCP servers: each server's status, on/off, sign-in (OAuth) and log.

import { useState } from "react";
import type { McpServerInfo } from "../../protocol";
import { useCommand, useEvents, useTransport } from "../../app/context";
import { errorText } from "../../lib/format";
import { mcpStatusText } from "../../lib/mcp";
import { EmptyState } from "../../components/ui";
import { Load, Section } from "./Section";

export function McpServers() {
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
