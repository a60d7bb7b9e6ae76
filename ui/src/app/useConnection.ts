// The connection to the engine: its status for the banner, and a call on every (re)open.

import { useEffect, useRef, useState } from "react";
import type { ConnectionStatus } from "../transport";
import { useTransport } from "./context";

/**
 * Follows the transport's status. `onOpen` runs on every open, `reconnect` true after the
 * first: events may have been missed meanwhile, so what they feed is loaded again.
 */
export function useConnection(onOpen: (reconnect: boolean) => void) {
  const t = useTransport();
  const [status, setStatus] = useState<ConnectionStatus>("connecting");
  const everOpen = useRef(false);
  const onOpenRef = useRef(onOpen);
  onOpenRef.current = onOpen;
  useEffect(
    () =>
      t.onStatus((s) => {
        setStatus(s);
        if (s === "open") {
          const reconnect = everOpen.current;
          everOpen.current = true;
          onOpenRef.current(reconnect);
        }
      }),
    [t],
  );
  // Not while first connecting: only once a connection was lost, or could not be made.
  const showBanner = status !== "open" && (everOpen.current || status === "closed");
  return { status, showBanner };
}
