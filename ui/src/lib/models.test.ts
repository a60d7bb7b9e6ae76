import { describe, expect, it } from "vitest";
import type { ModelOption } from "../protocol";
import { choiceLabel, commandSuggestions, offersEffort, parseChatCommand, resolveModel, switchEffort, switchModel } from "./models";

const MODELS: ModelOption[] = [
  { label: "openai/gpt-4.1", sees_images: true, takes_effort: false, default: true },
  { label: "openai/o3-mini", sees_images: false, takes_effort: true, default: false },
  { label: "openrouter/openai/o3-mini", sees_images: false, takes_effort: true, default: false },
  { label: "ollama/qwen3", sees_images: false, takes_effort: true, default: false },
];

describe("the composer's commands", () => {
  it("reads /model, /effort, /plan and /act, and leaves any other message alone", () => {
    expect(parseChatCommand("/model")).toEqual({ kind: "open_picker" });
    expect(parseChatCommand("  /model  \n")).toEqual({ kind: "open_picker" });
    expect(parseChatCommand("/model openai/o3-mini")).toEqual({ kind: "model", model: "openai/o3-mini" });
    expect(parseChatCommand("/model Default")).toEqual({ kind: "model", model: null });
    expect(parseChatCommand("/model a b")?.kind).toBe("invalid");
    expect(parseChatCommand("/effort High")).toEqual({ kind: "effort", effort: "high" });
    expect(parseChatCommand("/effort default")).toEqual({ kind: "effort", effort: null });
    expect(parseChatCommand("/effort")?.kind).toBe("invalid");
    expect(parseChatCommand("/effort max")?.kind).toBe("invalid");
    expect(parseChatCommand(" /plan ")).toEqual({ kind: "mode", mode: "plan" });
    expect(parseChatCommand("/act")).toEqual({ kind: "mode", mode: "act" });
    expect(parseChatCommand("/plan the refactor")?.kind).toBe("invalid");
    for (const text of ["/models", "/modelx y", "hello /model", "/git:review", "/effortless", "/planning", "/action"]) expect(parseChatCommand(text)).toBeNull();
  });

  it("suggests the commands, then the models or efforts", () => {
    expect(commandSuggestions("/", MODELS).map((s) => s.name)).toEqual(["model", "effort", "plan", "act"]);
    expect(commandSuggestions("/MOD", MODELS)).toEqual([{ kind: "command", name: "model" }]);
    expect(commandSuggestions("/pl", MODELS)).toEqual([{ kind: "command", name: "plan" }]);
    expect(commandSuggestions("/model o3", MODELS).map((s) => s.kind === "value" && s.value)).toEqual(["openai/o3-mini", "openrouter/openai/o3-mini"]);
    expect(commandSuggestions("/model de", MODELS)).toEqual([{ kind: "value", name: "model", value: "default", detail: "use the configured model (openai/gpt-4.1)" }]);
    expect(commandSuggestions("/effort ", null).map((s) => s.kind === "value" && s.value)).toEqual(["low", "medium", "high", "default"]);
    // Past the argument, or not a command: nothing.
    expect(commandSuggestions("/model o3 x", MODELS)).toEqual([]);
    expect(commandSuggestions("model", MODELS)).toEqual([]);
  });

  it("resolves a bare name only when one listed model has it", () => {
    expect(resolveModel("gpt-4.1", MODELS)).toBe("openai/gpt-4.1");
    expect(resolveModel(" qwen3 ", MODELS)).toBe("ollama/qwen3");
    // openai/o3-mini's name is o3-mini; openrouter's is openai/o3-mini: one each.
    expect(resolveModel("o3-mini", MODELS)).toBe("openai/o3-mini");
    expect(resolveModel("gpt-5", MODELS)).toBe("gpt-5");
    expect(resolveModel("anthropic/claude", MODELS)).toBe("anthropic/claude");
  });
});

describe("a chat's choice", () => {
  it("keeps the effort only for a model known to take one", () => {
    const high = { model: "openai/o3-mini", effort: "high" as const };
    expect(switchModel(high, "ollama/qwen3", MODELS)).toEqual({ model: "ollama/qwen3", effort: "high" });
    expect(switchModel(high, "openai/gpt-4.1", MODELS)).toEqual({ model: "openai/gpt-4.1" });
    expect(switchModel(high, "anthropic/claude-opus-4-1", MODELS)).toEqual({ model: "anthropic/claude-opus-4-1" });
    // The default takes none.
    expect(switchModel(high, null, MODELS)).toEqual({});
    expect(switchModel(high, null, [{ ...MODELS[0]!, takes_effort: true }])).toEqual({ effort: "high" });
    expect(switchEffort(high, null)).toEqual({ model: "openai/o3-mini" });
    expect(switchEffort({}, "low")).toEqual({ effort: "low" });
  });

  it("offers an effort where the model takes one, or is not listed", () => {
    expect(offersEffort("openai/gpt-4.1", MODELS)).toBe(false);
    expect(offersEffort("openai/o3-mini", MODELS)).toBe(true);
    expect(offersEffort("anthropic/claude-opus-4-1", MODELS)).toBe(true);
    expect(offersEffort(null, MODELS)).toBe(false);
  });

  it("is named on the button by the model's name, the default marked", () => {
    expect(choiceLabel({}, MODELS)).toBe("gpt-4.1 (default)");
    expect(choiceLabel({}, null)).toBe("Default model");
    expect(choiceLabel({ model: "openai/o3-mini", effort: "medium" }, MODELS)).toBe("o3-mini · medium");
    expect(choiceLabel({ model: "openrouter/meta-llama/llama-3.3-70b" }, MODELS)).toBe("meta-llama/llama-3.3-70b");
  });
});
