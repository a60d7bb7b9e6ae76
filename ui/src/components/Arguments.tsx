// A call's arguments as a person approves them: each value whole, line by line with line
// numbers, and every character that could hide or reorder text shown as a marked escape
// (lib/visible.ts). The Inbox card and the chat's tool card both use it.

import type { JsonValue } from "../protocol";
import { argumentFields, segments } from "../lib/visible";

/** Text with its hidden controls escaped; the escapes are marked so they stand out. */
export function VisibleText({ text, inline = false }: { text: string; inline?: boolean }) {
  return (
    <>
      {segments(text, inline).map((s, i) =>
        s.escape ? (
          <span key={i} className="esc" title="A control or invisible character, shown escaped">
            {s.text}
          </span>
        ) : (
          s.text
        ),
      )}
    </>
  );
}

export function ArgumentsView({ args, testId }: { args: JsonValue | undefined; testId?: string }) {
  const fields = argumentFields(args);
  if (fields.length === 0) return null;
  return (
    <div className="arguments" data-testid={testId}>
      {fields.map((f, i) => {
        const lines = f.text.split("\n");
        return (
          <div key={f.key ?? i} className="argument" data-arg={f.key ?? undefined}>
            {f.key != null && (
              <div className="argument-key small">
                <VisibleText text={f.key} inline />
                {lines.length > 1 && <span className="muted"> · {lines.length} lines</span>}
              </div>
            )}
            <div className="argument-value" role="table" aria-label={f.key ?? "arguments"}>
              {lines.map((line, n) => (
                <div key={n} className="arg-line" role="row" data-testid="arg-line">
                  {lines.length > 1 && <span className="ln">{n + 1}</span>}
                  <span className="code">
                    <VisibleText text={line} />
                  </span>
                </div>
              ))}
            </div>
          </div>
        );
      })}
    </div>
  );
}
