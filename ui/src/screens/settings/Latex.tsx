// Settings → LaTeX: which TeX bundle previews use, and building the offline one.

import { useEffect, useRef, useState } from "react";
import type { ReplyOf, Transport } from "../../transport";
import { useEvents, useTransport, type Loadable } from "../../app/context";
import { errorText } from "../../lib/format";
import { formatBytes } from "../../lib/bytes";
import { Load, Section, type SettingsReply } from "./Section";

type BuiltBundle = ReplyOf<{ cmd: "build_tex_bundle" }>;

/**
 * The offline TeX bundle being built, by transport. Like a model download it outlives the
 * Settings screen, so coming back follows it again instead of asking for a second build
 * the engine would refuse.
 */
const texBuilds = new WeakMap<Transport, Promise<BuiltBundle>>();

function buildTexBundle(t: Transport): Promise<BuiltBundle> {
  const already = texBuilds.get(t);
  if (already) return already;
  const p = t.call({ cmd: "build_tex_bundle" });
  texBuilds.set(t, p);
  const forget = () => {
    if (texBuilds.get(t) === p) texBuilds.delete(t);
  };
  p.then(forget, forget);
  return p;
}

/** Which TeX bundle LaTeX previews use, and building the offline one from the installed TeX Live. */
export function Latex({ data, reload }: { data: Loadable<SettingsReply>; reload: () => void }) {
  const t = useTransport();
  /** The build this screen follows, with its last progress (files); null when none. */
  const [progress, setProgress] = useState<{ done: number; total: number } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [result, setResult] = useState<string | null>(null);
  const mounted = useRef(false);
  const followed = useRef<Promise<BuiltBundle> | null>(null);
  const reloadRef = useRef(reload);
  reloadRef.current = reload;

  useEvents((_sid, e) => {
    if (e.type !== "tex_bundle" || !followed.current) return;
    setProgress({ done: e.done, total: e.total });
  });

  const follow = (p: Promise<BuiltBundle>) => {
    if (followed.current === p) return;
    followed.current = p;
    setProgress((x) => x ?? { done: 0, total: 0 });
    setError(null);
    setResult(null);
    p.then(
      (r) => {
        if (mounted.current) setResult(`Built the offline bundle: ${r.files} files, ${formatBytes(r.bytes)}, at ${r.path}.`);
      },
      (e: unknown) => {
        if (mounted.current) setError(errorText(e));
      },
    ).finally(() => {
      if (followed.current === p) followed.current = null;
      if (!mounted.current) return;
      setProgress(null);
      // `tex` now says which bundle applies (offline, when the build worked).
      reloadRef.current();
    });
  };

  // A build started before this screen was (re)opened.
  useEffect(() => {
    mounted.current = true;
    const p = texBuilds.get(t);
    if (p) follow(p);
    return () => {
      mounted.current = false;
    };
    // Once per transport: `follow` only uses refs and state setters.
  }, [t]);

  return (
    <Section title="LaTeX" id="s-latex">
      <Load data={data} retry={reload}>
        {({ tex }) => (
          <>
            <div className="row wrap">
              <span className="small">
                <span className="muted">Previews use: </span>
                <span data-testid="tex-status">{tex.bundle}</span>
              </span>
              {tex.offline && (
                <span className="chip chip-done" data-testid="tex-offline">
                  Works offline
                </span>
              )}
            </div>
            {!tex.offline && tex.system_tex != null && (
              <>
                <div className="row wrap">
                  <button type="button" className="btn" data-testid="tex-build" disabled={progress != null} onClick={() => follow(buildTexBundle(t))}>
                    {progress ? "Building…" : "Build offline bundle"}
                  </button>
                  <span className="small muted">
                    From the TeX Live in <code>{tex.system_tex}</code>; about a minute.
                  </span>
                </div>
                {progress && (
                  <div className="pull-progress tex-progress" data-testid="tex-progress">
                    <progress aria-label="Building the offline TeX bundle" value={Math.min(progress.done, progress.total)} max={progress.total || 1} />
                    <span className="small muted">{progress.total > 0 ? `Bundling TeX files: ${progress.done}/${progress.total}` : "Bundling TeX files…"}</span>
                  </div>
                )}
              </>
            )}
            {!tex.offline && tex.system_tex == null && (
              <p className="small muted" data-testid="tex-hint">
                To work offline, install TeX Live (<code>apt install texlive-latex-base texlive-xetex lmodern</code>), then build a bundle here or run{" "}
                <code>skald latex bundle --from-system</code>.
              </p>
            )}
          </>
        )}
      </Load>
      {error && (
        <div className="state-error small" role="alert" data-testid="tex-error">
          {error}
        </div>
      )}
      {result && (
        <div className="ok-text small" role="status" data-testid="tex-result">
          {result}
        </div>
      )}
    </Section>
  );
}
