// The shell's global commands, from the keyboard (Ctrl/Cmd+K, +Shift+O/I/A/E/X) and the
// Ctrl/Cmd+K palette (the same commands, and every chat by its title).

import { useEffect, useMemo, useRef } from "react";
import type { SessionInfo } from "../protocol";
import type { ThemeChoice } from "../lib/theme";
import { CONTEXT_SHORTCUT } from "../components/ContextView";
import type { PaletteEntry } from "../components/Palette";
import type { AppView } from "./context";

/** Opens the Agents board (docs/board.md). */
export const AGENTS_SHORTCUT = "Ctrl+Shift+A";

export interface ShellCommands {
  togglePalette(): void;
  newChat(): void;
  /** Opens the sidebar's "New chat in a worktree" form. */
  newChatInWorktree(): void;
  /** Opens the "Best of N" dialog (docs/worktrees.md, "Best of N"). */
  bestOf(): void;
  go(view: AppView): void;
  toggleViewer(): void;
  showContext(): void;
  toggleContext(): void;
  stopCurrent(): void;
  setTheme(theme: ThemeChoice): void;
  openSession(id: number): void;
}

/** Keeps the latest commands, so a listener or an entry made once runs what is current. */
function useLatest<T>(value: T) {
  const ref = useRef(value);
  ref.current = value;
  return ref;
}

export function useShortcuts(commands: ShellCommands) {
  const c = useLatest(commands);
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const mod = e.ctrlKey || e.metaKey;
      if (!mod) return;
      const k = e.key.toLowerCase();
      if (k === "k" && !e.shiftKey) {
        e.preventDefault();
        c.current.togglePalette();
      } else if (e.shiftKey && k === "o") {
        e.preventDefault();
        c.current.newChat();
      } else if (e.shiftKey && k === "i") {
        e.preventDefault();
        c.current.go("inbox");
      } else if (e.shiftKey && k === "a") {
        e.preventDefault();
        c.current.go("agents");
      } else if (e.shiftKey && k === "e") {
        e.preventDefault();
        c.current.toggleViewer();
      } else if (e.shiftKey && k === "x") {
        e.preventDefault();
        c.current.toggleContext();
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [c]);
}

export function usePaletteEntries(commands: ShellCommands, sessions: SessionInfo[] | null): PaletteEntry[] {
  const c = useLatest(commands);
  return useMemo<PaletteEntry[]>(() => {
    const actions: PaletteEntry[] = [
      { id: "new", label: "New chat", hint: "Ctrl+Shift+O", run: () => c.current.newChat() },
      { id: "new-worktree", label: "New chat in a worktree…", run: () => c.current.newChatInWorktree() },
      { id: "best-of", label: "Best of N…", run: () => c.current.bestOf() },
      { id: "inbox", label: "Go to Inbox", hint: "Ctrl+Shift+I", run: () => c.current.go("inbox") },
      { id: "agents", label: "Go to Agents", hint: AGENTS_SHORTCUT, run: () => c.current.go("agents") },
      { id: "chat", label: "Go to Chat", run: () => c.current.go("chat") },
      { id: "tasks", label: "Go to Tasks", run: () => c.current.go("tasks") },
      { id: "worktrees", label: "Go to Worktrees", run: () => c.current.go("worktrees") },
      { id: "settings", label: "Go to Settings", run: () => c.current.go("settings") },
      { id: "viewer", label: "Toggle viewer", hint: "Ctrl+Shift+E", run: () => c.current.toggleViewer() },
      { id: "context", label: "Show the chat's context (AGENTS.md, skills)", hint: CONTEXT_SHORTCUT, run: () => c.current.showContext() },
      { id: "stop", label: "Stop the running turn", hint: "Esc", run: () => c.current.stopCurrent() },
      { id: "theme-light", label: "Theme: light", run: () => c.current.setTheme("light") },
      { id: "theme-dark", label: "Theme: dark", run: () => c.current.setTheme("dark") },
      { id: "theme-system", label: "Theme: follow the system", run: () => c.current.setTheme("system") },
    ];
    const chatsList = (sessions ?? []).map<PaletteEntry>((s) => ({
      id: `s${s.id}`,
      label: s.title || `Untitled chat ${s.id}`,
      hint: "chat",
      run: () => c.current.openSession(s.id),
    }));
    return [...actions, ...chatsList];
  }, [sessions, c]);
}
