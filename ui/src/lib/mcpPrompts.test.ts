import { describe, expect, it } from "vitest";
import type { McpPromptInfo } from "../protocol";
import { argumentText, insertAt, matchPrompts, mcpServerOf, pickedPrompt, slashQuery, splitResourceLinks } from "./mcpPrompts";

const prompt = (server: string, name: string): McpPromptInfo => ({ server, name, title: null, description: "", arguments: [] });
const prompts = [prompt("git", "review"), prompt("git", "commit-msg"), prompt("docs", "summarise")];

describe("slash commands", () => {
  it("are a query only while no space is typed", () => {
    expect(slashQuery("/")).toBe("");
    expect(slashQuery("/git:re")).toBe("git:re");
    expect(slashQuery("/git:review ")).toBeNull();
    expect(slashQuery("/a\nb")).toBeNull();
    expect(slashQuery("hello /git")).toBeNull();
  });

  it("match server:name by substring, in any case", () => {
    expect(matchPrompts(prompts, "").map((p) => p.name)).toEqual(["review", "commit-msg", "summarise"]);
    expect(matchPrompts(prompts, "GIT:").map((p) => p.name)).toEqual(["review", "commit-msg"]);
    expect(matchPrompts(prompts, "s:sum").map((p) => p.name)).toEqual(["summarise"]);
    expect(matchPrompts(prompts, "nothing")).toEqual([]);
  });

  it("name the picked prompt once a space or new line follows it", () => {
    expect(pickedPrompt("/git:review ", prompts)?.name).toBe("review");
    expect(pickedPrompt("/git:review\nmore", prompts)?.name).toBe("review");
    expect(pickedPrompt("/git:review", prompts)).toBeNull();
    expect(pickedPrompt("/git:reviewer x", prompts)).toBeNull();
  });

  it("describe an argument, * for a required one", () => {
    expect(argumentText({ name: "file", description: "the file to review", required: true })).toBe("file* — the file to review");
    expect(argumentText({ name: "style", description: "", required: false })).toBe("style");
  });
});

describe("inserting a mention", () => {
  it("goes at the caret, spaced from the words around it", () => {
    expect(insertAt("", 0, 0, "@d:u ")).toEqual({ text: "@d:u ", caret: 5 });
    expect(insertAt("see", 3, 3, "@d:u ")).toEqual({ text: "see @d:u ", caret: 9 });
    expect(insertAt("see please", 3, 3, "@d:u ")).toEqual({ text: "see @d:u please", caret: 9 });
    expect(insertAt("see XX", 4, 6, "@d:u ")).toEqual({ text: "see @d:u ", caret: 9 });
    expect(insertAt("line\n", 5, 5, "@d:u ")).toEqual({ text: "line\n@d:u ", caret: 10 });
  });
});

describe("MCP tool results", () => {
  it("name their server", () => {
    expect(mcpServerOf("mcp__docs__search")).toBe("docs");
    expect(mcpServerOf("mcp__my_srv__get__thing")).toBe("my_srv");
    expect(mcpServerOf("read_file")).toBeNull();
    expect(mcpServerOf("mcp__broken")).toBeNull();
  });

  it("split at their resource link lines", () => {
    expect(splitResourceLinks("plain\ntext")).toEqual([{ text: "plain\ntext" }]);
    expect(splitResourceLinks("Found:\n[resource link file:///a.md (Guide (old))]\n[resource link db://t/1 (Row)]\nend")).toEqual([
      { text: "Found:\n" },
      { link: { uri: "file:///a.md", name: "Guide (old)" } },
      { text: "\n" },
      { link: { uri: "db://t/1", name: "Row" } },
      { text: "\nend" },
    ]);
    expect(splitResourceLinks("[resource link x://y (Y)]")).toEqual([{ link: { uri: "x://y", name: "Y" } }]);
  });
});
