// The chat's context view (the header's AGENTS.md chip's panel): which chat it is open in.

import { useCallback, useEffect, useState } from "react";
import type { Navigation } from "./useNavigation";

export function useContextPanel({ view, go }: Pick<Navigation, "view" | "go">, currentId: number | null) {
  /** The chat whose context view is open. */
  const [contextFor, setContextFor] = useState<number | null>(null);

  // The context panel belongs to the chat it was opened in, and closes with the screen.
  useEffect(() => {
    if (view !== "chat") setContextFor(null);
    else setContextFor((f) => (f === currentId ? f : null));
  }, [currentId, view]);

  /** Opens the current chat's panel (the palette's "Show the chat's context"). */
  const showContext = useCallback(() => {
    go("chat");
    setContextFor(currentId);
  }, [currentId, go]);

  /** The shortcut: opens or closes the panel on the chat screen, and goes there from elsewhere. */
  const toggleContext = useCallback(() => {
    if (view === "chat") setContextFor((f) => (f != null && f === currentId ? null : currentId));
    else showContext();
  }, [view, currentId, showContext]);

  const onContextOpen = useCallback((open: boolean) => setContextFor(open ? currentId : null), [currentId]);

  return { contextOpen: currentId != null && contextFor === currentId, onContextOpen, showContext, toggleContext };
}
