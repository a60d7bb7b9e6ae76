// The chats' worktrees (docs/worktrees.md): the list (`list_worktrees`, with how many days
// unused make one old), read again (by the shell) once the chats are known, when one
// appears, on a reconnect, when the Worktrees screen opens and after an apply or a
// discard; and what the Worktrees screen shows over its list — a worktree's review or a
// best-of-N trial side by side, one opened from the other — with the screen the first was
// opened from (Back returns there).

import { useCallback, useRef, useState } from "react";
import type { WorktreeInfo } from "../protocol";
import { errorText } from "../lib/format";
import { useTransport, type AppView } from "./context";
import type { Navigation } from "./useNavigation";

/** What the Worktrees screen shows over its list: a worktree's review, or a trial side by side. */
export type WorktreeTarget = { kind: "review"; name: string } | { kind: "trial"; trial: string };

export interface Worktrees {
  /** The active worktrees, newest first; null until first read. */
  worktrees: WorktreeInfo[] | null;
  /** Days unused after which a worktree is offered for cleaning up (0: never). */
  cleanAfterDays: number;
  error: string | null;
  reload(): Promise<void>;
  /** What is open over the list, if anything. */
  opened: WorktreeTarget | null;
  /** Where its Back goes: the target under it, or the screen the first was opened from. */
  back: WorktreeTarget | AppView | null;
  /** Opens a worktree's review (on the Worktrees screen). */
  review(name: string): void;
  /** Opens a best-of-N trial side by side (on the Worktrees screen). */
  openTrial(trial: string): void;
  /** Leaves what is open for what it was opened from. */
  closeReview(): void;
  /** The Worktrees screen shows its list (the sidebar, the palette). */
  showList(): void;
}

export function useWorktrees(nav: Navigation): Worktrees {
  const t = useTransport();
  const [worktrees, setWorktrees] = useState<WorktreeInfo[] | null>(null);
  const [cleanAfterDays, setCleanAfterDays] = useState(0);
  const [error, setError] = useState<string | null>(null);
  // Opened from the review of a trial's column, a review goes back to the trial.
  const [stack, setStack] = useState<{ targets: WorktreeTarget[]; from: AppView }>({ targets: [], from: "worktrees" });

  // Only the latest read may set the list: an earlier one's reply may miss a new worktree.
  const seq = useRef(0);
  const reload = useCallback(async () => {
    const n = ++seq.current;
    try {
      const r = await t.call({ cmd: "list_worktrees" });
      if (n !== seq.current) return;
      setWorktrees(r.worktrees ?? []);
      setCleanAfterDays(r.clean_after_days ?? 0);
      setError(null);
    } catch (e) {
      if (n === seq.current) setError(errorText(e));
    }
  }, [t]);

  const viewRef = useRef(nav.view);
  viewRef.current = nav.view;
  const stackRef = useRef(stack);
  stackRef.current = stack;
  const { moveTo, go } = nav;

  const open = useCallback(
    (target: WorktreeTarget) => {
      const s = stackRef.current;
      // Over what the Worktrees screen shows, it goes on top; from elsewhere it starts anew.
      if (viewRef.current === "worktrees" && s.targets.length > 0) setStack({ targets: [...s.targets, target], from: s.from });
      else setStack({ targets: [target], from: viewRef.current });
      moveTo("worktrees");
    },
    [moveTo],
  );
  const review = useCallback((name: string) => open({ kind: "review", name }), [open]);
  const openTrial = useCallback((trial: string) => open({ kind: "trial", trial }), [open]);
  const closeReview = useCallback(() => {
    const s = stackRef.current;
    const targets = s.targets.slice(0, -1);
    setStack({ targets, from: s.from });
    if (targets.length === 0) go(s.from);
  }, [go]);
  const showList = useCallback(() => setStack({ targets: [], from: "worktrees" }), []);

  const opened = stack.targets.at(-1) ?? null;
  const back = opened ? (stack.targets.at(-2) ?? stack.from) : null;
  return { worktrees, cleanAfterDays, error, reload, opened, back, review, openTrial, closeReview, showList };
}

/** What Back says, from where it goes. */
export function backLabelOf(back: WorktreeTarget | AppView | null): string {
  if (back != null && typeof back === "object") return back.kind === "trial" ? "Back to the agents side by side" : `Back to the review of ${back.name}`;
  return back === "chat" ? "Back to the chat" : "Back to the worktrees";
}
