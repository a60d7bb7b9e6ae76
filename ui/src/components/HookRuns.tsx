// Hook runs in the chat (docs/hooks.md, docs/ui.md): a quiet row per run — "PreToolUse
// hook · guard.sh · blocked: no rm -rf here · 12 ms" — on the tool card of the call it ran
// around, under the message it ran for, or in a line of its own. A run that went on and
// said nothing folds into "2 hooks ran"; a blocked, failed or timed-out one stands out.
// Each row expands to the whole command and message. Commands and messages come from
// config.toml or a project's hooks file: rendered as text, controls escaped.

import type { HookRun } from "../protocol";
import type { Expanded } from "./ChatItems";
import { durationText, firstLine, isQuiet, outcomeText, quietText, runSummary, scriptName } from "../lib/hooks";
import { escapeControlsInline } from "../lib/visible";
import { VisibleText } from "./Arguments";
import { Icon } from "./ui";

/** How many script names the folded line lists. */
const NAMES_SHOWN = 3;

export function HookRuns({ runs, groupKey, expanded }: { runs: HookRun[]; groupKey: string; expanded: Expanded }) {
  const indexed = runs.map((run, i) => ({ run, key: `${groupKey}:hook${i}` }));
  const notable = indexed.filter((r) => !isQuiet(r.run));
  const quiet = indexed.filter((r) => isQuiet(r.run));
  const quietKey = `${groupKey}:quiet`;
  const quietOpen = expanded.has(quietKey);
  const names = [...new Set(quiet.map((r) => scriptName(r.run.command)))];
  return (
    <div className="hook-runs" data-testid="hook-runs">
      {notable.map((r) => (
        <HookRow key={r.key} run={r.run} open={expanded.has(r.key)} onToggle={() => expanded.toggle(r.key)} />
      ))}
      {quiet.length > 0 && (
        <button
          type="button"
          className="hook-toggle hook-quiet"
          data-testid="hook-quiet"
          data-count={quiet.length}
          aria-expanded={quietOpen}
          title={quiet.map((r) => escapeControlsInline(runSummary(r.run))).join("\n")}
          onClick={() => expanded.toggle(quietKey)}
        >
          <Icon name="settings" size={11} />
          <span>{quietText(quiet.map((r) => r.run))}</span>
          <span className="hook-sep" aria-hidden="true">
            ·
          </span>
          <span className="hook-command">
            <VisibleText text={names.slice(0, NAMES_SHOWN).join(", ") + (names.length > NAMES_SHOWN ? ", …" : "")} inline />
          </span>
          {quiet.length === 1 && (
            <>
              <span className="hook-sep" aria-hidden="true">
                ·
              </span>
              <span className="hook-duration">{durationText(quiet[0]!.run.duration_ms)}</span>
            </>
          )}
        </button>
      )}
      {quietOpen &&
        quiet.map((r) => <HookRow key={r.key} run={r.run} open={expanded.has(r.key)} onToggle={() => expanded.toggle(r.key)} />)}
    </div>
  );
}

const DETAIL_LABEL: Record<HookRun["outcome"], string> = {
  ok: "It said",
  blocked: "Why it blocked",
  error: "Error",
  timeout: "Timed out",
};

function HookRow({ run, open, onToggle }: { run: HookRun; open: boolean; onToggle: () => void }) {
  const said = outcomeText(run);
  return (
    <div className={`hook-run hook-${run.outcome}`} data-testid="hook-run" data-event={run.event} data-outcome={run.outcome} data-source={run.source}>
      <button type="button" className="hook-toggle" aria-expanded={open} title={escapeControlsInline(runSummary(run))} onClick={onToggle}>
        <Icon name={run.outcome === "ok" ? "settings" : "warning"} size={11} />
        <span className="hook-event">{run.event} hook</span>
        <span className="hook-sep" aria-hidden="true">
          ·
        </span>
        <span className="hook-command" data-testid="hook-command" title={escapeControlsInline(run.command)}>
          <VisibleText text={scriptName(run.command)} inline />
        </span>
        {run.source === "project" && (
          <span className="chip hook-source" title="From the project's .skald/hooks.json">
            project
          </span>
        )}
        {said && (
          <>
            <span className="hook-sep" aria-hidden="true">
              ·
            </span>
            <span className="hook-message" data-testid="hook-message">
              <VisibleText text={firstLine(said)} inline />
            </span>
          </>
        )}
        <span className="hook-sep" aria-hidden="true">
          ·
        </span>
        <span className="hook-duration">{durationText(run.duration_ms)}</span>
      </button>
      {open && (
        <div className="hook-detail" data-testid="hook-detail">
          <div className="small muted">Command {run.source === "project" ? "(the project's)" : "(yours)"}</div>
          <div className="hook-code" data-testid="hook-full-command">
            <VisibleText text={run.command} />
          </div>
          {run.message !== "" && (
            <>
              <div className="small muted">{DETAIL_LABEL[run.outcome]}</div>
              <div className="hook-code" data-testid="hook-full-message">
                <VisibleText text={run.message} />
              </div>
            </>
          )}
        </div>
      )}
    </div>
  );
}
