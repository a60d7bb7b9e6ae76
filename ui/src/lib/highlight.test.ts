import { beforeAll, describe, expect, it } from "vitest";
import { escapeHtml, highlightCode, highlightWithin, highlighterReady, loadHighlighter, splitHighlightedLines } from "./highlight";

describe("highlighting", () => {
  it("shows code plain until highlight.js is loaded, and colours blocks in place when it arrives", async () => {
    expect(highlighterReady()).toBe(false);
    expect(highlightCode("let x = 1;", "rust")).toBe("let x = 1;");
    const root = document.createElement("div");
    root.innerHTML = '<pre><code class="language-rust">let x = 1;</code></pre><pre><code>plain &amp; more</code></pre>';
    document.body.appendChild(root);
    highlightWithin(root);
    expect(root.querySelector(".hljs-keyword")).toBeNull();
    await loadHighlighter();
    await Promise.resolve();
    expect(root.querySelector("code.language-rust .hljs-keyword")?.textContent).toBe("let");
    expect(root.querySelectorAll("code")[1]?.textContent).toBe("plain & more");
    expect(highlightCode("let x = 1;", "rust")).toContain('<span class="hljs-keyword">let</span>');
  });
});

describe("highlighting, loaded", () => {
  beforeAll(async () => {
    await loadHighlighter();
  });

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
