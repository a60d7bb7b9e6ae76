// The MCP servers' prompts and resources, for the composer: read once, and again whenever
// a server's status, tools, resources or prompts change (its `mcp_status` event).

import type { McpPromptInfo, McpResourceInfo } from "../protocol";
import { useCommand, useEvents } from "./context";

export interface McpCatalog {
  prompts: McpPromptInfo[];
  resources: McpResourceInfo[];
}

const NONE: never[] = [];

export function useMcpCatalog(): McpCatalog {
  const [prompts, reloadPrompts] = useCommand({ cmd: "list_mcp_prompts" }, []);
  const [resources, reloadResources] = useCommand({ cmd: "list_mcp_resources" }, []);
  useEvents((_sid, e) => {
    if (e.type !== "mcp_status") return;
    reloadPrompts();
    reloadResources();
  });
  // A server without these commands (or one that failed) offers nothing: no menu, no button.
  return {
    prompts: (prompts.state === "ready" && prompts.value.prompts) || NONE,
    resources: (resources.state === "ready" && resources.value.resources) || NONE,
  };
}
