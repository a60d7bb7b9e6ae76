import { describe, expect, it } from "vitest";
import type { ProcessInfo } from "../protocol";
import { elapsedText, newer, processTone, sortProcesses, stateText, terminalText } from "./processes";

const proc = (over: Partial<ProcessInfo> = {}): ProcessInfo => ({
  id: 1,
  session_id: 1,
  command: "npm run dev",
  workdir: "/w",
  started_at: 1_000_000,
  status: "running",
  output_bytes: 0,
  ...over,
});

describe("a process's row", () => {
  it("says how long it has run", () => {
    expect(elapsedText(-5)).toBe("0 s");
    expect(elapsedText(4_900)).toBe("4 s");
    expect(elapsedText(125_000)).toBe("2 min 5 s");
    expect(elapsedText(3_780_000)).toBe("1 h 3 min");
    expect(stateText(proc(), 1_000_000 + 61_000)).toBe("running · 1 min 1 s");
  });

  it("says how it ended, on one line", () => {
    expect(stateText(proc({ status: "exited", ended: "exit code 0" }), 0)).toBe("exit code 0");
    expect(stateText(proc({ status: "exited", ended: "exit code 1\nthe sandbox refused: network" }), 0)).toBe("exit code 1");
    expect(stateText(proc({ status: "exited" }), 0)).toBe("exited");
    expect(stateText(proc({ status: "stopped", ended: "stopped: it and every process it started were killed" }), 0)).toBe("stopped");
  });

  it("tells a clean exit from a failure", () => {
    expect(processTone(proc())).toBe("running");
    expect(processTone(proc({ status: "exited", ended: "exit code 0" }))).toBe("ok");
    expect(processTone(proc({ status: "exited", ended: "exit code 0\nnote" }))).toBe("ok");
    expect(processTone(proc({ status: "exited", ended: "exit code 01" }))).toBe("failed");
    expect(processTone(proc({ status: "exited", ended: "killed by signal 9" }))).toBe("failed");
    expect(processTone(proc({ status: "stopped" }))).toBe("stopped");
  });
});

describe("the list", () => {
  it("puts running ones first in the order they started, then the latest ended", () => {
    const list = [proc({ id: 1, status: "exited" }), proc({ id: 2 }), proc({ id: 3, status: "stopped" }), proc({ id: 4 })];
    expect(sortProcesses(list).map((p) => p.id)).toEqual([2, 4, 3, 1]);
  });

  it("keeps the later of two reports", () => {
    const early = proc({ output_bytes: 10 });
    const later = proc({ output_bytes: 20 });
    const ended = proc({ status: "exited", ended: "exit code 0", output_bytes: 15 });
    expect(newer(early, later)).toBe(later);
    expect(newer(later, early)).toBe(later);
    expect(newer(later, ended)).toBe(ended);
    expect(newer(ended, later)).toBe(ended);
  });
});

describe("output as a terminal shows it", () => {
  it("drops colours and other escape sequences", () => {
    expect(terminalText("\u001b[1;32mready\u001b[0m in \u001b[2m300 ms\u001b[22m\n")).toBe("ready in 300 ms\n");
    expect(terminalText("\u001b]0;vite\u0007title\n\u001b]8;;http://x\u001b\\link\u001b]8;;\u001b\\\n")).toBe("title\nlink\n");
    expect(terminalText("a\u001b[2K\u001b[1Gb")).toBe("ab");
  });

  it("shows a line rewritten with returns as last written", () => {
    expect(terminalText("10%\r50%\r100%\ndone\r\n")).toBe("100%\ndone\n");
    expect(terminalText("abcdef\rxy")).toBe("xycdef");
  });

  it("leaves other controls for the escaping", () => {
    expect(terminalText("bell\u0007 here")).toBe("bell\u0007 here");
  });
});
