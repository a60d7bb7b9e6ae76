import { describe, expect, it } from "vitest";
import { argumentFields, escapeControls, escapeControlsInline, isHiddenControl, segments } from "./visible";

describe("escapeControls", () => {
  it("leaves ordinary text alone", () => {
    for (const s of ["cargo test -p skald-api", "echo 'a\\nb' | sed 's/\\\\/x/'", "line one\n\tline two", "Привет, 世界! 🚀 é", ""]) {
      expect(escapeControls(s)).toBe(s);
    }
  });

  it("escapes terminal controls, C0, DEL and C1", () => {
    expect(escapeControls("echo ok\u001b[2K\u001b[1A\rrm -rf ~")).toBe("echo ok\\x1b[2K\\x1b[1A\\rrm -rf ~");
    expect(escapeControls("a\u0000b\u0007c\u007f")).toBe("a\\x00b\\x07c\\x7f");
    expect(escapeControls("x\u009b2Jy\u0085")).toBe("x\\u{9b}2Jy\\u{85}");
  });

  it("escapes bidi controls and invisible characters", () => {
    expect(escapeControls("ls \u202etxt.exe")).toBe("ls \\u{202e}txt.exe");
    for (const cp of [0x200b, 0x200c, 0x200d, 0x200e, 0x200f, 0x202a, 0x202d, 0x2066, 0x2067, 0x2068, 0x2069, 0x2028, 0x2029, 0x2060, 0xfeff, 0x61c, 0xad, 0xe0041]) {
      expect(escapeControls(`a${String.fromCodePoint(cp)}b`)).toBe(`a\\u{${cp.toString(16)}}b`);
    }
    expect(escapeControls("a\ud800b")).toBe("a\\u{d800}b");
  });

  it("keeps lines, or escapes them inline", () => {
    const s = "first\nsecond\tthird\r\n";
    expect(escapeControls(s)).toBe("first\nsecond\tthird\\r\n");
    expect(escapeControlsInline(s)).toBe("first\\nsecond\\tthird\\r\\n");
  });

  it("leaves nothing hidden and is idempotent", () => {
    let all = "";
    for (let cp = 0; cp < 0x30000; cp++) all += String.fromCodePoint(cp);
    for (let cp = 0xe0000; cp < 0xe0200; cp++) all += String.fromCodePoint(cp);
    const once = escapeControls(all);
    expect([...once].filter((ch) => isHiddenControl(ch.codePointAt(0)!))).toEqual([]);
    expect(escapeControls(once)).toBe(once);
  });

  it("marks escapes as segments of their own", () => {
    expect(segments("a\u001bb\u202e")).toEqual([
      { text: "a", escape: false },
      { text: "\\x1b", escape: true },
      { text: "b", escape: false },
      { text: "\\u{202e}", escape: true },
    ]);
  });
});

describe("argumentFields", () => {
  it("shows string arguments whole and the rest as JSON", () => {
    const command = "echo one\n" + "x".repeat(300) + "\nrm -rf ./y";
    expect(argumentFields({ command, timeout: 30, env: { A: "1" } })).toEqual([
      { key: "command", text: command },
      { key: "timeout", text: "30" },
      { key: "env", text: '{\n  "A": "1"\n}' },
    ]);
    expect(argumentFields("just text")).toEqual([{ key: null, text: "just text" }]);
    expect(argumentFields(undefined)).toEqual([]);
  });
});
