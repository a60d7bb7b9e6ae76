// The shell: sidebar, the current screen, the viewer pane, the palette, the connection
// banner and global shortcuts. The state shared across screens lives in hooks by concern
// (app/useSessions, useInbox, useViewer, useNavigation, useTheme, useContextPanel,
// useConnection, useWorktrees, useBestOf); each follows the pushed events it needs. The shell
// composes them and gives screens what they share through `AppContext`.

import { useEffect, useMemo, useRef, useState } from "react";
import { AppContext, type AppActions, type AppView } from "./app/context";
import { useConnection } from "./app/useConnection";
import { useContextPanel } from "./app/useContextPanel";
import { useInbox } from "./app/useInbox";
import { useNavigation } from "./app/useNavigation";
import { useSessions } from "./app/useSessions";
import { useTheme } from "./app/useTheme";
import { useViewer } from "./app/useViewer";
import { backLabelOf, useWorktrees } from "./app/useWorktrees";
import { useBestOf } from "./app/useBestOf";
import { usePaletteEntries, useShortcuts, type ShellCommands } from "./app/shortcuts";
import { Sidebar } from "./components/Sidebar";
import { ChatView } from "./components/ChatView";
import { BestOfDialog } from "./components/BestOfDialog";
import { Palette } from "./components/Palette";
import { EmptyState, Spinner } from "./components/ui";
import { AgentsView } from "./screens/AgentsView";
import { InboxView } from "./screens/InboxView";
import { TasksView } from "./screens/TasksView";
import { SettingsView } from "./screens/SettingsView";
import { WorktreesView } from "./screens/WorktreesView";
import { Viewer } from "./viewer/Viewer";

