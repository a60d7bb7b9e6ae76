import { describe, expect, it } from "vitest";
import { mcpStatusText } from "./mcp";

describe("MCP status", () => {
  it("says each state in words", () => {
    expect(mcpStatusText({ state: "connecting" })).toBe("connecting");
    expect(mcpStatusText({ state: "ready", tools: 3 })).toBe("ready, 3 tools");
    expect(mcpStatusText({ state: "ready", tools: 1 })).toBe("ready, 1 tool");
    expect(mcpStatusText({ state: "failed", error: "exited with 1", log_tail: "boom" })).toBe("failed: exited with 1");
    expect(mcpStatusText({ state: "failed", error: "", log_tail: "" })).toBe("failed");
    expect(mcpStatusText({ state: "disabled" })).toBe("disabled");
    expect(mcpStatusText({ state: "not_started" })).toBe("not started");
    expect(mcpStatusText({ state: "needs_login", expired: false })).toBe("needs login");
    expect(mcpStatusText({ state: "needs_login", expired: true })).toBe("login expired");
    expect(mcpStatusText({ state: "needs_login", expired: false, scope: "mcp:write" })).toBe(
      "needs login for more access (mcp:write)",
    );
  });
});
