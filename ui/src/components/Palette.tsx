// Ctrl/Cmd+K: one fuzzy list of actions and chats, driven from the keyboard.

import { useEffect, useMemo, useRef, useState } from "react";
import { fuzzyFilter } from "../lib/fuzzy";

export interface PaletteEntry {
  id: string;
  label: string;
  hint?: string;
  run: () => void;
}

export function Palette({ entries, onClose }: { entries: PaletteEntry[]; onClose: () => void }) {
  const [query, setQuery] = useState("");
  const [index, setIndex] = useState(0);
  const input = useRef<HTMLInputElement>(null);
  const list = useRef<HTMLUListElement>(null);
  const results = useMemo(() => fuzzyFilter(query, entries, (e) => e.label).slice(0, 50), [query, entries]);
  useEffect(() => setIndex(0), [query]);
  useEffect(() => input.current?.focus(), []);
  useEffect(() => {
    list.current?.querySelector<HTMLElement>(`[data-index="${index}"]`)?.scrollIntoView({ block: "nearest" });
  }, [index]);

  const choose = (i: number) => {
    const r = results[i];
    if (!r) return;
    onClose();
    r.item.run();
  };

  return (
    <div className="overlay" onMouseDown={onClose}>
      <div className="palette" data-testid="palette" role="dialog" aria-modal="true" aria-label="Command palette" onMouseDown={(e) => e.stopPropagation()}>
        <input
          ref={input}
          role="combobox"
          aria-expanded="true"
          aria-controls="palette-list"
          aria-activedescendant={results[index] ? `pal-${results[index]!.item.id}` : undefined}
          placeholder="Type a command or a chat title…"
          value={query}
          onChange={(e) => setQuery(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === "ArrowDown") {
              e.preventDefault();
              setIndex((i) => Math.min(results.length - 1, i + 1));
            } else if (e.key === "ArrowUp") {
              e.preventDefault();
              setIndex((i) => Math.max(0, i - 1));
            } else if (e.key === "Enter") {
              e.preventDefault();
              choose(index);
            } else if (e.key === "Escape") {
              e.preventDefault();
              onClose();
            }
          }}
        />
        <ul id="palette-list" ref={list} role="listbox" aria-label="Results">
          {results.length === 0 && <li className="muted small empty-row">No match</li>}
          {results.map((r, i) => (
            <li key={r.item.id} id={`pal-${r.item.id}`} data-index={i} role="option" aria-selected={i === index} className={i === index ? "active" : ""} onMouseEnter={() => setIndex(i)} onClick={() => choose(i)}>
              <span>{highlight(r.item.label, r.positions)}</span>
              {r.item.hint && <span className="muted small">{r.item.hint}</span>}
            </li>
          ))}
        </ul>
      </div>
    </div>
  );
}

function highlight(label: string, positions: number[]) {
  if (positions.length === 0) return label;
  const set = new Set(positions);
  return Array.from(label).map((ch, i) => (set.has(i) ? <mark key={i}>{ch}</mark> : <span key={i}>{ch}</span>));
}