export function App() {
  const { theme, setTheme } = useTheme();
  const nav = useNavigation();
  const { view, go } = nav;
  const inbox = useInbox(nav);
  const viewer = useViewer();
  const chats = useSessions(nav);
  const { sessions, currentId, current } = chats;
  const context = useContextPanel(nav, currentId);
  const wt = useWorktrees(nav);
  const [paletteOpen, setPaletteOpen] = useState(false);
  const [worktreeFormOpen, setWorktreeFormOpen] = useState(false);
  const bestOf = useBestOf({ addSessions: chats.addSessions, reloadWorktrees: wt.reload, openTrial: wt.openTrial });
  const bestOfButton = useRef<HTMLButtonElement>(null);

  // On every (re)open, reload what events may have been missed meanwhile.
  const { showBanner } = useConnection((reconnect) => {
    void chats.loadSessions();
    void inbox.loadInbox();
    if (reconnect) {
      chats.reloadCurrent();
      void wt.reload();
    }
  });

  // A chat that appears may work in a worktree (made here, or by `skald exec --worktree`).
  const { reload: reloadWorktrees } = wt;
  const sessionIds = (sessions ?? []).map((s) => s.id).join(",");
  const sessionsKnown = sessions != null;
  useEffect(() => {
    if (sessionsKnown) void reloadWorktrees();
  }, [sessionIds, sessionsKnown, reloadWorktrees]);

  // The sidebar's Worktrees shows the list, not the review left open there.
  const goTo = (v: AppView) => {
    if (v === "worktrees") wt.showList();
    go(v);
  };
  const newChatInWorktree = async (name: string) => {
    try {
      await chats.createChat({ worktree: name });
    } finally {
      void wt.reload();
    }
  };

  const commands: ShellCommands = {
    togglePalette: () => setPaletteOpen((o) => !o),
    newChat: () => void chats.newChat(),
    newChatInWorktree: () => setWorktreeFormOpen(true),
    bestOf: () => bestOf.setOpen(true),
    go: goTo,
    toggleViewer: viewer.toggleViewer,
    showContext: context.showContext,
    toggleContext: context.toggleContext,
    stopCurrent: chats.stopCurrent,
    setTheme,
    openSession: chats.openSession,
  };
  useShortcuts(commands);
  const paletteEntries = usePaletteEntries(commands, sessions);

  const { openSession, openFork } = chats;
  const { openViewer } = viewer;
  const { refreshInbox } = inbox;
  const inboxItems = inbox.inbox;
  const { worktrees, review: reviewWorktree, openTrial } = wt;
  const actions = useMemo<AppActions>(
    () => ({
      openSession,
      openFork,
      openViewer,
      go,
      sessions: sessions ?? [],
      inbox: inboxItems ?? [],
      refreshInbox,
      currentSessionId: currentId,
      worktrees: worktrees ?? [],
      refreshWorktrees: () => void reloadWorktrees(),
      reviewWorktree,
      openTrial,
    }),
    [openSession, openFork, openViewer, go, sessions, inboxItems, refreshInbox, currentId, worktrees, reloadWorktrees, reviewWorktree, openTrial],
  );

  return (
    <AppContext.Provider value={actions}>
      <div className={viewer.viewerOpen ? "app with-viewer" : "app"}>
        {showBanner && (
          <div className="connection-banner" data-testid="connection-banner" role="alert">
            Disconnected from Skald — reconnecting…
          </div>
        )}
        <Sidebar
          sessions={sessions}
          sessionsError={chats.sessionsError}
          onRetry={() => void chats.loadSessions()}
          currentId={currentId}
          view={view}
          inboxCount={inboxItems?.length ?? 0}
          runningCount={(sessions ?? []).filter((s) => s.running).length}
          onSelect={openSession}
          onNew={() => void chats.newChat()}
          onNewInFolder={chats.newChatInFolder}
          onNewInWorktree={newChatInWorktree}
          worktreeFormOpen={worktreeFormOpen}
          onWorktreeForm={setWorktreeFormOpen}
          onBestOf={() => bestOf.setOpen(true)}
          bestOfOpen={bestOf.open}
          bestOfButton={bestOfButton}
          onRename={chats.rename}
          onDelete={chats.remove}
          onNav={goTo}
        />
        <main className="main">
          {view === "chat" &&
            (currentId != null && current ? (
              <ChatView
                key={currentId}
                session={chats.currentSession}
                sessionId={currentId}
                chat={current}
                dispatch={chats.dispatchCurrent}
                loadError={chats.currentLoadError}
                onRetryLoad={() => void chats.loadHistory(currentId)}
                viewerOpen={viewer.viewerOpen}
                onToggleViewer={viewer.toggleViewer}
                contextOpen={context.contextOpen}
                onContextOpen={context.onContextOpen}
                preparing={chats.preparing}
                onSession={chats.updateSession}
              />
            ) : sessions && sessions.length === 0 ? (
              <EmptyState title="No chats yet">
                <button type="button" className="btn btn-primary" onClick={() => void chats.newChat()}>
                  Start a new chat
                </button>
                <div className="small">or press Ctrl+Shift+O</div>
              </EmptyState>
            ) : (
              <Spinner label={sessions ? "Opening chat…" : "Connecting to Skald…"} />
            ))}
          {view === "inbox" && <InboxView items={inboxItems} error={inbox.inboxError} focusedId={inbox.focusedInbox} onRetry={() => void inbox.loadInbox()} />}
          {view === "agents" && <AgentsView />}
          {view === "tasks" && <TasksView />}
          {view === "worktrees" && (
            <WorktreesView
              worktrees={wt.worktrees}
              cleanAfterDays={wt.cleanAfterDays}
              error={wt.error}
              onReload={() => void wt.reload()}
              opened={wt.opened}
              backLabel={backLabelOf(wt.back)}
              onCloseReview={wt.closeReview}
            />
          )}
          {view === "settings" && <SettingsView theme={theme} onTheme={setTheme} />}
        </main>
        {viewer.viewerOpen && <Viewer target={viewer.viewerTarget} sessionId={currentId} onOpen={openViewer} onClose={viewer.closeViewer} />}
        {paletteOpen && <Palette entries={paletteEntries} onClose={() => setPaletteOpen(false)} />}
        {bestOf.open && <BestOfDialog onStart={bestOf.start} onClose={() => bestOf.setOpen(false)} returnFocus={bestOfButton} />}
      </div>
    </AppContext.Provider>
  );
}
