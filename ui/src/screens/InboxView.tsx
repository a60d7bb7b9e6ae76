// Everything agents are waiting on, across all chats, answerable in place.

import { useEffect, useRef } from "react";
import type { InboxEntry } from "../protocol";
import { InboxCard } from "../components/InboxCards";
import { EmptyState, ErrorState, Spinner } from "../components/ui";
import { formatTime } from "../lib/format";

export function InboxView({
  items,
  error,
  focusedId = null,
  onRetry,
}: {
  items: InboxEntry[] | null;
  error: string | null;
  /** The item to bring into view and mark (a clicked notification's). */
  focusedId?: number | null;
  onRetry: () => void;
}) {
  const focused = useRef<HTMLLIElement | null>(null);
  const present = items?.some((e) => e.id === focusedId) ?? false;
  useEffect(() => {
    if (present) focused.current?.scrollIntoView?.({ block: "center" });
  }, [present, focusedId]);
  return (
    <section className="screen" aria-labelledby="inbox-h">
      <header className="screen-header">
        <h1 id="inbox-h">Inbox</h1>
        <span className="muted small">Approvals and questions from your agents</span>
      </header>
      <div className="screen-body">
        {items == null ? (
          error ? <ErrorState message={`Could not load the Inbox: ${error}`} onRetry={onRetry} /> : <Spinner />
        ) : items.length === 0 ? (
          <EmptyState title="Nothing waiting">When an agent needs an approval or an answer, it shows up here.</EmptyState>
        ) : (
          <ul className="inbox-list" aria-label="Waiting items">
            {[...items]
              .sort((a, b) => a.created_at - b.created_at)
              .map((e) => (
                <li
                  key={e.id}
                  ref={e.id === focusedId ? focused : undefined}
                  className={e.id === focusedId ? "inbox-focused" : undefined}
                  data-testid="inbox-item"
                  data-inbox-id={e.id}
                  data-kind={e.kind}
                  data-focused={e.id === focusedId ? "1" : undefined}
                >
                  <div className="small muted inbox-time">{formatTime(e.created_at)}</div>
                  <InboxCard entry={e} showContext />
                </li>
              ))}
          </ul>
        )}
      </div>
    </section>
  );
}
