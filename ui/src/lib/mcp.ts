// An MCP server's status in words, for the Settings screen.

import type { McpStatus } from "../protocol";

/** "connecting", "ready, 3 tools", "failed: <error>", "disabled", "not started". */
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
    default:
      return status satisfies never;
  }
}
