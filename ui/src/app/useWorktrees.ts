// The chats' worktrees (docs/worktrees.md): the list (`list_worktrees`), read again (by the
// shell) once the chats are known, when one appears, on a reconnect, when the Worktrees
// screen opens and after an apply or a discard; and which worktree is being reviewed, with
// the screen the review was opened from (Back returns there).

import { useCallback, useRef, useState } from "react";
import type { WorktreeInfo } from "../protocol";
import { errorText } from "../lib/format";
import { useTransport, type AppView } from "./context";
import type { Navigation } from "./useNavigation";

export interface Worktrees {
  /** The active worktrees, newest first; null until first read. */
  worktrees: WorktreeInfo[] | null;
  error: string | null;
  reload(): Promise<void>;
  /** The worktree under review, if any, and the screen it was opened from. */
  reviewing: string | null;
  reviewFrom: AppView | null;
  /** Opens a worktree's review (on the Worktrees screen). */
  review(name: string): void;
  /** Leaves the review for the screen it was opened from. */
  closeReview(): void;
  /** The Worktrees screen shows its list (the sidebar, the palette). */
  showList(): void;
}

export function useWorktrees(nav: Navigation): Worktrees {
  const t = useTransport();
  const [worktrees, setWorktrees] = useState<WorktreeInfo[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [reviewing, setReviewing] = useState<{ name: string; from: AppView } | null>(null);

  // Only the latest read may set the list: an earlier one's reply may miss a new worktree.
  const seq = useRef(0);
  const reload = useCallback(async () => {
    const n = ++seq.current;
    try {
      const r = await t.call({ cmd: "list_worktrees" });
      if (n !== seq.current) return;
      setWorktrees(r.worktrees ?? []);
      setError(null);
    } catch (e) {
      if (n === seq.current) setError(errorText(e));
    }
  }, [t]);

  const viewRef = useRef(nav.view);
  viewRef.current = nav.view;
  const reviewingRef = useRef(reviewing);
  reviewingRef.current = reviewing;
  const { moveTo, go } = nav;

  const review = useCallback(
    (name: string) => {
      setReviewing({ name, from: viewRef.current });
      moveTo("worktrees");
    },
    [moveTo],
  );
  const closeReview = useCallback(() => {
    const from = reviewingRef.current?.from ?? "worktrees";
    setReviewing(null);
    go(from);
  }, [go]);
  const showList = useCallback(() => setReviewing(null), []);

  return { worktrees, error, reload, reviewing: reviewing?.name ?? null, reviewFrom: reviewing?.from ?? null, review, closeReview, showList };
}
