import { describe, expect, it } from "vitest";
import type { InstructionFile, TurnContext } from "../protocol";
import { chipLabel, contextSummary, fileState, homeOf, hooksCount, hooksState, relativeTo, shortDir, shortPath, sizeText } from "./instructions";

const file = (over: Partial<InstructionFile> = {}): InstructionFile => ({
  path: "/home/me/paper/AGENTS.md",
  source: "project",
  bytes: 2100,
  included: 2100,
  note: "",
  ...over,
});

const ctx = (over: Partial<TurnContext> = {}): TurnContext => ({ instructions: [], skills: [], project_root: "/home/me/paper", ...over });

describe("an AGENTS.md file's size", () => {
  it("is the file's when given whole", () => {
    expect(fileState(file())).toBe("whole");
    expect(sizeText(file())).toBe("2.1 kB");
    expect(sizeText(file({ bytes: 120, included: 120 }))).toBe("120 B");
  });

  it("says how much of a cut file was given", () => {
    const f = file({ bytes: 40_000, included: 1200, note: "cut to 1200 of 40000 bytes: the AGENTS.md files together are limited to 32 KiB" });
    expect(fileState(f)).toBe("cut");
    expect(sizeText(f)).toBe("1.2 kB of 40.0 kB");
  });

  it("says a file left out or not read was not given", () => {
    expect(fileState(file({ bytes: 9000, included: 0, note: "left out: …" }))).toBe("omitted");
    expect(sizeText(file({ bytes: 9000, included: 0, note: "left out: …" }))).toBe("not given (9.0 kB)");
    const refused = file({ bytes: 0, included: 0, note: "not read: it is a link to a file outside the project" });
    expect(fileState(refused)).toBe("omitted");
    expect(sizeText(refused)).toBe("not given");
    // An empty file is given whole.
    expect(fileState(file({ bytes: 0, included: 0 }))).toBe("whole");
  });
});

describe("the header chip", () => {
  it("counts the files given", () => {
    expect(chipLabel(ctx({ instructions: [file(), file({ path: "/home/me/paper/ch/AGENTS.md" })] }))).toEqual({ text: "AGENTS.md ×2", muted: false, warn: false, hooks: null });
  });

  it("warns when a file was cut or not read, and counts only those given", () => {
    const c = ctx({ instructions: [file({ bytes: 0, included: 0, note: "not read: …" }), file()] });
    expect(chipLabel(c)).toEqual({ text: "AGENTS.md ×1", muted: false, warn: true, hooks: null });
    expect(chipLabel(ctx({ instructions: [file({ bytes: 0, included: 0, note: "not read: …" })] }))).toEqual({ text: "AGENTS.md not read", muted: false, warn: true, hooks: null });
    expect(contextSummary(c)).toBe("Given to the agent: 1 AGENTS.md file and 0 skills; 1 file cut or not read");
  });

  it("names skills when there are only skills, and is muted with nothing", () => {
    const skill = { name: "release", description: "Cut a release", path: "/home/me/paper/.agents/skills/release/SKILL.md", source: "project" as const };
    expect(chipLabel(ctx({ skills: [skill] }))).toEqual({ text: "Skills ×1", muted: false, warn: false, hooks: null });
    expect(chipLabel(ctx())).toEqual({ text: "Context", muted: true, warn: false, hooks: null });
    expect(chipLabel(null)).toEqual({ text: "Context", muted: true, warn: false, hooks: null });
    expect(contextSummary(ctx())).toBe("No AGENTS.md files or skills are given to the agent");
    expect(contextSummary(ctx({ instructions: [file(), file()], skills: [skill] }))).toBe("Given to the agent: 2 AGENTS.md files and 1 skill");
  });
});

