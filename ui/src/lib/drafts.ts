// Typed-but-unsent text per session survives reloads and crashes (localStorage).

const KEY = (sessionId: number) => `skald.draft.${sessionId}`;

export function loadDraft(sessionId: number): string {
  try {
    return localStorage.getItem(KEY(sessionId)) ?? "";
  } catch {
    return "";
  }
}

export function saveDraft(sessionId: number, text: string) {
  try {
    if (text === "") localStorage.removeItem(KEY(sessionId));
    else localStorage.setItem(KEY(sessionId), text);
  } catch {
    // Storage full or disabled: the draft stays in memory only.
  }
}
