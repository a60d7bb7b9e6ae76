// An MCP server's status in words, for the Settings screen.

import type { McpStatus } from "../protocol";

/** "connecting", "ready, 3 tools", "failed: <error>", "disabled", "not started",
 * "needs login" (and why), as the engine's `McpStatus::describe` says them. */
export function mcpStatusText(status: McpStatus): string {
  switch (status.state) {
    case "connecting":
      return "connecting";
    case "ready":
      return `ready, ${status.tools} ${status.tools === 1 ? "tool" : "tools"}`;
    case "failed":
      return status.error ? `failed: ${status.error}` : "failed";
    case "disabled":
      return "disabled";
    case "not_started":
      return "not started";
    case "needs_login":
      if (status.scope) return `needs login for more access (${status.scope})`;
      return status.expired ? "login expired" : "needs login";
    default:
      return status satisfies never;
  }
}
