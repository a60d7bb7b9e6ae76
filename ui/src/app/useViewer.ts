// The viewer pane: whether it is open and what it shows. An agent's `open_file` opens it.

import { useCallback, useEffect, useState } from "react";
import type { ViewerTarget } from "../viewer/Viewer";
import { useTransport } from "./context";

export function useViewer() {
  const t = useTransport();
  const [viewerOpen, setViewerOpen] = useState(false);
  const [viewerTarget, setViewerTarget] = useState<ViewerTarget | null>(null);

  const openViewer = useCallback((path: string, line?: number) => {
    setViewerTarget({ path, line, nonce: Date.now() + Math.random() });
    setViewerOpen(true);
  }, []);
  const toggleViewer = useCallback(() => setViewerOpen((o) => !o), []);
  const closeViewer = useCallback(() => setViewerOpen(false), []);

  useEffect(
    () =>
      t.onEvent((_sid, e) => {
        if (e.type === "open_file") openViewer(e.path);
      }),
    [t, openViewer],
  );

  return { viewerOpen, viewerTarget, openViewer, toggleViewer, closeViewer };
}
