// The composer's "Attach resource" button and its picker: the MCP servers' resources,
// filtered as you type; picking one puts its `@server:uri` mention into the message.

import { useEffect, useId, useMemo, useRef, useState } from "react";
import type { McpResourceInfo } from "../protocol";
import { matchResources, resourceLabel } from "../lib/mcpPrompts";
import { Icon } from "./ui";

export function AttachResource({ resources, onPick }: { resources: McpResourceInfo[]; onPick: (r: McpResourceInfo) => void }) {
  const [open, setOpen] = useState(false);
  const buttonRef = useRef<HTMLButtonElement>(null);
  const wrapRef = useRef<HTMLDivElement>(null);

  // A click outside closes the picker (focus may not move: most of the page takes none).
  useEffect(() => {
    if (!open) return;
    const onDown = (e: PointerEvent) => {
      if (!wrapRef.current?.contains(e.target as Node | null)) setOpen(false);
    };
    document.addEventListener("pointerdown", onDown);
    return () => document.removeEventListener("pointerdown", onDown);
  }, [open]);

  if (resources.length === 0) return null;
  return (
    <div
      ref={wrapRef}
      className="menu-wrap"
      onBlur={(e) => {
        const to = e.relatedTarget as Node | null;
        if (to && !e.currentTarget.contains(to)) setOpen(false);
      }}
    >
      <button
        ref={buttonRef}
        type="button"
        className={open ? "btn composer-attach active" : "btn composer-attach"}
        data-testid="attach-resource"
        aria-label="Attach resource"
        title="Attach a resource from an MCP server"
        aria-haspopup="dialog"
        aria-expanded={open}
        onClick={() => setOpen((o) => !o)}
      >
        <Icon name="attach" />
      </button>
      {open && (
        <ResourcePicker
          resources={resources}
          onClose={() => {
            setOpen(false);
            buttonRef.current?.focus();
          }}
          onPick={(r) => {
            setOpen(false);
            onPick(r);
          }}
        />
      )}
    </div>
  );
}

function ResourcePicker({ resources, onPick, onClose }: { resources: McpResourceInfo[]; onPick: (r: McpResourceInfo) => void; onClose: () => void }) {
  const [query, setQuery] = useState("");
  const [index, setIndex] = useState(0);
  const listId = useId();
  const list = useRef<HTMLUListElement>(null);
  const shown = useMemo(() => matchResources(resources, query), [resources, query]);
  const active = Math.min(index, shown.length - 1);
  useEffect(() => {
    list.current?.querySelector<HTMLElement>(`[data-index="${active}"]`)?.scrollIntoView?.({ block: "nearest" });
  }, [active]);
  const optionId = (i: number) => `${listId}-${i}`;

  return (
    <div className="menu resource-picker" data-testid="resource-picker" role="dialog" aria-label="Attach a resource">
      <input
        // Opened on purpose, to type a filter at once.
        autoFocus
        role="combobox"
        aria-label="Filter resources"
        aria-expanded="true"
        aria-controls={listId}
        aria-autocomplete="list"
        aria-activedescendant={shown[active] ? optionId(active) : undefined}
        data-testid="resource-filter"
        placeholder="Filter resources…"
        value={query}
        onChange={(e) => {
          setQuery(e.target.value);
          setIndex(0);
        }}
        onKeyDown={(e) => {
          if (e.key === "ArrowDown") {
            e.preventDefault();
            setIndex(shown.length === 0 ? 0 : (active + 1) % shown.length);
          } else if (e.key === "ArrowUp") {
            e.preventDefault();
            setIndex(shown.length === 0 ? 0 : (active - 1 + shown.length) % shown.length);
          } else if (e.key === "Enter") {
            e.preventDefault();
            const r = shown[active];
            if (r) onPick(r);
          } else if (e.key === "Escape") {
            e.preventDefault();
            // Only the picker closes (not the agent's turn, which Escape in the composer stops).
            e.stopPropagation();
            onClose();
          }
        }}
      />
      <ul id={listId} ref={list} className="option-list" role="listbox" aria-label="Resources">
        {shown.length === 0 && <li className="muted small empty-row">No resource matches</li>}
        {shown.map((r, i) => (
          <li
            key={`${r.server}\n${r.uri}`}
            id={optionId(i)}
            data-index={i}
            data-testid="resource-option"
            role="option"
            aria-selected={i === active}
            className={i === active ? "active" : undefined}
            onMouseDown={(e) => e.preventDefault()}
            onMouseEnter={() => setIndex(i)}
            onClick={() => onPick(r)}
          >
            <span className="option-main">
              <strong>{resourceLabel(r)}</strong>
              <span className="chip">{r.server}</span>
            </span>
            <code className="option-uri small">{r.uri}</code>
            {r.description && <span className="muted small option-detail">{r.description}</span>}
          </li>
        ))}
      </ul>
    </div>
  );
}