describe("a project's hooks", () => {
  const hooks = (approved: boolean, n = 2) => ({ path: "/home/me/paper/.skald/hooks.json", sha256: "ab12", approved, hooks: n, files: [".skald/hooks.json"] });

  it("mark the chip while they wait for approval, and say so", () => {
    const c = ctx({ instructions: [file()], project_hooks: hooks(false) });
    expect(hooksState(c)).toBe("pending");
    expect(chipLabel(c)).toEqual({ text: "AGENTS.md ×1", muted: false, warn: false, hooks: "pending" });
    expect(contextSummary(c)).toBe("Given to the agent: 1 AGENTS.md file and 0 skills; the project's 2 hooks wait for your approval");
    expect(contextSummary(ctx({ project_hooks: hooks(false, 1) }))).toBe("No AGENTS.md files or skills are given to the agent; the project's 1 hook waits for your approval");
  });

  it("name the chip when there is nothing else, approved or not", () => {
    expect(chipLabel(ctx({ project_hooks: hooks(false) }))).toEqual({ text: "Hooks ×2", muted: false, warn: false, hooks: "pending" });
    expect(chipLabel(ctx({ project_hooks: hooks(true, 1) }))).toEqual({ text: "Hooks ×1", muted: false, warn: false, hooks: "approved" });
    expect(contextSummary(ctx({ project_hooks: hooks(true, 1) }))).toBe("No AGENTS.md files or skills are given to the agent; the project's 1 hook approved");
    expect(hooksCount(3)).toBe("3 hooks");
  });

  it("count for nothing in a file that configures none (or could not be read)", () => {
    const c = ctx({ project_hooks: hooks(false, 0) });
    expect(hooksState(c)).toBeNull();
    expect(chipLabel(c)).toEqual({ text: "Context", muted: true, warn: false, hooks: null });
    expect(contextSummary(c)).toBe("No AGENTS.md files or skills are given to the agent");
  });
});

describe("paths", () => {
  it("are relative to a folder only inside it", () => {
    expect(relativeTo("/home/me/paper/AGENTS.md", "/home/me/paper")).toBe("AGENTS.md");
    expect(relativeTo("/home/me/paper/AGENTS.md", "/home/me/paper/")).toBe("AGENTS.md");
    expect(relativeTo("/home/me/paper", "/home/me/paper")).toBe("");
    expect(relativeTo("/home/me/paperback/AGENTS.md", "/home/me/paper")).toBeNull();
    expect(relativeTo("/AGENTS.md", "/")).toBeNull();
    expect(relativeTo("C:\\Users\\me\\paper\\AGENTS.md", "C:\\Users\\me\\paper")).toBe("AGENTS.md");
  });

  it("find home from the person's own files, else from where it usually is", () => {
    const user = (path: string) => ctx({ project_root: "/srv/paper", instructions: [file({ path, source: "user" })] });
    expect(homeOf(user("/root/.config/skald/AGENTS.md"))).toBe("/root");
    expect(homeOf(user("/Users/me/Library/Application Support/skald/AGENTS.md"))).toBe("/Users/me");
    expect(homeOf(ctx({ project_root: "/srv/x", skills: [{ name: "n", description: "", path: "/var/home/me/.agents/skills/n/SKILL.md", source: "user" }] }))).toBe("/var/home/me");
    expect(homeOf(ctx({ project_root: "/home/me/paper" }))).toBe("/home/me");
    expect(homeOf(ctx({ project_root: "/srv/paper" }))).toBeNull();
  });

  it("are shown relative to the project, else to home", () => {
    const home = "/home/me";
    expect(shortPath("/home/me/paper/chapters/AGENTS.md", "/home/me/paper", home)).toBe("chapters/AGENTS.md");
    expect(shortPath("/home/me/.config/skald/AGENTS.md", "/home/me/paper", home)).toBe("~/.config/skald/AGENTS.md");
    expect(shortPath("/etc/AGENTS.md", "/home/me/paper", home)).toBe("/etc/AGENTS.md");
    expect(shortPath("/home/me/.config/skald/AGENTS.md", "/home/me/paper", null)).toBe("/home/me/.config/skald/AGENTS.md");
    expect(shortDir("/home/me/paper", home)).toBe("~/paper");
    expect(shortDir("/home/me", home)).toBe("~");
    expect(shortDir("/srv/paper", home)).toBe("/srv/paper");
  });
});
