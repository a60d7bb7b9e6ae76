// Settings → Agents (docs/board.md, "Agents at once"): how many agents' turns run at once
// (`[agent] at_once`, the `settings` reply's `at_once`), set with `set_at_once`; 0 is no
// limit. A turn beyond it waits in line, and starts at once when the limit is raised.

import { useEffect, useRef, useState } from "react";
import { useTransport, type Loadable } from "../../app/context";
import { errorText } from "../../lib/format";
import { Load, Section, type SettingsReply } from "./Section";

/** The most the engine lets run at once. */
export const MAX_AT_ONCE = 64;

export function Agents({ data, reload }: { data: Loadable<SettingsReply>; reload: () => void }) {
  return (
    <Section title="Agents" id="s-agents">
      <Load data={data} retry={reload}>
        {(s) => <AtOnce initial={s.at_once} />}
      </Load>
    </Section>
  );
}

/** What the field says: a whole number from 0 to 64, or why it is not one. */
export function parseAtOnce(text: string): { count: number } | { error: string } {
  const t = text.trim();
  if (t === "") return { error: "Write how many agents may run at once: a whole number from 0 (no limit) to 64." };
  if (!/^\d+$/.test(t)) return { error: `"${t}" is not a whole number: write one from 0 (no limit) to ${MAX_AT_ONCE}.` };
  const count = Number(t);
  if (count > MAX_AT_ONCE) return { error: `At most ${MAX_AT_ONCE} agents can run at once; 0 sets no limit.` };
  return { count };
}

/** "Agents at once", saved on Enter, on leaving the field, or with Save; errors shown under it. */
function AtOnce({ initial }: { initial: number }) {
  const t = useTransport();
  const [saved, setSaved] = useState(initial);
  useEffect(() => setSaved(initial), [initial]);
  const [text, setText] = useState(String(initial));
  useEffect(() => setText(String(saved)), [saved]);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [done, setDone] = useState(false);
  // Enter and then leaving the field save once.
  const saving = useRef(false);
  const save = async () => {
    if (saving.current) return;
    const parsed = parseAtOnce(text);
    if ("error" in parsed) {
      setError(parsed.error);
      setDone(false);
      return;
    }
    if (parsed.count === saved) {
      setError(null);
      setText(String(saved));
      return;
    }
    saving.current = true;
    setBusy(true);
    setError(null);
    setDone(false);
    try {
      const r = await t.call({ cmd: "set_at_once", count: parsed.count });
      setSaved(r.count);
      setText(String(r.count));
      setDone(true);
    } catch (e) {
      setError(errorText(e));
    } finally {
      saving.current = false;
      setBusy(false);
    }
  };
  return (
    <>
      <form
        className="row at-once-form"
        // Its own messages say what is wrong, beside the field, not the browser's bubble.
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          void save();
        }}
      >
        <label className="field inline">
          <span>Agents at once</span>
          <input
            data-testid="at-once"
            type="number"
            inputMode="numeric"
            min={0}
            max={MAX_AT_ONCE}
            step={1}
            className="at-once-input"
            aria-describedby="at-once-hint"
            aria-invalid={error != null}
            value={text}
            onChange={(e) => {
              setText(e.target.value);
              setDone(false);
            }}
            onBlur={() => void save()}
          />
        </label>
        <button type="submit" className="btn" data-testid="at-once-save" disabled={busy}>
          {busy ? "Saving…" : "Save"}
        </button>
        {done && (
          <span className="small muted" role="status" data-testid="at-once-saved">
            Saved: {saved === 0 ? "no limit" : `${saved} at once`}.
          </span>
        )}
      </form>
      <div className="muted small" id="at-once-hint">
        How many agents' turns — chats, background tasks, scheduled runs — run at the same time; 0: no limit. One more waits in line, first come first served, its chat
        saying so, and starts when a place frees (or at once when you raise this).
      </div>
      {error && (
        <div className="error-text small" role="alert" data-testid="at-once-error">
          {error}
        </div>
      )}
    </>
  );
}
