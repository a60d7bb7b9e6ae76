// Small shared pieces: icons, spinners, empty and error states.

import type { ReactNode } from "react";

const paths: Record<string, string> = {
  chat: "M4 5h16v10H8l-4 4z",
  inbox: "M4 13l2-8h12l2 8v6H4zM4 13h5l1 2h4l1-2h5",
  agents: "M4 6h.01M4 12h.01M4 18h.01M8 6h12M8 12h12M8 18h8",
  tasks: "M9 6h11M9 12h11M9 18h11M4 6l1 1 2-2M4 12l1 1 2-2M4 18l1 1 2-2",
  settings: "M12 9a3 3 0 100 6 3 3 0 000-6zM12 2v3M12 19v3M2 12h3M19 12h3M4.9 4.9l2.1 2.1M17 17l2.1 2.1M4.9 19.1L7 17M17 7l2.1-2.1",
  plus: "M12 5v14M5 12h14",
  stop: "M7 7h10v10H7z",
  send: "M4 12l16-8-6 16-2-7z",
  close: "M6 6l12 12M18 6L6 18",
  edit: "M4 20h4L19 9l-4-4L4 16z",
  trash: "M5 7h14M10 7V4h4v3M7 7l1 13h8l1-13",
  file: "M6 3h8l4 4v14H6zM14 3v4h4",
  panel: "M3 5h18v14H3zM15 5v14",
  search: "M11 4a7 7 0 100 14 7 7 0 000-14zM20 20l-4-4",
  chevron: "M9 6l6 6-6 6",
  refresh: "M20 11a8 8 0 10-2.3 5.7M20 5v6h-6",
  check: "M5 12l5 5 9-10",
  shield: "M12 3l8 3v6c0 4.5-3.4 8.3-8 9-4.6-.7-8-4.5-8-9V6z",
  warning: "M12 3l10 18H2zM12 10v5M12 18v.5",
  undo: "M9 14L4 9l5-5M4 9h11a5 5 0 010 10h-3",
  info: "M12 3a9 9 0 100 18 9 9 0 000-18zM12 11v5M12 7.5v.5",
  image: "M4 5h16v14H4zM4 16l5-5 4 4 3-3 4 4M15.5 8.5v.01",
  model: "M8 8h8v8H8zM10 3v3M14 3v3M10 18v3M14 18v3M3 10h3M3 14h3M18 10h3M18 14h3",
  attach: "M20 11.5l-8.2 8.2a5 5 0 01-7.1-7.1L13 4.3a3.5 3.5 0 015 5l-8.3 8.3a2 2 0 01-2.8-2.8L14.5 7.2",
  plan: "M9 3h6v3H9zM9 4.5H5V21h14V4.5h-4M8.5 11h7M8.5 15h5",
  fork: "M7 3v5c0 3 3 4 5 5 2-1 5-2 5-5V3M12 13v8",
  worktree: "M6 3v12M18 9a3 3 0 100-6 3 3 0 000 6zM6 21a3 3 0 100-6 3 3 0 000 6zM18 9a9 9 0 01-9 9",
  bestof: "M3 5h5v14H3zM10 5h4v14h-4zM16 5h5v14h-5z",
};

export function Icon({ name, size = 16 }: { name: keyof typeof paths | string; size?: number }) {
  return (
    <svg width={size} height={size} viewBox="0 0 24 24" fill="none" stroke="currentColor" strokeWidth={2} strokeLinecap="round" strokeLinejoin="round" aria-hidden="true" focusable="false">
      <path d={paths[name] ?? ""} />
    </svg>
  );
}

export function Spinner({ label = "Loading…" }: { label?: string }) {
  return (
    <div className="state state-loading" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" />
      <span>{label}</span>
    </div>
  );
}

export function ErrorState({ message, onRetry, testId }: { message: string; onRetry?: () => void; testId?: string }) {
  return (
    <div className="state state-error" role="alert" data-testid={testId}>
      <span>{message}</span>
      {onRetry && (
        <button type="button" className="btn" onClick={onRetry}>
          Retry
        </button>
      )}
    </div>
  );
}

export function EmptyState({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="state state-empty">
      <strong>{title}</strong>
      {children && <div className="muted">{children}</div>}
    </div>
  );
}

export function basename(path: string): string {
  const parts = path.split(/[\\/]/);
  return parts[parts.length - 1] || path;
}
