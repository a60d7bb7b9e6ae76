// The right-hand viewer: shows any file the agent or the user points at, by the kind
// the server decides (markdown, code/text, image, PDF, sandboxed HTML, LaTeX).

import { useEffect, useRef, useState } from "react";
import type { Reply } from "../protocol";
import { useEvents, useTransport } from "../app/context";
import { highlightWithin } from "../lib/highlight";
import { errorText } from "../lib/format";
import { onMarkdownClick } from "../lib/links";
import { EmptyState, ErrorState, Icon, Spinner } from "../components/ui";
import { CodeView } from "./CodeView";
import { LazyPdfView as PdfView } from "./lazyPdf";
import { LatexView } from "./LatexView";

type ViewReply = Extract<Reply, { cmd: "view" }>;

export interface ViewerTarget {
  path: string;
  line?: number;
  /** Changes on every open request, so opening the same path again reloads it. */
  nonce: number;
}

interface Props {
  target: ViewerTarget | null;
  sessionId: number | null;
  onOpen: (path: string, line?: number) => void;
  onClose: () => void;
}

export function Viewer({ target, sessionId, onOpen, onClose }: Props) {
  const t = useTransport();
  const [reply, setReply] = useState<ViewReply | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(false);
  const [input, setInput] = useState(target?.path ?? "");
  /** Bumped when the shown file changes on disk (file_changed). */
  const [changeTick, setChangeTick] = useState(0);

  useEffect(() => {
    if (!target) return;
    setInput(target.path);
    let live = true;
    setLoading(true);
    setError(null);
    t.call(sessionId != null ? { cmd: "view", path: target.path, session_id: sessionId } : { cmd: "view", path: target.path }).then(
      (r) => {
        if (!live) return;
        setReply(r);
        setInput(r.display_path || r.path);
        setLoading(false);
      },
      (e: unknown) => {
        if (!live) return;
        setReply(null);
        setError(errorText(e));
        setLoading(false);
      },
    );
    return () => {
      live = false;
    };
    // sessionId is read at open time only: switching chats must not reload the viewer.
  }, [t, target]);

  // Watch the shown file while it is shown, so edits (by the agent or the user) appear.
  const shownPath = reply?.path ?? null;
  useEffect(() => {
    if (!shownPath) return;
    const subscribe = () =>
      t.call({ cmd: "subscribe", path: shownPath }).catch(() => {
        // Not watchable (policy, file system): the view still works, just without live reload.
      });
    // Subscriptions belong to a connection: after a reconnect, watch again.
    let seenOpen = false;
    const off = t.onStatus((s) => {
      if (s !== "open") return;
      if (seenOpen) void subscribe();
      seenOpen = true;
    });
    void subscribe();
    return () => {
      off();
      t.call({ cmd: "unsubscribe", path: shownPath }).catch(() => {});
    };
  }, [t, shownPath]);

  useEvents((_sid, e) => {
    if (e.type !== "file_changed" || !shownPath || e.path !== shownPath) return;
    // LaTeX rebuilds on the tick; every kind is fetched again (old content stays meanwhile).
    setChangeTick((x) => x + 1);
    t.call({ cmd: "view", path: shownPath, ...(sessionId != null ? { session_id: sessionId } : {}) }).then(
      (r) => setReply(r),
      (err: unknown) => setError(errorText(err)),
    );
  });

  return (
    <aside className="viewer" data-testid="viewer" aria-label="Viewer">
      <form
        className="viewer-bar"
        onSubmit={(e) => {
          e.preventDefault();
          if (input.trim()) onOpen(input.trim());
        }}
      >
        <input data-testid="viewer-path" className="grow" aria-label="File path" placeholder="Path to a file…" value={input} onChange={(e) => setInput(e.target.value)} spellCheck={false} />
        <button type="submit" className="btn" data-testid="viewer-open" disabled={!input.trim()}>
          Open
        </button>
        <button type="button" className="icon-btn" aria-label="Close viewer" title="Close viewer (Ctrl+Shift+E)" onClick={onClose}>
          <Icon name="close" />
        </button>
      </form>
      <div className="viewer-body">
        {!target ? (
          <EmptyState title="Nothing open">Click a file in a tool card, or type a path above.</EmptyState>
        ) : error ? (
          <ErrorState message={error} testId="viewer-error" onRetry={() => onOpen(target.path, target.line)} />
        ) : !reply ? (
          <Spinner label="Opening…" />
        ) : (
          <>
            {loading && <div className="viewer-loading small muted">Loading…</div>}
            <ViewBody key={reply.path} reply={reply} line={target.line ?? null} onOpen={onOpen} changeTick={changeTick} />
          </>
        )}
      </div>
    </aside>
  );
}

function formatSize(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

function ViewBody({ reply, line, onOpen, changeTick }: { reply: ViewReply; line: number | null; onOpen: (p: string, l?: number) => void; changeTick: number }) {
  const v = reply.view;
  switch (v.view) {
    case "markdown":
      return <MarkdownView html={v.html} onOpen={onOpen} />;
    case "text":
      return <CodeView path={reply.path} page={v.page} language={v.language} line={line} />;
    case "media":
      if (v.mime === "application/pdf") return <PdfView url={v.url} />;
      // SVG too goes through <img>: scripts inside it never run that way.
      return (
        <div className="media">
          <img data-testid="viewer-image" src={v.url} alt={reply.display_path} />
        </div>
      );
    case "html":
      return <HtmlView url={v.url} sandbox={v.sandbox} source={v.source} path={reply.path} />;
    case "latex":
      return <LatexView path={reply.path} source={v.source} line={line} changeTick={changeTick} onOpen={onOpen} />;
    case "none":
      return (
        <EmptyState title="No preview for this file">
          {v.reason} ({formatSize(reply.size)})
        </EmptyState>
      );
  }
}

function MarkdownView({ html, onOpen }: { html: string; onOpen: (p: string) => void }) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (ref.current) highlightWithin(ref.current);
  }, [html]);
  return (
    <div
      ref={ref}
      className="markdown doc"
      data-testid="viewer-markdown"
      // Sanitised by the server (ammonia).
      dangerouslySetInnerHTML={{ __html: html }}
      onClick={(e) => onMarkdownClick(e, onOpen)}
    />
  );
}

function HtmlView({ url, sandbox, source, path }: { url: string; sandbox: string; source: import("../protocol").Page; path: string }) {
  const [showSource, setShowSource] = useState(false);
  // The server's sandbox is used as given; allow-same-origin must never be added, or
  // the page could reach the API with the user's cookie.
  const safeSandbox = sandbox
    .split(/\s+/)
    .filter((s) => s && s !== "allow-same-origin")
    .join(" ");
  return (
    <div className="html-view">
      <div className="viewer-tools">
        <button type="button" className="btn" data-testid="viewer-source-toggle" aria-pressed={showSource} onClick={() => setShowSource(!showSource)}>
          {showSource ? "Preview" : "Source"}
        </button>
      </div>
      {showSource ? (
        <CodeView path={path} page={source} language="html" testId="viewer-code" />
      ) : (
        <iframe data-testid="viewer-html" title="HTML preview" sandbox={safeSandbox} src={url} />
      )}
    </div>
  );
}
