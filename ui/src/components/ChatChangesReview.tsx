// A chat's own changes, to take back hunk by hunk (docs/worktrees.md, "A chat's own
// changes"): what the chat changed in the person's folder from before its first change to
// after its last (`chat_changes`), in the same review as a worktree's — but nothing is
// checked to begin with, as taking back is the exception. "Take back selected" undoes the
// checked hunks in the files as they are now (`revert_changes`), keeping what the person
// changed since; its report has Undo (`restore_checkpoint`), or shows the clashes with
// their markers, nothing written. Refused while the chat's turn runs.

import { useTransport } from "../app/context";
import { ChangesReview, type ReviewWords } from "./ChangesReview";

export const TAKE_BACK_WORDS: ReviewWords = {
  verb: "Take back",
  count: (taken, n) => `${taken} of ${n} ${n === 1 ? "change" : "changes"} to take back`,
  failed: "Could not take back",
  conflicts: (n) => `Nothing was written: ${n === 1 ? "1 file was" : `${n} files were`} changed again since, in the same place.`,
  conflictsHint: "Change them so they no longer clash, or leave those changes checked off, and take back again.",
  written: (n) => `Taken back (${n} ${n === 1 ? "file" : "files"}): `,
  undone: "Undone: the changes are back in ",
  nothing: "Nothing to write: your folder no longer has these changes.",
  undoHint: "Brings the changes taken back again.",
};

interface Props {
  sessionId: number;
  /** The chat's turn runs: nothing can be taken back until it has answered. */
  running: boolean;
  onBack: () => void;
}

export function ChatChangesReview({ sessionId, running, onBack }: Props) {
  const t = useTransport();
  return (
    <ChangesReview
      testId="changes-review"
      data={{ session: String(sessionId) }}
      heading="Review the chat's changes"
      onBack={onBack}
      backLabel="Back to the chat"
      help={
        <>
          What this chat changed in your folder, from before its first change to after its last. Check the changes to take back — nothing is taken back unless you check it; what
          you changed since stays. Keys: <kbd>j</kbd>/<kbd>k</kbd> or <kbd>↓</kbd>/<kbd>↑</kbd> move between changes, <kbd>Space</kbd> checks one, <kbd>Enter</kbd> (or{" "}
          <kbd>Ctrl</kbd>/<kbd>⌘</kbd>+<kbd>Enter</kbd>) takes back what is checked. To ask the agent instead, comment on a line with its <kbd>+</kbd>, then send the comments.
        </>
      }
      load={() => t.call({ cmd: "chat_changes", session_id: sessionId })}
      loadKey={String(sessionId)}
      what="the chat's changes"
      refreshTitle="Read the chat's changes again"
      empty={{ title: "No changes", text: "This chat has changed nothing in your folder (or its changes were all taken back)." }}
      takenByDefault={false}
      action={{
        label: "Take back selected",
        busyLabel: "Taking back…",
        title: "Undo the checked changes in your folder (Enter, Ctrl+Enter)",
        testId: "review-revert",
        disabledReason: running ? "The agent is working: take changes back once it has answered." : null,
        run: async (files, snapshot) => (await t.call({ cmd: "revert_changes", session_id: sessionId, files, snapshot })).report,
      }}
      words={TAKE_BACK_WORDS}
      reloadAfterAction
      commentsTo={sessionId}
    />
  );
}
