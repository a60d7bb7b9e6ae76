// A plan an agent in plan mode presents with `exit_plan_mode` (docs/agent-loop.md "Plan
// mode"), as Markdown: rendered by the server's one renderer (`render_markdown`, sanitised),
// shown as text until it is, and as text (controls escaped, as the approval cards show
// arguments) when the person asks. The approval card and the call's card in the chat use it.

import { useEffect, useRef, useState } from "react";
import type { JsonValue } from "../protocol";
import { useApp, useTransport } from "../app/context";
import { highlightWithin } from "../lib/highlight";
import { onMarkdownClick } from "../lib/links";
import { VisibleText } from "./Arguments";

export const EXIT_PLAN_MODE = "exit_plan_mode";

/** The plan of an `exit_plan_mode` call's arguments (the model's JSON: null when it has none). */
export function planOf(args: JsonValue | undefined): string | null {
  if (typeof args !== "object" || args === null || Array.isArray(args)) return null;
  const plan = args["plan"];
  return typeof plan === "string" ? plan : null;
}

/** Plans rendered this run, by chat and text: a row scrolled back into view asks no more. */
const rendered = new Map<string, string>();

/** `sessionId`: the chat whose folder relative links resolve against. */
export function PlanView({ plan, sessionId }: { plan: string; sessionId: number | null }) {
  const t = useTransport();
  const { openViewer } = useApp();
  const key = `${sessionId}\u0000${plan}`;
  const [html, setHtml] = useState<string | null>(() => rendered.get(key) ?? null);
  const [asText, setAsText] = useState(false);
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const known = rendered.get(key);
    setHtml(known ?? null);
    if (known != null) return;
    let live = true;
    t.call({ cmd: "render_markdown", text: plan, ...(sessionId != null ? { session_id: sessionId } : {}) }).then(
      (r) => {
        rendered.set(key, r.html);
        if (live) setHtml(r.html);
      },
      // Shown as text.
      () => {},
    );
    return () => {
      live = false;
    };
  }, [t, key, plan, sessionId]);
  useEffect(() => {
    if (ref.current) highlightWithin(ref.current);
  }, [html, asText]);
  const formatted = html != null && !asText;
  return (
    <div className="plan" data-testid="plan" data-rendered={formatted ? "1" : undefined}>
      {formatted ? (
        // Sanitised by the server (ammonia), as the chat's answers are.
        <div
          ref={ref}
          className="markdown plan-body"
          data-testid="plan-markdown"
          dangerouslySetInnerHTML={{ __html: html }}
          onClick={(e) => {
            // A link opens once: here, not again in the chat's list around it.
            if ((e.target as HTMLElement).closest?.("a")) e.stopPropagation();
            onMarkdownClick(e, openViewer);
          }}
        />
      ) : (
        <div className="plain plan-body" data-testid="plan-text">
          <VisibleText text={plan} />
        </div>
      )}
      {html != null && (
        <button type="button" className="link small plan-as-text" data-testid="plan-as-text" aria-pressed={asText} onClick={() => setAsText(!asText)}>
          {asText ? "Show formatted" : "Show as plain text"}
        </button>
      )}
    </div>
  );
}
