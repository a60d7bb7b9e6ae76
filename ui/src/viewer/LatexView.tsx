// A .tex file: built to PDF by the server, rebuilt whenever the file changes. The last
// good PDF stays on screen while a rebuild runs, so editing does not make it flicker.

import { useEffect, useRef, useState } from "react";
import type { LatexStage, Page, Reply } from "../protocol";
import { useEvents, useTransport } from "../app/context";
import { errorText } from "../lib/format";
import { CodeView } from "./CodeView";
import { LazyPdfView as PdfView } from "./lazyPdf";

type Build = Extract<Reply, { cmd: "latex_build" }>;

/** What a build is doing, as the server reports it (`latex_progress`). */
export function stageText(stage: LatexStage): string {
  switch (stage.stage) {
    case "format":
      return "Making the LaTeX format (first build only; this takes a while)…";
    case "tex":
      return `Running XeTeX, pass ${stage.pass}…`;
    case "bibtex":
      return "Running BibTeX…";
    case "pdf":
      return "Writing the PDF…";
  }
}

function dirname(p: string): string {
  const i = Math.max(p.lastIndexOf("/"), p.lastIndexOf("\\"));
  return i > 0 ? p.slice(0, i) : "/";
}

/** TeX reports files relative to the main file's folder (often as ./x.tex). */
export function resolveTexFile(mainPath: string, file: string): string {
  if (file.startsWith("/") || /^[A-Za-z]:[\\/]/.test(file)) return file;
  const rel = file.replace(/^\.\//, "");
  return `${dirname(mainPath)}/${rel}`;
}

export function LatexView({ path, source, line, changeTick, onOpen }: { path: string; source: Page; line: number | null; changeTick: number; onOpen: (p: string, l?: number) => void }) {
  const t = useTransport();
  const [build, setBuild] = useState<Build | null>(null);
  const [building, setBuilding] = useState(true);
  const [error, setError] = useState<string | null>(null);
  const [pdfUrl, setPdfUrl] = useState<string | null>(null);
  const [stage, setStage] = useState<LatexStage | null>(null);
  const [showSource, setShowSource] = useState(line != null);
  const generation = useRef(0);

  useEffect(() => setShowSource(line != null), [line]);

  useEffect(() => {
    const gen = ++generation.current;
    setBuilding(true);
    setStage(null);
    setError(null);
    t.call({ cmd: "latex_build", path }).then(
      (r) => {
        // A newer build started meanwhile: its answer is the one to show.
        if (gen !== generation.current) return;
        setBuild(r);
        setBuilding(false);
        // The PDF may keep its URL across builds; the fragment makes the viewer reload it.
        if (r.ok && r.pdf_url) setPdfUrl(`${r.pdf_url}#build=${gen}`);
      },
      (e: unknown) => {
        if (gen !== generation.current) return;
        setError(errorText(e));
        setBuilding(false);
      },
    );
  }, [t, path, changeTick]);

  useEvents((_sid, e) => {
    if (e.type === "latex_progress" && e.path === path) setStage(e.stage);
  });

  // Kills the build under way on the server; its reply then says it was stopped.
  const stop = () => {
    t.call({ cmd: "latex_stop", path }).catch((e: unknown) => setError(errorText(e)));
  };

  const status = building
    ? stage
      ? stageText(stage)
      : build || pdfUrl
        ? "Rebuilding…"
        : "Building…"
    : error
      ? "Build failed"
      : build
        ? build.ok
          ? build.from_cache
            ? `Built (from cache)`
            : `Built in ${build.millis} ms`
          : `Build failed after ${build.millis} ms`
        : "";

  return (
    <div className="latex-view">
      <div className="viewer-tools">
        <span className={`latex-status small ${building ? "busy" : ""}`} data-testid="latex-status" role="status">
          {building && <span className="spinner small-spinner" aria-hidden="true" />}
          {status}
        </span>
        {building && (
          <button type="button" className="btn" data-testid="latex-stop" onClick={stop}>
            Stop
          </button>
        )}
        <button type="button" className="btn" data-testid="viewer-source-toggle" aria-pressed={showSource} onClick={() => setShowSource(!showSource)}>
          {showSource ? "PDF" : "Source"}
        </button>
      </div>
      {error && (
        <div className="state-error small" role="alert">
          {error}
        </div>
      )}
      {build && !build.ok && build.message && (
        <div className="state-error small" role="alert">
          {build.message}
        </div>
      )}
      {build && build.errors.length > 0 && (
        <ul className="latex-errors" aria-label="LaTeX errors">
          {build.errors.map((e, i) => {
            const text = `${e.file}:${e.line ?? "?"}: ${e.message}`;
            return (
              <li key={i}>
                <button type="button" className="link" data-testid="latex-error" onClick={() => onOpen(resolveTexFile(path, e.file), e.line ?? undefined)}>
                  {text}
                </button>
              </li>
            );
          })}
        </ul>
      )}
      {showSource ? (
        <CodeView path={path} page={source} language="latex" line={line} />
      ) : pdfUrl ? (
        <PdfView url={pdfUrl} />
      ) : (
        !building && !error && <div className="state muted">No PDF yet — fix the errors above and save.</div>
      )}
    </div>
  );
}
