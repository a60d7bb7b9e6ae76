// The chat's background processes: the strip lists them (running first) with how long
// each has run or how it ended, Stop sends `stop_process`, a `process_update` event lists
// them again, and an open row reads its output every second while it runs.

import { act } from "react";
import { createRoot, type Root } from "react-dom/client";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { AppContext, TransportContext } from "../app/context";
import type { Command, ProcessInfo } from "../protocol";
import { ServerError } from "../transport";
import { fakeApp } from "../test/fakeApp";
import { FakeTransport } from "../test/fakeTransport";
import { OUTPUT_POLL_MS, ProcessesPanel } from "./Processes";

const app = fakeApp();

const NOW = new Date("2026-03-02T10:00:00Z").getTime();

function proc(over: Partial<ProcessInfo> = {}): ProcessInfo {
  return {
    id: 7,
    session_id: 1,
    command: "npm run dev -- --port 5173",
    workdir: "/home/me/site",
    started_at: NOW - 65_000,
    status: "running",
    output_bytes: 0,
    ...over,
  };
}

/** Answers the process commands from its own table; records each call. */
class FakeServer extends FakeTransport {
  processes: ProcessInfo[] = [];
  outputs = new Map<number, string>();
  stopError: string | null = null;
  /** What a stop leaves (the server answers once the process is gone). */
  stopLeaves: "stopped" | "running" = "stopped";
  override answer(c: Command): unknown {
    switch (c.cmd) {
      case "list_processes":
        return { cmd: c.cmd, processes: this.processes.filter((p) => p.session_id === c.session_id) };
      case "process_output": {
        const p = this.processes.find((x) => x.id === c.process_id && x.session_id === c.session_id);
        if (!p) throw new ServerError(`this chat has no background process ${c.process_id}`);
        return { cmd: c.cmd, process: p, output: this.outputs.get(p.id) ?? "" };
      }
      case "stop_process": {
        if (this.stopError) throw new ServerError(this.stopError);
        const p = this.processes.find((x) => x.id === c.process_id && x.session_id === c.session_id)!;
        const done: ProcessInfo =
          this.stopLeaves === "stopped" ? { ...p, status: "stopped", ended: "stopped: it and every process it started were killed" } : p;
        this.set(done);
        return { cmd: c.cmd, process: done };
      }
      default:
        return super.answer(c);
    }
  }
  set(p: ProcessInfo) {
    this.processes = this.processes.some((x) => x.id === p.id) ? this.processes.map((x) => (x.id === p.id ? p : x)) : [...this.processes, p];
  }
}

let container: HTMLDivElement;
let root: Root | null = null;

/** Lets replies land and `ms` of (fake) time pass. */
async function pass(ms = 0) {
  for (let i = 0; i < 3; i++) {
    await act(async () => {
      await vi.advanceTimersByTimeAsync(i === 0 ? ms : 0);
    });
  }
}

async function render(t: FakeServer, sessionId = 1) {
  container = document.createElement("div");
  document.body.appendChild(container);
  root = createRoot(container);
  await act(async () => {
    root!.render(
      <TransportContext.Provider value={t}>
        <AppContext.Provider value={app}>
          <ProcessesPanel sessionId={sessionId} />
        </AppContext.Provider>
      </TransportContext.Provider>,
    );
  });
  await pass();
}

const q = (sel: string, from: ParentNode = document) => from.querySelector(sel) as HTMLElement | null;
const qa = (sel: string, from: ParentNode = document) => [...from.querySelectorAll<HTMLElement>(sel)];
const row = (id: number) => q(`[data-testid='process-row'][data-process-id='${id}']`);

async function click(el: HTMLElement | null) {
  expect(el).not.toBeNull();
  await act(async () => el!.click());
  await pass();
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "Date"] });
  vi.setSystemTime(NOW);
});

afterEach(async () => {
  if (root) await act(async () => root!.unmount());
  root = null;
  container.remove();
  vi.useRealTimers();
});

