import { describe, expect, it } from "vitest";
import type { SandboxInfo } from "../protocol";
import { SANDBOX_MODES, sandboxLabel, sandboxWarns } from "./sandbox";

const info = (over: Partial<SandboxInfo> = {}): SandboxInfo => ({
  mode: "workspace-write",
  network: false,
  available: true,
  always_ask: false,
  note: "Sandbox workspace-write: …",
  ...over,
});

describe("the sandbox badge", () => {
  it("names the mode and the network when commands are confined", () => {
    expect(sandboxLabel(info())).toEqual({ text: "Sandbox: workspace-write · network off", warn: false });
    expect(sandboxLabel(info({ mode: "read-only", network: true }))).toEqual({ text: "Sandbox: read-only · network on", warn: false });
  });

  it("warns when a mode is asked for but this machine cannot confine", () => {
    expect(sandboxLabel(info({ available: false }))).toEqual({ text: "Not sandboxed", warn: true });
    expect(sandboxLabel(info({ mode: "read-only", available: false, network: true }))).toEqual({ text: "Not sandboxed", warn: true });
  });

  it("warns when the sandbox is off, whether or not it could run", () => {
    expect(sandboxLabel(info({ mode: "off" }))).toEqual({ text: "Sandbox: off", warn: true });
    expect(sandboxLabel(info({ mode: "off", available: false }))).toEqual({ text: "Sandbox: off", warn: true });
  });
});

describe("the approval card's sandbox line", () => {
  it("is a warning exactly when the command would run unconfined", () => {
    expect(sandboxWarns(info())).toBe(false);
    expect(sandboxWarns(info({ mode: "read-only", network: true }))).toBe(false);
    expect(sandboxWarns(info({ mode: "off" }))).toBe(true);
    expect(sandboxWarns(info({ available: false }))).toBe(true);
  });
});

describe("the menu's modes", () => {
  it("offers each mode once", () => {
    expect(SANDBOX_MODES.map((m) => m.mode).sort()).toEqual(["off", "read-only", "workspace-write"]);
  });
});
