// MCP prompts and resources in the composer: `/server:prompt ARGS` at the start of a
// message runs a server's prompt, `@server:uri` anywhere attaches a resource (the engine
// expands both when the message is sent; docs/mcp.md "Prompts" and "Resources").

import type { McpPromptInfo, McpResourceInfo } from "../protocol";

/** `server:name`, as typed after the "/". */
export const promptId = (p: McpPromptInfo) => `${p.server}:${p.name}`;

/** What follows the "/" while the text is a slash command still being typed (no space yet). */
export function slashQuery(text: string): string | null {
  if (!text.startsWith("/") || /\s/.test(text)) return null;
  return text.slice(1);
}

/** The prompts whose `server:name` contains `query` (any case), in the server's order. */
export function matchPrompts(prompts: McpPromptInfo[], query: string): McpPromptInfo[] {
  const q = query.toLowerCase();
  return prompts.filter((p) => promptId(p).toLowerCase().includes(q));
}

/** The prompt a message runs: it starts with `/server:name` and a space (or a new line). */
export function pickedPrompt(text: string, prompts: McpPromptInfo[]): McpPromptInfo | null {
  const m = /^\/(\S+)\s/.exec(text);
  if (!m) return null;
  return prompts.find((p) => promptId(p) === m[1]) ?? null;
}

/** One argument in the hint: `file* — the file to review` (* = required). */
export function argumentText(a: McpPromptInfo["arguments"][number]): string {
  const name = a.required ? `${a.name}*` : a.name;
  return a.description ? `${name} — ${a.description}` : name;
}

/** `@server:uri `: the mention that attaches a resource to the message. */
export const resourceMention = (server: string, uri: string) => `@${server}:${uri} `;

export const resourceLabel = (r: McpResourceInfo) => r.title || r.name || r.uri;

/** The resources whose title, name, server, uri or description contain `query` (any case). */
export function matchResources(resources: McpResourceInfo[], query: string): McpResourceInfo[] {
  const q = query.trim().toLowerCase();
  if (q === "") return resources;
  return resources.filter((r) => [r.title ?? "", r.name, r.server, r.uri, r.description].some((s) => s.toLowerCase().includes(q)));
}

/**
 * `insert` put into `text` in place of the selection `start..end`, with a space before it
 * when it would touch a word, and without its trailing space when one already follows.
 * Returns the new text and where the caret goes (after the insertion).
 */
export function insertAt(text: string, start: number, end: number, insert: string): { text: string; caret: number } {
  const before = text.slice(0, start);
  const after = text.slice(end);
  let piece = insert;
  if (before !== "" && !/\s$/.test(before)) piece = ` ${piece}`;
  // A space already follows: use it rather than doubling it, and put the caret after it.
  const reuse = piece.endsWith(" ") && after.startsWith(" ") ? 1 : 0;
  if (reuse) piece = piece.slice(0, -1);
  return { text: before + piece + after, caret: before.length + piece.length + reuse };
}

/** The server of an MCP tool's name, `mcp__SERVER__TOOL` (server names hold no `__`). */
export function mcpServerOf(toolName: string): string | null {
  if (!toolName.startsWith("mcp__")) return null;
  const rest = toolName.slice("mcp__".length);
  const at = rest.indexOf("__");
  return at > 0 ? rest.slice(0, at) : null;
}

export type ResultPart = { text: string } | { link: { uri: string; name: string } };

const LINK_LINE = /^\[resource link (\S+) \((.*)\)\]$/;

/**
 * An MCP tool's result split at its `[resource link URI (NAME)]` lines (how the engine
 * writes a resource link block); the text around them is kept as it is, new lines included.
 */
export function splitResourceLinks(result: string): ResultPart[] {
  if (!result.includes("[resource link ")) return [{ text: result }];
  const parts: ResultPart[] = [];
  let buf = "";
  const lines = result.split("\n");
  lines.forEach((line, i) => {
    const last = i === lines.length - 1;
    const m = LINK_LINE.exec(line.trim());
    if (m) {
      if (buf) parts.push({ text: buf });
      parts.push({ link: { uri: m[1]!, name: m[2]! } });
      buf = last ? "" : "\n";
    } else {
      buf += last ? line : `${line}\n`;
    }
  });
  if (buf) parts.push({ text: buf });
  return parts;
}