describe("the processes strip", () => {
  it("is not there while the chat has no process", async () => {
    const t = new FakeServer();
    await render(t);
    expect(t.sent("list_processes")).toEqual([{ cmd: "list_processes", session_id: 1 }]);
    expect(q("[data-testid='processes']")).toBeNull();
  });

  it("lists the chat's processes, running first, with how long each ran or how it ended", async () => {
    const t = new FakeServer();
    t.processes = [
      proc({ id: 3, command: "cargo watch -x test", status: "exited", ended: "exit code 0", started_at: NOW - 600_000 }),
      proc({ id: 4, command: "python3 -m http.server", status: "stopped", ended: "stopped: it and every process it started were killed" }),
      proc({ id: 5, command: "make serve", status: "exited", ended: "exit code 2\nthe sandbox refused: network" }),
      proc(),
      proc({ id: 9, session_id: 2, command: "another chat's" }),
    ];
    await render(t);
    const panel = q("[data-testid='processes']")!;
    expect(panel).not.toBeNull();
    expect(panel.getAttribute("aria-label")).toBe("Background processes");
    expect(q("[data-testid='processes-summary']")!.textContent).toBe("1 running · 3 ended");
    const rows = qa("[data-testid='process-row']");
    expect(rows.map((r) => [r.dataset.processId, r.dataset.status])).toEqual([
      ["7", "running"],
      ["5", "exited"],
      ["4", "stopped"],
      ["3", "exited"],
    ]);
    const states = () => rows.map((r) => q("[data-testid='process-state']", r)!.textContent);
    expect(states()).toEqual(["running · 1 min 5 s", "exit code 2", "stopped", "exit code 0"]);
    expect(rows.map((r) => r.className)).toEqual(["process process-running", "process process-failed", "process process-stopped", "process process-ok"]);
    // The command in full on hover; the state's title says how it ended, whole.
    const command = q("[data-testid='process-command']", rows[0]!)!;
    expect(command.textContent).toBe("npm run dev -- --port 5173");
    expect(command.getAttribute("title")).toBe("npm run dev -- --port 5173");
    expect(q("[data-testid='process-state']", rows[1]!)!.getAttribute("title")).toContain("exit code 2\nthe sandbox refused: network");
    // Stop only for the running one, named for screen readers.
    expect(rows.map((r) => q("[data-testid='process-stop']", r) != null)).toEqual([true, false, false, false]);
    expect(q("[data-testid='process-stop']")!.getAttribute("aria-label")).toBe("Stop npm run dev -- --port 5173");
    // The running time goes on.
    await pass(2000);
    expect(q("[data-testid='process-state']", rows[0]!)!.textContent).toBe("running · 1 min 7 s");
  });

  it("folds away from its header", async () => {
    const t = new FakeServer();
    t.processes = [proc()];
    await render(t);
    const head = q("[data-testid='processes'] .todos-head")!;
    expect(head.getAttribute("aria-expanded")).toBe("true");
    expect(document.getElementById(head.getAttribute("aria-controls")!)).not.toBeNull();
    await click(head);
    expect(head.getAttribute("aria-expanded")).toBe("false");
    expect(q("[data-testid='process-row']")).toBeNull();
    expect(q("[data-testid='processes-summary']")!.textContent).toBe("1 running");
  });

  it("shows a command's controls escaped and markup as text", async () => {
    const t = new FakeServer();
    t.processes = [proc({ command: "echo <img src=x onerror=alert(1)>\u202e; sleep 9" })];
    await render(t);
    expect(q("[data-testid='processes'] img")).toBeNull();
    expect(q("[data-testid='process-command']")!.textContent).toBe("echo <img src=x onerror=alert(1)>\\u{202e}; sleep 9");
  });
});

