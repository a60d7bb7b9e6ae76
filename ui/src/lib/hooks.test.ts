import { describe, expect, it } from "vitest";
import type { HookRun } from "../protocol";
import { blockedPromptReason, durationText, firstLine, isQuiet, outcomeText, quietText, runSummary, scriptName } from "./hooks";

const run = (over: Partial<HookRun> = {}): HookRun => ({
  event: "PreToolUse",
  command: "sh ~/bin/guard.sh",
  source: "user",
  outcome: "ok",
  message: "",
  duration_ms: 12,
  ...over,
});

describe("a hook's script name", () => {
  it("is the file its command runs, past the program that runs it", () => {
    expect(scriptName("sh ~/bin/guard.sh")).toBe("guard.sh");
    expect(scriptName("~/bin/guard.sh")).toBe("guard.sh");
    expect(scriptName('"$CLAUDE_PROJECT_DIR"/.claude/hooks/check.py --strict')).toBe("check.py");
    expect(scriptName("python3 -u /opt/hooks/lint.py")).toBe("lint.py");
    expect(scriptName("/usr/bin/env python3.12 scripts/x.py")).toBe("x.py");
    expect(scriptName('npx prettier --write "$(jq -r .tool_input.file_path)"')).toBe("prettier");
    expect(scriptName("FOO=1 BAR=2 node hooks/notify.js")).toBe("notify.js");
    expect(scriptName("bash -c 'python3 hooks/inner.py'")).toBe("inner.py");
    expect(scriptName('cd "$SKALD_PROJECT_DIR" && ./ci/check.sh')).toBe("check.sh");
    expect(scriptName("C:\\hooks\\guard.cmd")).toBe("guard.cmd");
  });

  it("is the command itself, cut, when it names nothing else", () => {
    expect(scriptName("jq -r .prompt")).toBe("jq");
    expect(scriptName("sh")).toBe("sh");
    expect(scriptName(`sh -c "${"x".repeat(60)}"`)).toBe(`${"x".repeat(39)}…`);
  });
});

describe("a hook's run", () => {
  it("is quiet when it went on and said nothing", () => {
    expect(isQuiet(run())).toBe(true);
    expect(isQuiet(run({ message: "  " }))).toBe(true);
    expect(isQuiet(run({ message: "allow: trusted" }))).toBe(false);
    expect(isQuiet(run({ outcome: "blocked" }))).toBe(false);
    expect(isQuiet(run({ outcome: "error", message: "exit 1" }))).toBe(false);
  });

  it("says how it ended and what it said", () => {
    expect(outcomeText(run())).toBe("");
    expect(outcomeText(run({ message: "allow: trusted" }))).toBe("allow: trusted");
    expect(outcomeText(run({ outcome: "blocked", message: "no rm -rf here" }))).toBe("blocked: no rm -rf here");
    expect(outcomeText(run({ outcome: "error", message: "exit status 1" }))).toBe("failed: exit status 1");
    expect(outcomeText(run({ outcome: "timeout", message: "killed after 10 s (its timeout)" }))).toBe("timed out: killed after 10 s (its timeout)");
    expect(outcomeText(run({ outcome: "blocked" }))).toBe("blocked");
    expect(runSummary(run({ outcome: "blocked", message: "no", source: "project" }))).toBe("PreToolUse hook guard.sh (the project's): blocked: no, 12 ms");
    expect(runSummary(run())).toBe("PreToolUse hook guard.sh (yours), ok, 12 ms");
  });

  it("shows its time and its first line", () => {
    expect(durationText(12)).toBe("12 ms");
    expect(durationText(1430)).toBe("1.4 s");
    expect(durationText(65_000)).toBe("65 s");
    expect(firstLine("one")).toBe("one");
    expect(firstLine("one  \ntwo")).toBe("one …");
  });

  it("folds quiet runs into one line", () => {
    expect(quietText([run()])).toBe("PreToolUse hook ran");
    expect(quietText([run(), run({ event: "PostToolUse" })])).toBe("2 hooks ran");
  });
});

describe("a blocked message", () => {
  it("is known by the error the server sends, with the hook's reason", () => {
    expect(blockedPromptReason("A UserPromptSubmit hook blocked this message: no secrets")).toBe("no secrets");
    expect(blockedPromptReason("The model failed: 500")).toBeNull();
  });
});
