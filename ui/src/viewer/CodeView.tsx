// Text and code with line numbers, highlighted by highlight.js, paged for big files
// ("Load more" reads the next page), and able to jump to and mark a line.

import { useEffect, useMemo, useRef, useState } from "react";
import type { Page } from "../protocol";
import { useTransport } from "../app/context";
import { highlightCode, highlighterReady, loadHighlighter, splitHighlightedLines } from "../lib/highlight";
import { errorText } from "../lib/format";

/** Highlighting huge text blocks the UI; past this it is shown plain. */
const HIGHLIGHT_LIMIT = 400_000;

export function CodeView({ path, page, language, line, testId = "viewer-code" }: { path: string; page: Page; language: string | null; line?: number | null; testId?: string }) {
  const t = useTransport();
  const [text, setText] = useState(page.text);
  const [next, setNext] = useState<number | null>(page.next_offset);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    setText(page.text);
    setNext(page.next_offset);
    setError(null);
  }, [page]);

  // Plain at first if highlight.js is not loaded yet; coloured when it is.
  const wantsColour = language != null && text.length <= HIGHLIGHT_LIMIT;
  const [ready, setReady] = useState(highlighterReady);
  useEffect(() => {
    if (!wantsColour || ready) return;
    let live = true;
    void loadHighlighter().then((h) => {
      if (live && h) setReady(true);
    });
    return () => {
      live = false;
    };
  }, [wantsColour, ready]);

  const lines = useMemo(() => {
    const html = highlightCode(text, wantsColour && ready ? language : null);
    const out = splitHighlightedLines(html);
    // A trailing newline does not start another line.
    if (out.length > 1 && text.endsWith("\n")) out.pop();
    return out;
  }, [text, language, wantsColour, ready]);

  const target = useRef<HTMLDivElement>(null);
  useEffect(() => {
    target.current?.scrollIntoView({ block: "center" });
  }, [line, lines.length]);

  const loadMore = async () => {
    if (next == null) return;
    setLoading(true);
    setError(null);
    try {
      const r = await t.call({ cmd: "read_page", path, offset: next });
      setText((x) => x + r.page.text);
      setNext(r.page.next_offset);
    } catch (e) {
      setError(errorText(e));
    } finally {
      setLoading(false);
    }
  };

  const width = String(lines.length).length;
  return (
    <div className="code-view" data-testid={testId}>
      <pre className="code hljs" aria-label={`Contents of ${path}`}>
        {lines.map((l, i) => (
          <div key={i} ref={line === i + 1 ? target : undefined} className={line === i + 1 ? "code-line target" : "code-line"} data-line={i + 1}>
            <span className="ln" style={{ width: `${width + 1}ch` }} aria-hidden="true">
              {i + 1}
            </span>
            <span className="lc" dangerouslySetInnerHTML={{ __html: l || " " }} />
          </div>
        ))}
      </pre>
      {next != null && (
        <div className="load-more">
          <span className="small muted">
            Showing {text.length.toLocaleString()} of {page.total.toLocaleString()} bytes
          </span>
          <button type="button" className="btn" disabled={loading} onClick={() => void loadMore()}>
            {loading ? "Loading…" : "Load more"}
          </button>
          {error && <span className="error-text small">{error}</span>}
        </div>
      )}
    </div>
  );
}
