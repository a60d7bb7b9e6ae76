// Settings → Language servers (docs/lsp.md): for each language, the server Skald would
// start — config.toml's `[lsp.commands]` or the usual one found on PATH, as the `settings`
// reply's `language_servers` says (what `skald doctor` checks) — or, where there is none,
// how to get one, to copy. Read-only: another server is named in config.toml.

import { useEffect, useRef, useState } from "react";
import type { LanguageServerInfo } from "../../protocol";
import type { Loadable } from "../../app/context";
import { basename, Icon } from "../../components/ui";
import { Load, Section, type SettingsReply } from "./Section";

/** How each language of `[lsp.commands]` is shown; another is shown as the engine names it. */
export const LANGUAGE_NAMES: Record<string, string> = {
  python: "Python",
  typescript: "TypeScript / JavaScript",
  rust: "Rust",
  go: "Go",
  c: "C / C++",
};

/**
 * The file name of the program a server's command line starts, "pyright-langserver" of
 * "/usr/local/bin/pyright-langserver --stdio". The engine joins the command's words with
 * spaces, so a path with a space in it ("/opt/My Tools/clangd") comes in parts: words after
 * an absolute path's first one belong to it up to the last that has a "/", before an
 * option ("-…") or another path ("/…") begins.
 */
export function programName(command: string): string {
  const words = command.trim().split(/\s+/);
  const first = words[0] ?? "";
  if (first === "") return command.trim();
  let end = 0;
  if (first.startsWith("/")) {
    for (let i = 1; i < words.length && !/^[-/]/.test(words[i]!); i++) if (words[i]!.includes("/")) end = i;
  }
  return basename(words.slice(0, end + 1).join(" "));
}

export function LanguageServers({ data, reload }: { data: Loadable<SettingsReply>; reload: () => void }) {
  return (
    <Section title="Language servers" id="s-lsp">
      <Load data={data} retry={reload}>
        {/* An engine from before language servers says nothing of them. */}
        {(s) =>
          s.language_servers ? (
            <Servers servers={s.language_servers} configPath={s.config_path} />
          ) : (
            <div className="muted small">This engine has no language servers.</div>
          )
        }
      </Load>
    </Section>
  );
}

function Servers({ servers, configPath }: { servers: LanguageServerInfo[]; configPath: string }) {
  return (
    <>
      <p className="small muted" data-testid="lsp-about">
        Agents ask a language server what a compiler would say: errors and warnings after an edit, and where things are defined and used (the diagnostics,
        go_to_definition and find_references tools). Skald starts one in the chat's sandbox when a chat first needs it. To use another server, name it under{" "}
        <code>[lsp.commands]</code> in <code data-testid="lsp-config-path">{configPath}</code>, like <code>python = ["basedpyright-langserver", "--stdio"]</code>.
      </p>
      <ul className="rows lsp-list">
        {servers.map((s) => (
          <Server key={s.language} server={s} />
        ))}
      </ul>
    </>
  );
}

function Server({ server: s }: { server: LanguageServerInfo }) {
  const name = LANGUAGE_NAMES[s.language] ?? s.language;
  return (
    <li className="row-card lsp-row" data-testid={`lsp-${s.language}`} data-found={s.command != null ? "1" : "0"}>
      <div className="row-main">
        <strong className="lsp-language">{name}</strong>
        {s.command != null ? (
          <span className="lsp-program" data-testid="lsp-program">
            <Icon name="check" size={13} />
            {programName(s.command)}
          </span>
        ) : (
          <span className="chip chip-waiting" data-testid="lsp-none">
            none found
          </span>
        )}
      </div>
      {s.command != null ? (
        <code className="small muted lsp-command" data-testid="lsp-command">
          {s.command}
        </code>
      ) : (
        <Install command={s.install} language={name} />
      )}
    </li>
  );
}

/** The way to get a server, as code to copy: Copy puts it on the clipboard, or selects it where that is refused. */
function Install({ command, language }: { command: string; language: string }) {
  const code = useRef<HTMLElement>(null);
  const [copied, setCopied] = useState<"copied" | "selected" | null>(null);
  const timer = useRef<number | undefined>(undefined);
  useEffect(() => () => window.clearTimeout(timer.current), []);
  const say = (what: "copied" | "selected") => {
    setCopied(what);
    window.clearTimeout(timer.current);
    timer.current = window.setTimeout(() => setCopied(null), 3000);
  };
  const copy = async () => {
    try {
      if (!navigator.clipboard) throw new Error("no clipboard");
      await navigator.clipboard.writeText(command);
      say("copied");
    } catch {
      // No clipboard for this page: the command is selected, for the keyboard to copy.
      if (code.current) window.getSelection()?.selectAllChildren(code.current);
      say("selected");
    }
  };
  return (
    <div className="row wrap small lsp-install">
      <span className="muted">To install:</span>
      <code ref={code} className="copyable" data-testid="lsp-install">
        {command}
      </code>
      <button type="button" className="btn small-btn" data-testid="lsp-copy" aria-label={`Copy the command that installs a ${language} server`} onClick={() => void copy()}>
        Copy
      </button>
      {copied && (
        <span className={copied === "copied" ? "ok-text" : "muted"} role="status" data-testid="lsp-copied">
          {copied === "copied" ? "Copied." : "Selected: copy it with the keyboard."}
        </span>
      )}
    </div>
  );
}
