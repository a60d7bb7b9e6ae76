// The chat header's "worktree: NAME" badge (docs/worktrees.md, "In the app"), for a chat
// that works in a worktree of its own: its branch for a git worktree, its folder and the
// person's in the tooltip; a click opens the worktree's review — or, for an agent of a
// best-of-N trial, the trial's agents side by side.

import { useApp } from "../app/context";
import { trialLetter, worktreeOfChat } from "../lib/worktrees";
import { Icon } from "./ui";

export function WorktreeBadge({ sessionId }: { sessionId: number }) {
  const { worktrees, reviewWorktree, openTrial } = useApp();
  const w = worktreeOfChat(worktrees, sessionId);
  if (!w) return null;
  const tip = [
    `This chat works in worktree ${w.name}${w.kind === "git" && w.branch ? ` (git branch ${w.branch})` : " (a copy)"}.`,
    `Its folder: ${w.working_dir}`,
    `Your folder: ${w.source}`,
    w.trial
      ? `It is agent ${trialLetter(w)} of best-of trial ${w.trial}: click to compare the agents' changes side by side.`
      : "Its changes reach your folder only when you apply them: click to review.",
  ].join("\n");
  const trial = w.trial;
  return (
    <button
      type="button"
      className="worktree-badge"
      data-testid="worktree-badge"
      data-worktree={w.name}
      data-trial={trial}
      title={tip}
      aria-label={trial ? `Worktree ${w.name}, agent ${trialLetter(w)} of best-of trial ${trial}: compare the agents side by side` : `Worktree ${w.name}: review its changes`}
      onClick={() => (trial ? openTrial(trial) : reviewWorktree(w.name))}
    >
      <Icon name={trial ? "bestof" : "worktree"} size={12} />
      <span className="worktree-badge-name">worktree: {w.name}</span>
      {w.kind === "git" && w.branch && <span className="worktree-badge-branch">· {w.branch}</span>}
      {trial && <span className="worktree-badge-branch">· best of N</span>}
    </button>
  );
}
