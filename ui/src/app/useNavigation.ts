// Which screen is shown (chat, Inbox, Tasks, Settings), and which one comes first.

import { useCallback, useEffect, useRef, useState } from "react";
import { useTransport, type AppView } from "./context";

export interface Navigation {
  view: AppView;
  /** Shows a screen (the sidebar, the palette, the shortcuts). */
  go(view: AppView): void;
  /** Shows a screen the person chose to open (a chat, a notification's item): the first-start Settings no longer takes over. */
  moveTo(view: AppView): void;
}

export function useNavigation(): Navigation {
  const t = useTransport();
  const [view, setView] = useState<AppView>("chat");

  // First start: with no model to talk to, Settings (its provider form) comes first —
  // unless the person has already gone somewhere else.
  const movedRef = useRef(false);
  useEffect(() => {
    let live = true;
    t.call({ cmd: "settings" })
      .then((r) => {
        if (live && r.models.length === 0 && !movedRef.current) setView("settings");
      })
      .catch(() => {
        // The connection banner says what is wrong; the chat screen stays.
      });
    return () => {
      live = false;
    };
  }, [t]);

  const moveTo = useCallback((v: AppView) => {
    movedRef.current = true;
    setView(v);
  }, []);

  return { view, go: setView, moveTo };
}
