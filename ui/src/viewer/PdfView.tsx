// PDF through pdf.js with its worker bundled by Vite (served from 'self', as the CSP
// requires). Pages render to canvases only when scrolled near, so long documents open fast.

import { useEffect, useRef, useState } from "react";
import * as pdfjs from "pdfjs-dist";
import type { PDFDocumentProxy } from "pdfjs-dist";
import workerUrl from "pdfjs-dist/build/pdf.worker.min.mjs?url";
import { errorText } from "../lib/format";
import { ErrorState, Spinner } from "../components/ui";

pdfjs.GlobalWorkerOptions.workerSrc = workerUrl;

interface Props {
  url: string;
  onLoaded?: () => void;
}

export function PdfView({ url, onLoaded }: Props) {
  const [doc, setDoc] = useState<PDFDocumentProxy | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [scale, setScale] = useState(1.25);
  const onLoadedRef = useRef(onLoaded);
  onLoadedRef.current = onLoaded;

  useEffect(() => {
    let live = true;
    setError(null);
    // isEvalSupported: false — the CSP forbids eval, and we don't want pdf.js to try.
    const task = pdfjs.getDocument({ url, isEvalSupported: false, withCredentials: true });
    task.promise.then(
      (d) => {
        if (!live) {
          void d.destroy();
          return;
        }
        // Swap in the new document only once it is ready: the old stays visible meanwhile.
        setDoc((old) => {
          if (old) void old.destroy();
          return d;
        });
        onLoadedRef.current?.();
      },
      (e: unknown) => live && setError(errorText(e)),
    );
    return () => {
      live = false;
      void task.destroy().catch(() => {});
    };
  }, [url]);

  useEffect(() => () => void doc?.destroy(), [doc]);

  if (error && !doc) return <ErrorState message={`Could not open the PDF: ${error}`} testId="viewer-error" />;
  if (!doc) return <Spinner label="Opening PDF…" />;
  return (
    <div className="pdf" data-testid="viewer-pdf">
      <div className="pdf-toolbar">
        <span className="small muted">
          {doc.numPages} page{doc.numPages === 1 ? "" : "s"}
        </span>
        <button type="button" className="icon-btn" aria-label="Zoom out" onClick={() => setScale((s) => Math.max(0.5, s - 0.25))}>
          −
        </button>
        <span className="small">{Math.round(scale * 100)}%</span>
        <button type="button" className="icon-btn" aria-label="Zoom in" onClick={() => setScale((s) => Math.min(4, s + 0.25))}>
          +
        </button>
      </div>
      <div className="pdf-pages">
        {Array.from({ length: doc.numPages }, (_, i) => (
          <PdfPage key={`${i}-${scale}`} doc={doc} pageNumber={i + 1} scale={scale} />
        ))}
      </div>
    </div>
  );
}

function PdfPage({ doc, pageNumber, scale }: { doc: PDFDocumentProxy; pageNumber: number; scale: number }) {
  const holder = useRef<HTMLDivElement>(null);
  const canvas = useRef<HTMLCanvasElement>(null);
  const [visible, setVisible] = useState(pageNumber <= 2);
  const [rendered, setRendered] = useState(false);
  const [size, setSize] = useState<{ w: number; h: number }>({ w: 612 * scale, h: 792 * scale });

  useEffect(() => {
    const el = holder.current;
    if (!el || visible) return;
    const io = new IntersectionObserver(
      (entries) => {
        if (entries.some((e) => e.isIntersecting)) {
          setVisible(true);
          io.disconnect();
        }
      },
      { rootMargin: "600px" },
    );
    io.observe(el);
    return () => io.disconnect();
  }, [visible]);

  useEffect(() => {
    if (!visible) return;
    let cancelled = false;
    let task: { cancel(): void } | null = null;
    doc.getPage(pageNumber).then((page) => {
      if (cancelled || !canvas.current) return;
      const viewport = page.getViewport({ scale });
      const ratio = window.devicePixelRatio || 1;
      const c = canvas.current;
      c.width = Math.floor(viewport.width * ratio);
      c.height = Math.floor(viewport.height * ratio);
      c.style.width = `${viewport.width}px`;
      c.style.height = `${viewport.height}px`;
      setSize({ w: viewport.width, h: viewport.height });
      const render = page.render({ canvas: c, viewport, transform: ratio !== 1 ? [ratio, 0, 0, ratio, 0, 0] : undefined });
      task = render;
      render.promise.then(() => !cancelled && setRendered(true)).catch(() => {
        // Cancelled renders (scrolling away, zooming) reject; nothing to show.
      });
    }, () => {});
    return () => {
      cancelled = true;
      task?.cancel();
    };
  }, [doc, pageNumber, scale, visible]);

  return (
    <div ref={holder} className="pdf-page" style={{ minHeight: size.h, width: size.w }} aria-label={`Page ${pageNumber}`}>
      {/* The test id marks a canvas once pdf.js has drawn it. */}
      <canvas ref={canvas} data-testid={rendered ? "pdf-page" : undefined} data-page={pageNumber} />
    </div>
  );
}
