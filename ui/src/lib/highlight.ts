// highlight.js is the one highlighter for chat code blocks and the viewer. The common
// bundle keeps the download reasonable while covering the usual languages. It is loaded on
// first need, not with the app: it is a third of the app's script, and most screens and
// most messages show no code. Until it is there, code shows plain and is highlighted in
// place once it arrives.

import type { HLJSApi } from "highlight.js";

let hljs: HLJSApi | null = null;
let loading: Promise<HLJSApi | null> | null = null;

/** Loads highlight.js once; `null` if its script cannot be loaded (code then stays plain,
 * and the next need tries again). */
export function loadHighlighter(): Promise<HLJSApi | null> {
  loading ??= Promise.all([import("highlight.js/lib/common"), import("highlight.js/lib/languages/latex")]).then(
    ([common, latex]) => {
      // LaTeX is not in the common bundle, and the viewer shows .tex sources.
      common.default.registerLanguage("latex", latex.default);
      hljs = common.default;
      return hljs;
    },
    () => {
      loading = null;
      return null;
    },
  );
  return loading;
}

/** Whether highlight.js is loaded, so `highlightCode` colours. */
export function highlighterReady(): boolean {
  return hljs !== null;
}

/** Highlighted HTML of `code`; escaped plain text for an unknown language, or while
 * highlight.js is not loaded yet (`loadHighlighter`). */
export function highlightCode(code: string, language: string | null | undefined): string {
  const lang = language ? normaliseLanguage(language) : null;
  if (lang && hljs?.getLanguage(lang)) {
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

/** Highlights the `<pre><code class="language-x">` blocks of server-rendered HTML in place:
 * at once if highlight.js is loaded, else once it is (loading it only when there is a
 * block to colour). */
export function highlightWithin(root: HTMLElement) {
  const blocks = Array.from(root.querySelectorAll<HTMLElement>("pre code")).filter((el) => el.dataset.highlighted !== "yes");
  if (blocks.length === 0) return;
  if (hljs) {
    colour(hljs, blocks);
    return;
  }
  void loadHighlighter().then((h) => {
    // The blocks may have been replaced meanwhile; those are coloured by their own call.
    if (h) colour(h, blocks.filter((el) => el.isConnected));
  });
}

function colour(hljs: HLJSApi, blocks: HTMLElement[]) {
  blocks.forEach((el) => {
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