describe("stopping a process", () => {
  it("sends stop_process with the chat's and the process's ids and shows it stopped", async () => {
    const t = new FakeServer();
    t.processes = [proc({ id: 3, status: "exited", ended: "exit code 0" }), proc({ id: 7 }), proc({ id: 8, command: "tail -f log" })];
    await render(t);
    const stop = q("[data-testid='process-stop']", row(7)!)!;
    stop.focus();
    await click(stop);
    expect(t.sent("stop_process")).toEqual([{ cmd: "stop_process", session_id: 1, process_id: 7 }]);
    expect(row(7)!.dataset.status).toBe("stopped");
    expect(q("[data-testid='process-state']", row(7)!)!.textContent).toBe("stopped");
    expect(q("[data-testid='process-stop']", row(7)!)).toBeNull();
    // The focus stays in the row, on its toggle.
    expect(document.activeElement).toBe(q("[data-testid='process-toggle']", row(7)!));
    expect(q("[data-testid='process-stop']", row(8)!)).not.toBeNull();
    expect(q("[data-testid='process-error']")).toBeNull();
  });

  it("shows a failed stop on the row", async () => {
    const t = new FakeServer();
    t.processes = [proc()];
    t.stopError = "this chat has no background process 7";
    await render(t);
    await click(q("[data-testid='process-stop']"));
    const error = q("[data-testid='process-error']")!;
    expect(error.textContent).toBe("Could not stop it: this chat has no background process 7");
    expect(error.getAttribute("role")).toBe("alert");
    expect(row(7)!.dataset.status).toBe("running");
    expect(q("[data-testid='process-stop']")!.textContent).toBe(" Stop");
  });

  it("says so when the process was still running after the stop", async () => {
    const t = new FakeServer();
    t.processes = [proc()];
    t.stopLeaves = "running";
    await render(t);
    await click(q("[data-testid='process-stop']"));
    expect(q("[data-testid='process-error']")!.textContent).toMatch(/^Could not stop it: it was still running/);
  });
});

describe("a process_update event", () => {
  it("lists the chat's processes again", async () => {
    const t = new FakeServer();
    await render(t);
    expect(q("[data-testid='processes']")).toBeNull();

    // Another chat's process: nothing to do here.
    const theirs = proc({ id: 2, session_id: 2 });
    t.set(theirs);
    await act(async () => t.emit(2, { type: "process_update", process: theirs }));
    await pass();
    expect(t.sent("list_processes")).toHaveLength(1);
    expect(q("[data-testid='processes']")).toBeNull();

    t.set(proc({ id: 6, command: "vite", status: "exited", ended: "exit code 0" }));
    const started = proc();
    t.set(started);
    await act(async () => t.emit(1, { type: "process_update", process: started }));
    await pass();
    expect(t.sent("list_processes")).toEqual([
      { cmd: "list_processes", session_id: 1 },
      { cmd: "list_processes", session_id: 1 },
    ]);
    expect(qa("[data-testid='process-row']").map((r) => r.dataset.processId)).toEqual(["7", "6"]);

    const ended = proc({ status: "exited", ended: "killed by signal 9" });
    t.set(ended);
    await act(async () => t.emit(1, { type: "process_update", process: ended }));
    await pass();
    expect(t.sent("list_processes")).toHaveLength(3);
    expect(row(7)!.dataset.status).toBe("exited");
    expect(q("[data-testid='process-state']", row(7)!)!.textContent).toBe("killed by signal 9");
    expect(q("[data-testid='process-stop']")).toBeNull();
  });
});

