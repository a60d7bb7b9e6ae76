// The Agent Inbox: the items waiting for the person, reloaded when an item is asked for or
// resolved, and the item a clicked notification was about.

import { useCallback, useEffect, useRef, useState } from "react";
import type { InboxEntry } from "../protocol";
import { errorText } from "../lib/format";
import { useTransport } from "./context";
import type { Navigation } from "./useNavigation";

export function useInbox({ moveTo }: Pick<Navigation, "moveTo">) {
  const t = useTransport();
  const [inbox, setInbox] = useState<InboxEntry[] | null>(null);
  const [inboxError, setInboxError] = useState<string | null>(null);
  /** The Inbox item a clicked notification was about, shown in front. */
  const [focusedInbox, setFocusedInbox] = useState<number | null>(null);

  const inboxTimer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const loadInbox = useCallback(async () => {
    try {
      const r = await t.call({ cmd: "inbox" });
      setInbox(r.items);
      setInboxError(null);
    } catch (e) {
      setInboxError(errorText(e));
    }
  }, [t]);
  /** Coalesces bursts of inbox events into one reload. */
  const refreshInbox = useCallback(() => {
    if (inboxTimer.current) clearTimeout(inboxTimer.current);
    inboxTimer.current = setTimeout(() => {
      inboxTimer.current = null;
      void loadInbox();
    }, 50);
  }, [loadInbox]);

  useEffect(
    () =>
      t.onEvent((_sid, e) => {
        if (e.type === "inbox_requested" || e.type === "inbox_resolved") refreshInbox();
      }),
    [t, refreshInbox],
  );

  // A clicked notification (desktop app): its item, in the Inbox.
  useEffect(
    () =>
      t.onOpen?.((target) => {
        if (target.what !== "inbox_item") return;
        moveTo("inbox");
        setFocusedInbox(target.inbox_id);
        void loadInbox();
      }),
    [t, loadInbox, moveTo],
  );

  return { inbox, inboxError, focusedInbox, loadInbox, refreshInbox };
}
