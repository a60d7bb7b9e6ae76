// The images attached in a chat's composer and not sent yet, per chat: they stay while
// another chat is open (the composer is made again for each chat), as long as the app
// runs. The engine removes an image attached but never sent after a day (docs/images.md).

import type { ChatImage } from "../protocol";
import type { Transport } from "../transport";

export interface Attachment {
  /** This attachment (the same image may be attached twice). */
  key: string;
  /** The file's name, shown while it is attached. */
  name: string;
  /** What `attach_image` answered; null while it is on its way. */
  image: ChatImage | null;
  /** Set when the chat's model cannot see images. */
  warning?: string;
}

const NONE: Attachment[] = [];

export class AttachmentStore {
  private bySession = new Map<number, Attachment[]>();
  private listeners = new Set<() => void>();

  get(sessionId: number): Attachment[] {
    return this.bySession.get(sessionId) ?? NONE;
  }

  update(sessionId: number, fn: (list: Attachment[]) => Attachment[]) {
    const before = this.get(sessionId);
    const after = fn(before);
    if (after === before) return;
    if (after.length === 0) this.bySession.delete(sessionId);
    else this.bySession.set(sessionId, after);
    for (const l of this.listeners) l();
  }

  subscribe = (fn: () => void) => {
    this.listeners.add(fn);
    return () => {
      this.listeners.delete(fn);
    };
  };
}

/** One store per transport: the app has one, each test its own. */
const stores = new WeakMap<Transport, AttachmentStore>();

export function attachmentStore(t: Transport): AttachmentStore {
  let s = stores.get(t);
  if (!s) {
    s = new AttachmentStore();
    stores.set(t, s);
  }
  return s;
}

/** The warnings to show before sending, each once. */
export function attachmentWarnings(list: Attachment[]): string[] {
  return [...new Set(list.flatMap((a) => (a.warning ? [a.warning] : [])))];
}
