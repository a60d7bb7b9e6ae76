// Where a chat stands among its forks (docs/store.md "Forks"), in its header: a fork says
// which chat it was forked from, as a link to it; a chat that was forked lists its forks in
// a small menu. So both the original and its forks stay reachable from each other.

import { useEffect, useRef, useState } from "react";
import type { SessionInfo } from "../protocol";
import { useApp } from "../app/context";
import { formatTime } from "../lib/format";
import { Icon } from "./ui";

const titleOf = (s: SessionInfo) => s.title.trim() || "Untitled chat";

export function ForkInfo({ session }: { session: SessionInfo }) {
  const { sessions, openSession } = useApp();
  const from = session.forked_from;
  const origin = from != null ? sessions.find((s) => s.id === from) : undefined;
  const forks = sessions.filter((s) => s.forked_from === session.id).sort((a, b) => b.created_at - a.created_at);
  if (from == null && forks.length === 0) return null;
  return (
    <div className="fork-line">
      {from != null && (
        <span className="fork-origin small" data-testid="forked-from-line">
          <Icon name="fork" size={12} />
          <span>Forked from</span>
          {origin ? (
            <button type="button" className="link fork-origin-link" data-testid="forked-from" data-session-id={origin.id} title={`Open “${titleOf(origin)}”, the chat this one was forked from`} onClick={() => openSession(origin.id)}>
              {titleOf(origin)}
            </button>
          ) : (
            // Not in the list (a background chat's, say): named, not linked.
            <span className="muted">chat {from}</span>
          )}
        </span>
      )}
      {forks.length > 0 && <ForksMenu forks={forks} onOpen={openSession} />}
    </div>
  );
}

function ForksMenu({ forks, onOpen }: { forks: SessionInfo[]; onOpen: (id: number) => void }) {
  const [open, setOpen] = useState(false);
  const buttonRef = useRef<HTMLButtonElement>(null);
  const wrapRef = useRef<HTMLDivElement>(null);
  const menuRef = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!open) return;
    menuRef.current?.querySelector<HTMLElement>("[role='menuitem']")?.focus();
    const onDown = (e: PointerEvent) => {
      if (!wrapRef.current?.contains(e.target as Node | null)) setOpen(false);
    };
    document.addEventListener("pointerdown", onDown);
    return () => document.removeEventListener("pointerdown", onDown);
  }, [open]);
  const close = () => {
    setOpen(false);
    buttonRef.current?.focus();
  };
  const label = `${forks.length} fork${forks.length === 1 ? "" : "s"} of this chat`;
  return (
    <div
      ref={wrapRef}
      className="menu-wrap forks-wrap"
      onBlur={(e) => {
        const to = e.relatedTarget as Node | null;
        if (to && !e.currentTarget.contains(to)) setOpen(false);
      }}
      onKeyDown={(e) => {
        if (!open) return;
        if (e.key === "Escape") {
          e.stopPropagation();
          close();
          return;
        }
        if (e.key !== "ArrowDown" && e.key !== "ArrowUp") return;
        e.preventDefault();
        const items = [...(menuRef.current?.querySelectorAll<HTMLElement>("[role='menuitem']") ?? [])];
        const at = items.indexOf(document.activeElement as HTMLElement);
        const n = items.length;
        items[e.key === "ArrowDown" ? (at + 1) % n : (at - 1 + n) % n]?.focus();
      }}
    >
      <button
        ref={buttonRef}
        type="button"
        className="forks-chip small"
        data-testid="forks-button"
        aria-haspopup="menu"
        aria-expanded={open}
        aria-label={label}
        title={label}
        onClick={() => setOpen((o) => !o)}
      >
        <Icon name="fork" size={12} />
        Forks ×{forks.length}
      </button>
      {open && (
        <div ref={menuRef} className="menu menu-down forks-menu" role="menu" aria-label="Forks of this chat" data-testid="forks-menu">
          {forks.map((f) => (
            <button
              key={f.id}
              type="button"
              role="menuitem"
              data-testid="fork-item"
              data-session-id={f.id}
              onClick={() => {
                setOpen(false);
                onOpen(f.id);
              }}
            >
              <span className="fork-item-title">{titleOf(f)}</span>
              <span className="muted small"> · {formatTime(f.created_at)}</span>
            </button>
          ))}
        </div>
      )}
    </div>
  );
}
