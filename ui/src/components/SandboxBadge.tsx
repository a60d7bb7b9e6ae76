// The chat header's sandbox badge: how this chat's shell commands run, and a small menu
// to change it (the chat's own setting; it applies from the chat's next turn).

import { useEffect, useRef, useState } from "react";
import type { SandboxInfo, SandboxMode } from "../protocol";
import { useTransport } from "../app/context";
import { useMenuDismiss } from "../app/useMenuDismiss";
import { errorText } from "../lib/format";
import { SANDBOX_MODES, sandboxLabel } from "../lib/sandbox";
import { Icon } from "./ui";

export function SandboxBadge({ sessionId }: { sessionId: number }) {
  const t = useTransport();
  const [info, setInfo] = useState<SandboxInfo | null>(null);
  const [open, setOpen] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const buttonRef = useRef<HTMLButtonElement>(null);

  useEffect(() => {
    let live = true;
    setInfo(null);
    setOpen(false);
    setError(null);
    t.call({ cmd: "sandbox", session_id: sessionId })
      // A server without the command (or one that failed) shows no badge, as the usage chip.
      .then((r) => live && setInfo(r.sandbox ?? null))
      .catch(() => live && setInfo(null));
    return () => {
      live = false;
    };
  }, [t, sessionId]);

  // Escape gives the focus back to the badge.
  const { wrapProps } = useMenuDismiss(open, setOpen, () => {
    setOpen(false);
    buttonRef.current?.focus();
  });

  if (!info) return null;
  const { text, warn } = sandboxLabel(info);

  const choose = async (mode: SandboxMode, network: boolean) => {
    // The controls are not `disabled` while a change is on its way: a focused control that
    // becomes disabled loses the focus, and with it the menu.
    if (busy) return;
    setBusy(true);
    setError(null);
    try {
      const r = await t.call({ cmd: "set_sandbox", session_id: sessionId, mode, network });
      setInfo(r.sandbox);
    } catch (e) {
      setError(`Could not change the sandbox: ${errorText(e)}`);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className="menu-wrap" {...wrapProps}>
      <button
        ref={buttonRef}
        type="button"
        className={warn ? "sandbox-badge warn" : "sandbox-badge"}
        data-testid="sandbox-badge"
        data-mode={info.mode}
        data-available={info.available ? "1" : "0"}
        title={info.note}
        aria-haspopup="dialog"
        aria-expanded={open}
        onClick={() => setOpen((o) => !o)}
      >
        <Icon name={warn ? "warning" : "shield"} size={13} />
        {text}
      </button>
      {open && (
        <div className="menu menu-down sandbox-menu" data-testid="sandbox-menu" role="dialog" aria-label="Command sandbox" aria-busy={busy} tabIndex={-1}>
          <div className="sandbox-menu-head small muted">Shell commands in this chat</div>
          <div role="radiogroup" aria-label="Sandbox mode">
            {SANDBOX_MODES.map((m) => (
              <button
                key={m.mode}
                type="button"
                role="radio"
                aria-checked={info.mode === m.mode}
                className={info.mode === m.mode ? "sandbox-option selected" : "sandbox-option"}
                data-testid={`sandbox-mode-${m.mode}`}
                autoFocus={info.mode === m.mode}
                aria-disabled={busy}
                onClick={() => info.mode !== m.mode && void choose(m.mode, info.network)}
              >
                <span className="sandbox-check" aria-hidden="true">
                  {info.mode === m.mode && <Icon name="check" size={12} />}
                </span>
                <span>
                  <strong>{m.title}</strong>
                  <span className="muted small"> — {m.detail}</span>
                </span>
              </button>
            ))}
          </div>
          <label className="sandbox-network small" title={info.mode === "off" ? "With the sandbox off, commands run as you, network included." : undefined}>
            <input
              type="checkbox"
              data-testid="sandbox-network"
              checked={info.network}
              aria-disabled={busy}
              disabled={info.mode === "off"}
              onChange={(e) => void choose(info.mode, e.target.checked)}
            />
            Allow sandboxed commands to use the network
          </label>
          <div className={warn ? "sandbox-note warn small" : "sandbox-note small muted"} data-testid="sandbox-note">
            {info.note}
          </div>
          <div className="sandbox-note small muted">Applies from the next turn.</div>
          {error && (
            <div className="error-text small" role="alert">
              {error}
            </div>
          )}
        </div>
      )}
    </div>
  );
}
