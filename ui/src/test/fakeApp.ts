// What screens get from the shell (`AppContext`), for tests that render a part of the app
// without it: nothing happens, chat 1 is the current one.

import type { AppActions } from "../app/context";

export function fakeApp(over: Partial<AppActions> = {}): AppActions {
  return {
    openSession() {},
    openFork() {},
    openViewer() {},
    go() {},
    sessions: [],
    inbox: [],
    refreshInbox() {},
    currentSessionId: 1,
    worktrees: [],
    refreshWorktrees() {},
    reviewWorktree() {},
    openTrial() {},
    ...over,
  };
}