describe("a process's output", () => {
  it("is read when its row opens, then every second while it runs and the row is open", async () => {
    const t = new FakeServer();
    t.processes = [proc()];
    t.outputs.set(7, "starting\n");
    await render(t);
    const toggle = q("[data-testid='process-toggle']")!;
    expect(toggle.getAttribute("aria-expanded")).toBe("false");
    expect(t.sent("process_output")).toHaveLength(0);

    await click(toggle);
    expect(toggle.getAttribute("aria-expanded")).toBe("true");
    const body = document.getElementById(toggle.getAttribute("aria-controls")!)!;
    expect(body.dataset.testid).toBe("process-body");
    expect(body.textContent).toContain("/home/me/site");
    expect(t.sent("process_output")).toEqual([{ cmd: "process_output", session_id: 1, process_id: 7 }]);
    expect(q("[data-testid='process-output']")!.textContent).toBe("starting\n");

    t.outputs.set(7, "starting\n\u001b[32mready\u001b[0m in 300 ms\n");
    await pass(OUTPUT_POLL_MS);
    expect(t.sent("process_output")).toHaveLength(2);
    expect(q("[data-testid='process-output']")!.textContent).toBe("starting\nready in 300 ms\n");
    await pass(OUTPUT_POLL_MS);
    expect(t.sent("process_output")).toHaveLength(3);

    // Closed, it is not read any more.
    await click(toggle);
    expect(q("[data-testid='process-output']")).toBeNull();
    await pass(OUTPUT_POLL_MS * 3);
    expect(t.sent("process_output")).toHaveLength(3);
  });

  it("is read no more once the process ended", async () => {
    const t = new FakeServer();
    t.processes = [proc()];
    t.outputs.set(7, "[… 4096 earlier bytes not kept …]\nline 900\n");
    await render(t);
    await click(q("[data-testid='process-toggle']"));
    expect(q("[data-testid='process-output'] .process-output-cut")!.textContent).toBe("[… 4096 earlier bytes not kept …]\n");
    expect(q("[data-testid='process-output']")!.textContent).toBe("[… 4096 earlier bytes not kept …]\nline 900\n");

    // It ends between two reads: the read says so, and the row with it.
    t.set(proc({ status: "exited", ended: "exit code 1", output_bytes: 5000 }));
    t.outputs.set(7, "line 900\nerror: port in use\n");
    await pass(OUTPUT_POLL_MS);
    const reads = t.sent("process_output").length;
    expect(q("[data-testid='process-output']")!.textContent).toBe("line 900\nerror: port in use\n");
    expect(row(7)!.dataset.status).toBe("exited");
    expect(q("[data-testid='process-ended']")!.textContent).toBe("exit code 1");
    await pass(OUTPUT_POLL_MS * 3);
    expect(t.sent("process_output")).toHaveLength(reads);
  });

  it("is read no more once the strip is gone", async () => {
    const t = new FakeServer();
    t.processes = [proc()];
    await render(t);
    await click(q("[data-testid='process-toggle']"));
    expect(q("[data-testid='process-no-output']")!.textContent).toBe("No output yet.");
    const reads = t.sent("process_output").length;
    await act(async () => root!.unmount());
    root = null;
    await act(async () => {
      await vi.advanceTimersByTimeAsync(OUTPUT_POLL_MS * 3);
    });
    expect(t.sent("process_output")).toHaveLength(reads);
  });

  it("follows the bottom unless scrolled up", async () => {
    const t = new FakeServer();
    t.processes = [proc()];
    t.outputs.set(7, "one\n");
    await render(t);
    await click(q("[data-testid='process-toggle']"));
    const box = q("[data-testid='process-output']")!;
    // jsdom lays nothing out: a box 100 px high with 500 px of text.
    Object.defineProperty(box, "scrollHeight", { configurable: true, get: () => 500 });
    Object.defineProperty(box, "clientHeight", { configurable: true, get: () => 100 });
    t.outputs.set(7, "one\ntwo\n");
    await pass(OUTPUT_POLL_MS);
    expect(box.scrollTop).toBe(500);

    box.scrollTop = 100;
    await act(async () => box.dispatchEvent(new Event("scroll")));
    t.outputs.set(7, "one\ntwo\nthree\n");
    await pass(OUTPUT_POLL_MS);
    expect(box.textContent).toBe("one\ntwo\nthree\n");
    expect(box.scrollTop).toBe(100);
  });
});
