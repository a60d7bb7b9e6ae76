// The chat header's "worktree: NAME" badge (docs/worktrees.md, "In the app"), for a chat
// that works in a worktree of its own: its branch for a git worktree, its folder and the
// person's in the tooltip; a click opens the worktree's review.

import { useApp } from "../app/context";
import { worktreeOfChat } from "../lib/worktrees";
import { Icon } from "./ui";

export function WorktreeBadge({ sessionId }: { sessionId: number }) {
  const { worktrees, reviewWorktree } = useApp();
  const w = worktreeOfChat(worktrees, sessionId);
  if (!w) return null;
  const tip = [
    `This chat works in worktree ${w.name}${w.kind === "git" && w.branch ? ` (git branch ${w.branch})` : " (a copy)"}.`,
    `Its folder: ${w.working_dir}`,
    `Your folder: ${w.source}`,
    "Its changes reach your folder only when you apply them: click to review.",
  ].join("\n");
  return (
    <button type="button" className="worktree-badge" data-testid="worktree-badge" data-worktree={w.name} title={tip} aria-label={`Worktree ${w.name}: review its changes`} onClick={() => reviewWorktree(w.name)}>
      <Icon name="worktree" size={12} />
      <span className="worktree-badge-name">worktree: {w.name}</span>
      {w.kind === "git" && w.branch && <span className="worktree-badge-branch">· {w.branch}</span>}
    </button>
  );
}
