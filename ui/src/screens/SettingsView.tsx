// Settings: models (and a connection test), cost and limits (today's cost, the daily
// budget, the context threshold, rate limits), agents (how many run at once), the web tools
// (search and fetch), which languages have a language server, MCP servers, approval rules,
// secrets, plugins, the TeX bundle LaTeX previews use, and appearance — one file per
// section in settings/.

import { useCommand } from "../app/context";
import type { ThemeChoice } from "../lib/theme";
import { Agents } from "./settings/Agents";
import { Appearance } from "./settings/Appearance";
import { LanguageServers } from "./settings/LanguageServers";
import { Latex } from "./settings/Latex";
import { Limits } from "./settings/Limits";
import { McpServers } from "./settings/McpServers";
import { Models } from "./settings/Models";
import { Plugins } from "./settings/Plugins";
import { Rules } from "./settings/Rules";
import { Secrets } from "./settings/Secrets";
import { Web } from "./settings/Web";

export function SettingsView({ theme, onTheme }: { theme: ThemeChoice; onTheme: (t: ThemeChoice) => void }) {
  // One `settings` read for the sections that show it (Models, Cost and limits, Agents, Web,
  // Language servers, LaTeX).
  const [settings, reloadSettings] = useCommand({ cmd: "settings" }, []);
  return (
    <section className="screen" aria-labelledby="settings-h">
      <header className="screen-header">
        <h1 id="settings-h">Settings</h1>
      </header>
      <div className="screen-body settings">
        <Models data={settings} reload={reloadSettings} />
        <Limits data={settings} reload={reloadSettings} />
        <Agents data={settings} reload={reloadSettings} />
        <Web data={settings} reload={reloadSettings} />
        <LanguageServers data={settings} reload={reloadSettings} />
        <McpServers />
        <Rules />
        <Secrets />
        <Plugins />
        <Latex data={settings} reload={reloadSettings} />
        <Appearance theme={theme} onTheme={onTheme} />
      </div>
    </section>
  );
}
