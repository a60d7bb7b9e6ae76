// The one fake transport of the UI's unit tests: it records every command, answers each
// with what a test's subclass computes (or never), can hold replies back to deliver them
// out of order, and pushes events and connection statuses to the app's listeners.
//
//   class Server extends FakeTransport {
//     tex = OFFLINE;
//     override answer(c: Command): unknown {
//       if (c.cmd === "settings") return { cmd: c.cmd, ...SETTINGS, tex: this.tex };
//       return super.answer(c); // no reply, ever
//     }
//   }

import type { Command, Event, OpenTarget } from "../protocol";
import type { ConnectionStatus, EventHandler, ReplyOf, StatusHandler, Transport } from "../transport";

/** A reply that never comes: a request left pending. */
export function pending(): Promise<never> {
  return new Promise(() => {});
}

export class FakeTransport implements Transport {
  /** Every command, in the order sent. */
  commands: Command[] = [];
  /**
   * Delays replies: a reply is computed when its request arrives (as the service does) and
   * delivered once the promise this returns settles; `null` (from here or for every
   * request) delivers it at once.
   */
  hold: ((command: Command) => Promise<void> | null) | null = null;
  /** The status a listener is told at once when it subscribes; `null`: none is reported. */
  status: ConnectionStatus | null = null;
  private eventHandlers: EventHandler[] = [];
  private statusHandlers: StatusHandler[] = [];
  private openHandlers: ((target: OpenTarget) => void)[] = [];

  /**
   * The reply to `command`: a reply, a promise of one, or a throw (a failure — throw a
   * `ServerError` for the server's own). By default none ever comes.
   */
  answer(_command: Command): unknown {
    return pending();
  }

  call<C extends Command>(command: C): Promise<ReplyOf<C>> {
    this.commands.push(command);
    let deliver: () => Promise<unknown>;
    try {
      const reply = this.answer(command);
      deliver = () => Promise.resolve(reply);
    } catch (e) {
      deliver = () => Promise.reject(e);
    }
    const gate = this.hold?.(command);
    return (gate ? gate.then(deliver) : deliver()) as Promise<ReplyOf<C>>;
  }

  /** The commands sent of one kind. */
  sent<K extends Command["cmd"]>(cmd: K): Extract<Command, { cmd: K }>[] {
    return this.commands.filter((c): c is Extract<Command, { cmd: K }> => c.cmd === cmd);
  }

  /** How many commands of one kind were sent. */
  count(cmd: Command["cmd"]): number {
    return this.sent(cmd).length;
  }

  onEvent(fn: EventHandler) {
    this.eventHandlers.push(fn);
    return () => {
      this.eventHandlers = this.eventHandlers.filter((h) => h !== fn);
    };
  }

  /** Pushes an event to every listener, as the server does (`sessionId` null: not a chat's). */
  emit(sessionId: number | null, event: unknown) {
    for (const h of this.eventHandlers) h(sessionId, event as Event);
  }

  onStatus(fn: StatusHandler) {
    this.statusHandlers.push(fn);
    if (this.status) fn(this.status);
    return () => {
      this.statusHandlers = this.statusHandlers.filter((h) => h !== fn);
    };
  }

  /** The connection's status changes (a drop, a reconnect). */
  setStatus(status: ConnectionStatus) {
    this.status = status;
    for (const h of this.statusHandlers) h(status);
  }

  onOpen(fn: (target: OpenTarget) => void) {
    this.openHandlers.push(fn);
    return () => {
      this.openHandlers = this.openHandlers.filter((h) => h !== fn);
    };
  }

  /** What the desktop shell asks to show (a clicked notification). */
  open(target: OpenTarget) {
    for (const h of this.openHandlers) h(target);
  }

  close() {}
}
