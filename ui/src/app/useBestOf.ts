// Best of N from the shell (docs/worktrees.md, "Best of N"): whether the dialog is open
// (the sidebar's button, the palette's "Best of N…"), and starting a trial — its chats join
// the list, the worktrees are read again, and the trial opens side by side.

import { useCallback, useState } from "react";
import type { Command, SessionInfo } from "../protocol";
import { useTransport } from "./context";

export interface BestOf {
  open: boolean;
  setOpen(open: boolean): void;
  /** Sends `best_of`; throws the engine's refusal (the dialog shows it). */
  start(command: Extract<Command, { cmd: "best_of" }>): Promise<void>;
}

export function useBestOf({ addSessions, reloadWorktrees, openTrial }: { addSessions: (list: SessionInfo[]) => void; reloadWorktrees: () => Promise<void>; openTrial: (trial: string) => void }): BestOf {
  const t = useTransport();
  const [open, setOpen] = useState(false);
  const start = useCallback(
    async (command: Extract<Command, { cmd: "best_of" }>) => {
      const r = await t.call(command);
      addSessions(r.sessions);
      await reloadWorktrees();
      openTrial(r.trial);
    },
    [t, addSessions, reloadWorktrees, openTrial],
  );
  return { open, setOpen, start };
}
