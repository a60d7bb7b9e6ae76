import { describe, expect, it } from "vitest";
import { escapeHtml, highlightCode, splitHighlightedLines } from "./highlight";

describe("highlighting", () => {
  it("escapes unknown languages", () => {
    expect(highlightCode("<a>&", "no-such-language")).toBe("&lt;a&gt;&amp;");
    expect(escapeHtml(`"'`)).toBe("&quot;&#39;");
  });

  it("splits highlighted html into lines, reopening spans across newlines", () => {
    const lines = splitHighlightedLines('<span class="c">/* a\nb */</span>\nx');
    expect(lines).toEqual(['<span class="c">/* a</span>', '<span class="c">b */</span>', "x"]);
  });

  it("keeps line count equal to the source's", () => {
    const src = "fn main() {\n    let s = \"x\";\n}\n";
    const lines = splitHighlightedLines(highlightCode(src, "rust"));
    expect(lines).toHaveLength(4);
    expect(lines[1]).toContain("let");
  });
});
