// How a chat's command sandbox is shown: the header's badge, its menu and the line on a
// shell command's approval card (docs/sandbox.md).

import type { SandboxInfo, SandboxMode } from "../protocol";

/** The modes in the order the menu offers them, each with a few words on what it allows. */
export const SANDBOX_MODES: { mode: SandboxMode; title: string; detail: string }[] = [
  { mode: "read-only", title: "Read-only", detail: "commands write only a private temporary folder" },
  { mode: "workspace-write", title: "Workspace write", detail: "commands also write this chat's folder and its grants" },
  { mode: "off", title: "Off", detail: "commands run as you, each after your approval" },
];

/**
 * Whether commands run unconfined: the sandbox is off, or it is asked for but this machine
 * cannot give it (then every command asks and runs as the user).
 */
export function sandboxWarns(info: SandboxInfo): boolean {
  return info.mode === "off" || !info.available;
}

/** The badge's words, and whether they are a warning. */
export function sandboxLabel(info: SandboxInfo): { text: string; warn: boolean } {
  if (info.mode === "off") return { text: "Sandbox: off", warn: true };
  if (!info.available) return { text: "Not sandboxed", warn: true };
  return { text: `Sandbox: ${info.mode} · network ${info.network ? "on" : "off"}`, warn: false };
}
