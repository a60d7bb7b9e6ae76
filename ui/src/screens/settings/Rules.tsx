// Settings → Approval rules: the "Always…" rules, and removing one.

import { useState } from "react";
import type { RuleInfo } from "../../protocol";
import { useCommand, useTransport } from "../../app/context";
import { errorText } from "../../lib/format";
import { EmptyState, Icon } from "../../components/ui";
import { Load, Section } from "./Section";

/** `web_fetch · host docs.rs`: the tool, then what narrows the rule, as `skald rules list` says it. */
function ruleSummary(rule: RuleInfo): string {
  const parts = [rule.tool_pattern || "*"];
  if (rule.path_pattern) parts.push(`path ${rule.path_pattern}`);
  if (rule.command_pattern) parts.push(`command ${rule.command_pattern}`);
  if (rule.domain_pattern) parts.push(`host ${rule.domain_pattern}`);
  if (rule.working_dir) parts.push(`in ${rule.working_dir}`);
  if (rule.network) parts.push("with the network");
  return parts.join(" · ");
}

export function Rules() {
  const t = useTransport();
  const [data, reload] = useCommand({ cmd: "list_rules" }, []);
  const [error, setError] = useState<string | null>(null);
  const remove = async (id: number) => {
    setError(null);
    try {
      await t.call({ cmd: "remove_rule", id });
      reload();
    } catch (e) {
      setError(errorText(e));
    }
  };
  return (
    <Section title="Approval rules" id="s-rules">
      <Load data={data} retry={reload}>
        {(r) =>
          r.rules.length === 0 ? (
            <EmptyState title="No rules">Choose “Always…” on an approval to add one.</EmptyState>
          ) : (
            <ul className="rows">
              {r.rules.map((rule) => (
                <li key={rule.id} className="row-card">
                  <div className="row-main">
                    <span className={`chip chip-${rule.action}`}>{rule.action}</span>
                    <code className="small">{ruleSummary(rule)}</code>
                    {rule.group_name && <span className="muted small">{rule.group_name}</span>}
                    <span className="muted small grow-right">{rule.note}</span>
                    <button type="button" className="icon-btn" aria-label="Remove rule" title="Remove rule" onClick={() => void remove(rule.id)}>
                      <Icon name="trash" size={14} />
                    </button>
                  </div>
                </li>
              ))}
            </ul>
          )
        }
      </Load>
      {error && <div className="error-text small">{error}</div>}
    </Section>
  );
}
