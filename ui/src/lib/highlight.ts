// highlight.js is the one highlighter for chat code blocks and the viewer. The common
// bundle keeps the download reasonable while covering the usual languages.

import hljs from "highlight.js/lib/common";
import latex from "highlight.js/lib/languages/latex";

// LaTeX is not in the common bundle, and the viewer shows .tex sources.
hljs.registerLanguage("latex", latex);

export function highlightCode(code: string, language: string | null | undefined): string {
  const lang = language ? normaliseLanguage(language) : null;
  if (lang && hljs.getLanguage(lang)) {
    return hljs.highlight(code, { language: lang, ignoreIllegals: true }).value;
  }
  return escapeHtml(code);
}

function normaliseLanguage(l: string): string {
  const x = l.toLowerCase();
  const map: Record<string, string> = { tex: "latex", sh: "bash", shell: "bash", yml: "yaml", rs: "rust", py: "python", ts: "typescript", js: "javascript", md: "markdown" };
  return map[x] ?? x;
}

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
}

/** Highlights the `<pre><code class="language-x">` blocks of server-rendered HTML in place. */
export function highlightWithin(root: HTMLElement) {
  root.querySelectorAll<HTMLElement>("pre code").forEach((el) => {
    if (el.dataset.highlighted === "yes") return;
    const cls = Array.from(el.classList).find((c) => c.startsWith("language-"));
    const lang = cls ? normaliseLanguage(cls.slice("language-".length)) : null;
    if (lang && hljs.getLanguage(lang)) {
      el.innerHTML = hljs.highlight(el.textContent ?? "", { language: lang, ignoreIllegals: true }).value;
      el.classList.add("hljs");
    }
    el.dataset.highlighted = "yes";
  });
}

/** Splits highlighted HTML into lines, closing and reopening spans at line ends, so each line can carry its number. */
export function splitHighlightedLines(html: string): string[] {
  const lines: string[] = [];
  let open: string[] = [];
  let current = "";
  const re = /(<span[^>]*>)|(<\/span>)|(\n)|([^<\n]+|<)/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(html))) {
    if (m[1]) {
      open.push(m[1]);
      current += m[1];
    } else if (m[2]) {
      open.pop();
      current += m[2];
    } else if (m[3]) {
      current += "</span>".repeat(open.length);
      lines.push(current);
      current = open.join("");
    } else {
      current += m[4];
    }
  }
  lines.push(current);
  open = [];
  return lines;
}
