// Settings → LaTeX: which TeX bundle previews use, the "Works offline" badge, building the
// offline bundle from the installed TeX Live with its progress (tex_bundle events), the
// settings read again after the build, a failed build's error, and the hint to install
// TeX Live where there is none. Settings → Cost and limits: what today's model calls cost,
// the daily budget against it, the context threshold, the providers' rate limits. Settings
// → Agents: how many agents run at once. Settings → Language servers: which languages have
// one, and how to get the others. Settings → MCP servers: signing in.

import { act } from "react";
import { createRoot, type Root } from "react-dom/client";
import { afterEach, describe, expect, it, vi } from "vitest";
import { AppContext, TransportContext } from "../app/context";
import { fakeApp } from "../test/fakeApp";
import type { Command, LanguageServerInfo, McpServerInfo, RateLimitInfo, RuleInfo, SessionInfo, TexStatus, WebSettings } from "../protocol";
import { ServerError } from "../transport";
import { FakeTransport } from "../test/fakeTransport";
import { settle } from "../test/settle";
import { SettingsView } from "./SettingsView";
import { programName } from "./settings/LanguageServers";

const ONLINE = "tectonic's online bundle, fetched and cached on the first build, which needs the network";
const BUNDLE = "/home/me/.local/share/skald/tex/bundle.zip";

const HOW_TO_SET_UP =
  'Set `[web] search = "searxng"` with `search_url` (a SearXNG instance with its JSON format on), or `"brave"` or `"tavily"` with the key stored by `skald secrets set WEB_SEARCH_KEY`, in config.toml (or in Settings → Web)';
const ENDPOINTS: Record<string, string> = { brave: "https://api.search.brave.com/res/v1/web/search", tavily: "https://api.tavily.com/search" };

/** config.toml's `[web]` as `settings` and `set_web` say it, as skald_core::doctor::web_search_status judges it. */
function webSettings(c: { search: string; search_url: string; provider_search: boolean; timeout_secs: number }, keyStored: boolean): WebSettings {
  const base = { ...c, key_stored: keyStored };
  const anthropic = "chats on Anthropic use Anthropic's own search";
  if (c.search === "") return { ...base, ready: false, status: "off", hint: HOW_TO_SET_UP };
  if (c.search === "provider") return { ...base, ready: true, status: `${anthropic}; on other providers there is none (set a search API for them)`, hint: null };
  if (!["searxng", "brave", "tavily"].includes(c.search))
    return { ...base, ready: false, status: `[web] search = "${c.search}" is not one of provider, searxng, brave, tavily`, hint: "fix [web] in config.toml (docs/web.md)" };
  if (c.search !== "searxng" && !keyStored) return { ...base, ready: false, status: `${c.search} is set but its key is not stored`, hint: "skald secrets set WEB_SEARCH_KEY" };
  const endpoint = c.search_url || ENDPOINTS[c.search]!;
  return { ...base, ready: true, status: `${c.search} at ${endpoint}${c.provider_search ? `; ${anthropic}` : ""}`, hint: null };
}

/** The servers skald_core::doctor::language_servers finds here: some on PATH, some not. */
const LANGUAGE_SERVERS: LanguageServerInfo[] = [
  { language: "python", command: "/usr/local/bin/pyright-langserver --stdio", install: "npm install -g pyright" },
  { language: "typescript", command: null, install: "npm install -g typescript typescript-language-server" },
  { language: "rust", command: "/home/me/.cargo/bin/rust-analyzer", install: "rustup component add rust-analyzer" },
  { language: "go", command: null, install: "go install golang.org/x/tools/gopls@latest" },
  { language: "c", command: "/usr/bin/clangd", install: "apt install clangd" },
];

/** Answers Settings' commands; `build_tex_bundle` waits until the test finishes it. */
class FakeServer extends FakeTransport {
  /** config.toml's `[web]`, and the secrets stored. */
  web = { search: "", search_url: "", provider_search: true, timeout_secs: 30 };
  secrets = new Set<string>();
  rules: RuleInfo[] = [];
  tex: TexStatus;
  private build: { resolve: () => void; reject: (e: Error) => void } | null = null;
  mcpServers: McpServerInfo[] = [];
  private login: { resolve: () => void; reject: (e: Error) => void } | null = null;
  /** config.toml's `[agent] compact_at` and `[budget] daily_usd`, as the service keeps them. */
  compactAt = 80;
  budget: number | null = null;
  /** config.toml's `[agent] at_once`. */
  atOnce = 4;
  rateLimits: RateLimitInfo[] = [];
  /** What writing config.toml fails with; none when null. */
  configRefusal: string | null = null;
  /** The `settings` reply's `language_servers`; none from an engine before them. */
  languageServers: LanguageServerInfo[] | undefined = LANGUAGE_SERVERS;
  constructor(tex: TexStatus) {
    super();
    this.tex = tex;
  }
  override answer(c: Command): unknown {
    switch (c.cmd) {
      case "settings":
        return {
          cmd: c.cmd,
          version: "0.1.0",
          data_dir: "/d",
          models: ["openai/gpt-4.1"],
          model_error: null,
          config_path: "/d/config.toml",
          approval: "ask",
          tex: this.tex,
          compact_at: this.compactAt,
          ...(this.budget != null ? { daily_budget_usd: this.budget } : {}),
          today_cost_usd: this.today,
          at_once: this.atOnce,
          rate_limits: this.rateLimits,
          web: webSettings(this.web, this.secrets.has("WEB_SEARCH_KEY")),
          ...(this.languageServers ? { language_servers: this.languageServers } : {}),
        };
      // As crates/skald-service/src/settings.rs checks it.
      case "set_web": {
        const search = c.search.trim().toLowerCase();
        const url = c.search_url.trim();
        if (!(c.timeout_secs >= 1 && c.timeout_secs <= 600)) throw new ServerError(`a fetch's timeout is 1 to 600 seconds, not ${c.timeout_secs}`);
        if (search !== "" && !["provider", "searxng", "brave", "tavily"].includes(search))
          throw new ServerError(`[web] search = "${search}" is not one of provider, searxng, brave, tavily`);
        if (search === "searxng" && url === "") throw new ServerError(`[web] search = "searxng" needs search_url (the instance's address)`);
        if (url !== "" && !/^https?:\/\/[^\s/]+/.test(url)) throw new ServerError(`bad URL ${url}: relative URL without a base`);
        if (this.configRefusal) throw new ServerError(this.configRefusal);
        this.web = { search, search_url: url, provider_search: c.provider_search, timeout_secs: c.timeout_secs };
        return { cmd: c.cmd, web: webSettings(this.web, this.secrets.has("WEB_SEARCH_KEY")) };
      }
      case "set_secret":
        if (this.configRefusal) throw new ServerError(this.configRefusal);
        this.secrets.add(c.name);
        return { cmd: c.cmd };
      // As crates/skald-service/src/settings.rs checks them.
      case "set_compact_at":
        if (c.percent > 100) throw new ServerError(`compact_at is a percent of the model's window, 0 to 100, not ${c.percent}`);
        if (this.configRefusal) throw new ServerError(this.configRefusal);
        this.compactAt = c.percent;
        return { cmd: c.cmd, percent: c.percent };
      case "set_daily_budget":
        if (c.usd != null && !(c.usd > 0)) throw new ServerError(`a daily budget is a positive number of US dollars, not ${c.usd}; to have none, leave it empty`);
        if (this.configRefusal) throw new ServerError(this.configRefusal);
        this.budget = c.usd ?? null;
        return { cmd: c.cmd, ...(c.usd != null ? { usd: c.usd } : {}) };
      case "set_at_once":
        if (c.count > 64) throw new ServerError(`at most 64 agents can be let run at once, not ${c.count}; 0 sets no limit`);
        if (this.configRefusal) throw new ServerError(this.configRefusal);
        this.atOnce = c.count;
        return { cmd: c.cmd, count: c.count };
      case "local_models":
        return { cmd: c.cmd, available: false, folder: "/d/models", installed: [], recommended: [] };
      case "list_mcp":
        return { cmd: c.cmd, servers: this.mcpServers };
      case "mcp_login":
        return new Promise((resolve, reject) => {
          this.login = {
            resolve: () => {
              this.mcpServers = this.mcpServers.map((m) => ({ ...m, status: { state: "ready", tools: 2 } }));
              resolve({ cmd: c.cmd, scopes: ["mcp:read"] });
            },
            reject,
          };
        });
      case "list_rules":
        return { cmd: c.cmd, rules: this.rules };
      case "list_secrets":
        return { cmd: c.cmd, names: [...this.secrets], store: "the OS keyring" };
      case "list_plugins":
        return { cmd: c.cmd, plugins: [] };
      case "build_tex_bundle":
        return new Promise((resolve, reject) => {
          this.build = {
            resolve: () => {
              // As the service does: the bundle is in the data folder, so `tex` says offline.
              this.tex = { bundle: `offline bundle at ${BUNDLE}`, offline: true, system_tex: this.tex.system_tex };
              resolve({ cmd: c.cmd, path: BUNDLE, files: 15012, bytes: 312_000_000 });
            },
            reject,
          };
        });
      default:
        return super.answer(c);
    }
  }
  finishLogin() {
    expect(this.login, "a login was asked for").not.toBeNull();
    this.login!.resolve();
  }
  failLogin(message: string) {
    expect(this.login, "a login was asked for").not.toBeNull();
    this.login!.reject(new ServerError(message));
  }
  finishBuild() {
    expect(this.build, "a build was asked for").not.toBeNull();
    this.build!.resolve();
  }
  failBuild(message: string) {
    expect(this.build, "a build was asked for").not.toBeNull();
    this.build!.reject(new ServerError(message));
  }
}

let container: HTMLDivElement;
let root: Root | null = null;

async function render(server: FakeServer, sessions: SessionInfo[] = []) {
  container = document.createElement("div");
  document.body.appendChild(container);
  root = createRoot(container);
  await act(async () => {
    root!.render(
      <TransportContext.Provider value={server}>
        <AppContext.Provider value={fakeApp({ sessions })}>
          <SettingsView theme="system" onTheme={() => {}} />
        </AppContext.Provider>
      </TransportContext.Provider>,
    );
  });
  await settle();
}

async function unmount() {
  if (!root) return;
  await act(async () => root!.unmount());
  root = null;
  container.remove();
}

const q = (id: string) => container.querySelector<HTMLElement>(`[data-testid='${id}']`);
const section = () => container.querySelector<HTMLElement>("[aria-labelledby='s-latex']")!;

async function click(el: HTMLElement | null) {
  expect(el).not.toBeNull();
  await act(async () => el!.click());
  await settle();
}

afterEach(unmount);

describe("Settings → LaTeX", () => {
  it("shows the offline bundle with its badge, and no build button", async () => {
    const server = new FakeServer({ bundle: `offline bundle at ${BUNDLE}`, offline: true, system_tex: "/usr/share/texlive" });
    await render(server);
    expect(section().querySelector("h2")?.textContent).toBe("LaTeX");
    expect(q("tex-status")?.textContent).toBe(`offline bundle at ${BUNDLE}`);
    expect(q("tex-offline")?.textContent).toBe("Works offline");
    expect(q("tex-build")).toBeNull();
    expect(q("tex-progress")).toBeNull();
    expect(q("tex-hint")).toBeNull();
    // One settings read serves Models and LaTeX.
    expect(server.count("settings")).toBe(1);
  });

  it("builds the offline bundle from the installed TeX Live, with its progress, then reads the settings again", async () => {
    const server = new FakeServer({ bundle: ONLINE, offline: false, system_tex: "/usr/share/texlive" });
    await render(server);
    expect(q("tex-status")?.textContent).toBe(ONLINE);
    expect(q("tex-offline")).toBeNull();
    expect(q("tex-hint")).toBeNull();
    expect(section().textContent).toContain("From the TeX Live in /usr/share/texlive; about a minute.");
    const button = q("tex-build") as HTMLButtonElement;
    expect(button.textContent).toBe("Build offline bundle");
    expect(button.disabled).toBe(false);

    // Another UI's build is not this screen's to show.
    await act(async () => server.emit(null, { type: "tex_bundle", done: 10, total: 20 }));
    expect(q("tex-progress")).toBeNull();

    await click(button);
    expect(server.commands.filter((c) => c.cmd === "build_tex_bundle")).toEqual([{ cmd: "build_tex_bundle" }]);
    expect(button.disabled).toBe(true);
    expect(button.textContent).toBe("Building…");
    expect(q("tex-progress")?.textContent).toBe("Bundling TeX files…");

    await act(async () => server.emit(null, { type: "tex_bundle", done: 4200, total: 15012 }));
    const bar = q("tex-progress")!.querySelector("progress")!;
    expect(q("tex-progress")?.textContent).toBe("Bundling TeX files: 4200/15012");
    expect(bar.value).toBe(4200);
    expect(bar.max).toBe(15012);
    await act(async () => server.emit(null, { type: "tex_bundle", done: 15012, total: 15012 }));
    expect(q("tex-progress")?.textContent).toBe("Bundling TeX files: 15012/15012");

    expect(server.count("settings")).toBe(1);
    await act(async () => server.finishBuild());
    await settle();
    expect(server.count("settings")).toBe(2);
    expect(q("tex-progress")).toBeNull();
    expect(q("tex-build")).toBeNull();
    expect(q("tex-offline")?.textContent).toBe("Works offline");
    expect(q("tex-status")?.textContent).toBe(`offline bundle at ${BUNDLE}`);
    expect(q("tex-result")?.textContent).toBe(`Built the offline bundle: 15012 files, 312.0 MB, at ${BUNDLE}.`);
    expect(q("tex-error")).toBeNull();
  });

  it("shows a failed build's error in the section and offers the button again", async () => {
    const server = new FakeServer({ bundle: ONLINE, offline: false, system_tex: "/usr/share/texlive" });
    await render(server);
    await click(q("tex-build"));
    await act(async () => server.failBuild("the TeX bundle is being built already"));
    await settle();
    const error = q("tex-error")!;
    expect(error.textContent).toContain("the TeX bundle is being built already");
    expect(error.getAttribute("role")).toBe("alert");
    expect(section().contains(error)).toBe(true);
    expect(q("tex-progress")).toBeNull();
    const button = q("tex-build") as HTMLButtonElement;
    expect(button.disabled).toBe(false);
    expect(q("tex-offline")).toBeNull();
    // A new try clears the old error.
    await click(button);
    expect(q("tex-error")).toBeNull();
    expect(server.count("build_tex_bundle")).toBe(2);
  });

  it("follows a build again when Settings is opened again while it runs", async () => {
    const server = new FakeServer({ bundle: ONLINE, offline: false, system_tex: "/usr/share/texlive" });
    await render(server);
    await click(q("tex-build"));
    await unmount();
    await render(server);
    // No second build asked for: the one running is followed.
    expect(server.count("build_tex_bundle")).toBe(1);
    expect((q("tex-build") as HTMLButtonElement).disabled).toBe(true);
    await act(async () => server.emit(null, { type: "tex_bundle", done: 600, total: 15012 }));
    expect(q("tex-progress")?.textContent).toBe("Bundling TeX files: 600/15012");
    await act(async () => server.finishBuild());
    await settle();
    expect(q("tex-offline")?.textContent).toBe("Works offline");
  });

  it("says how to work offline where no TeX Live is installed", async () => {
    const server = new FakeServer({ bundle: ONLINE, offline: false, system_tex: null });
    await render(server);
    expect(q("tex-status")?.textContent).toBe(ONLINE);
    expect(q("tex-build")).toBeNull();
    expect(q("tex-offline")).toBeNull();
    expect(q("tex-hint")?.textContent).toBe(
      "To work offline, install TeX Live (apt install texlive-latex-base texlive-xetex lmodern), then build a bundle here or run skald latex bundle --from-system.",
    );
  });
});

describe("Settings → MCP servers", () => {
  const docs: McpServerInfo = {
    name: "docs",
    enabled: true,
    transport: "http",
    description: "",
    status: { state: "needs_login", expired: true },
    log_tail: [],
    sandbox: false,
    sandbox_network: false,
  };
  const ONLINE_TEX = { bundle: ONLINE, offline: false, system_tex: null };

  it("offers Sign in for a server that needs a login, waits for the browser, then shows it ready", async () => {
    const server = new FakeServer(ONLINE_TEX);
    server.mcpServers = [docs, { ...docs, name: "files", transport: "stdio", status: { state: "ready", tools: 3 } }];
    await render(server);
    const buttons = container.querySelectorAll("[data-testid='mcp-sign-in']");
    expect(buttons.length).toBe(1);
    expect(container.textContent).toContain("login expired");
    const button = buttons[0] as HTMLButtonElement;
    expect(button.textContent).toBe("Sign in");
    await click(button);
    expect(server.commands.filter((c) => c.cmd === "mcp_login")).toEqual([{ cmd: "mcp_login", name: "docs" }]);
    expect(button.disabled).toBe(true);
    expect(button.textContent).toBe("Waiting for the browser…");
    await act(async () => server.finishLogin());
    await settle();
    expect(q("mcp-sign-in")).toBeNull();
    expect(container.textContent).toContain("ready, 2 tools");
  });

  it("shows why a login failed and offers it again", async () => {
    const server = new FakeServer(ONLINE_TEX);
    server.mcpServers = [docs];
    await render(server);
    await click(q("mcp-sign-in"));
    await act(async () => server.failLogin("the browser did not come back within 300 s; run the login again"));
    await settle();
    expect(container.textContent).toContain("the browser did not come back within 300 s");
    const again = q("mcp-sign-in") as HTMLButtonElement;
    expect(again.disabled).toBe(false);
    expect(again.textContent).toBe("Sign in");
  });
});

describe("Settings → Cost and limits", () => {
  const OFFLINE_TEX = { bundle: ONLINE, offline: false, system_tex: null };
  const limitsSection = () => container.querySelector<HTMLElement>("[aria-labelledby='s-limits']")!;
  const budgetInput = () => q("daily-budget") as HTMLInputElement;
  const threshold = () => q("compact-at") as HTMLSelectElement;

  /** Types into a field as a person does (React follows the native setter). */
  async function type(input: HTMLInputElement, value: string) {
    await act(async () => {
      Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value")!.set!.call(input, value);
      input.dispatchEvent(new Event("input", { bubbles: true }));
    });
  }
  async function submit(input: HTMLInputElement) {
    await act(async () => input.form!.requestSubmit());
    await settle();
  }
  async function blur(input: HTMLInputElement) {
    await act(async () => {
      input.focus();
      input.blur();
    });
    await settle();
  }
  async function choose(select: HTMLSelectElement, value: string) {
    await act(async () => {
      select.value = value;
      select.dispatchEvent(new Event("change", { bubbles: true }));
    });
    await settle();
  }
  const turnUsage = (today: number) => ({
    type: "turn_usage",
    session_id: 7,
    requests: 1,
    input_tokens: 10,
    output_tokens: 5,
    cost_usd: 0.02,
    unpriced: 0,
    chat_cost_usd: 0.02,
    today_cost_usd: today,
  });

  it("says what today's model calls cost, from the settings, and follows each turn's", async () => {
    const server = new FakeServer(OFFLINE_TEX);
    server.today = 0.4;
    await render(server, [server.sessionInfo(3)]);
    // The settings say it: no chat is asked.
    expect(server.count("usage")).toBe(0);
    expect(limitsSection().querySelector("h2")?.textContent).toBe("Cost and limits");
    expect(q("today-cost")?.textContent).toContain("Spent today: $0.40");
    expect(q("today-cost")?.textContent).toContain("no known price");
    await act(async () => server.emit(7, turnUsage(0.42)));
    expect(q("today-cost")?.textContent).toContain("Spent today: $0.42");
  });

  it("says it with no chat at all", async () => {
    const server = new FakeServer(OFFLINE_TEX);
    await render(server);
    expect(q("today-cost")?.textContent).toContain("Spent today: $0.00");
    // No budget: the field is empty, and nothing is measured against it.
    expect(budgetInput().value).toBe("");
    expect(q("budget-spent")).toBeNull();
  });

  it("sets the daily budget, shows today against it, warns past 80%, and removes it when emptied", async () => {
    const server = new FakeServer(OFFLINE_TEX);
    server.today = 0.42;
    await render(server);
    await type(budgetInput(), "5");
    await submit(budgetInput());
    expect(server.sent("set_daily_budget")).toEqual([{ cmd: "set_daily_budget", usd: 5 }]);
    const spent = () => q("budget-spent")!;
    expect(spent().textContent).toBe("$0.42 of $5.00 today");
    expect(spent().dataset.level).toBe("ok");
    const bar = spent().querySelector<HTMLElement>("[role='meter']")!;
    expect(bar.getAttribute("aria-valuenow")).toBe("0.42");
    expect(bar.getAttribute("aria-valuemax")).toBe("5");
    expect(bar.querySelector<HTMLElement>(".budget-bar-fill")!.style.width).toBe("8.4%");
    // Leaving the field after Enter saves nothing more.
    await blur(budgetInput());
    expect(server.count("set_daily_budget")).toBe(1);

    // Turns spend: past 80% it warns, past the budget it is over (the bar full).
    await act(async () => server.emit(7, turnUsage(4.2)));
    expect(spent().textContent).toBe("$4.20 of $5.00 today");
    expect(spent().dataset.level).toBe("warn");
    expect(spent().className).toContain("budget-warn");
    await act(async () => server.emit(7, turnUsage(5.5)));
    expect(spent().dataset.level).toBe("over");
    expect(spent().querySelector<HTMLElement>(".budget-bar-fill")!.style.width).toBe("100%");

    // Kept: Settings opened again shows it.
    await unmount();
    await render(server);
    expect(budgetInput().value).toBe("5");
    expect(q("budget-spent")?.textContent).toBe("$0.42 of $5.00 today");

    // Emptied and left: the budget is removed.
    await type(budgetInput(), "");
    await blur(budgetInput());
    expect(server.sent("set_daily_budget").at(-1)).toEqual({ cmd: "set_daily_budget" });
    expect(server.budget).toBeNull();
    expect(q("budget-spent")).toBeNull();
    expect(budgetInput().value).toBe("");
  });

  it("saves with the Save button, writing dollars as people do", async () => {
    const server = new FakeServer(OFFLINE_TEX);
    await render(server);
    await type(budgetInput(), " $12.50 ");
    await click(q("daily-budget-save"));
    expect(server.sent("set_daily_budget")).toEqual([{ cmd: "set_daily_budget", usd: 12.5 }]);
    expect(budgetInput().value).toBe("12.5");
    expect(q("daily-budget-error")).toBeNull();
  });

  it("shows the engine's refusal of a budget, and what is not an amount, under the field", async () => {
    const server = new FakeServer(OFFLINE_TEX);
    server.budget = 5;
    await render(server);
    await type(budgetInput(), "0");
    await submit(budgetInput());
    const error = () => q("daily-budget-error");
    expect(error()?.textContent).toBe("a daily budget is a positive number of US dollars, not 0; to have none, leave it empty");
    expect(error()?.getAttribute("role")).toBe("alert");
    expect(limitsSection().contains(error())).toBe(true);
    expect(budgetInput().getAttribute("aria-invalid")).toBe("true");
    // The budget in force stays, and is still shown against.
    expect(server.budget).toBe(5);
    expect(q("budget-spent")?.textContent).toBe("$0.00 of $5.00 today");

    await type(budgetInput(), "five dollars");
    await submit(budgetInput());
    expect(error()?.textContent).toBe('"five dollars" is not an amount: write US dollars, like 5 or 12.50, or leave it empty for no budget.');
    expect(server.count("set_daily_budget")).toBe(1);

    // A good amount clears the error.
    await type(budgetInput(), "8");
    await submit(budgetInput());
    expect(error()).toBeNull();
    expect(server.budget).toBe(8);
  });

  it("sets the threshold at which older turns are summarised, or only when asked", async () => {
    const server = new FakeServer(OFFLINE_TEX);
    await render(server);
    expect(threshold().value).toBe("80");
    const options = [...threshold().options].map((o) => o.textContent);
    expect(options[0]).toBe("50% of the context window");
    expect(options.at(-2)).toBe("95% of the context window");
    expect(options.at(-1)).toBe("Only when asked");
    await choose(threshold(), "60");
    expect(server.sent("set_compact_at")).toEqual([{ cmd: "set_compact_at", percent: 60 }]);
    expect(threshold().value).toBe("60");
    await choose(threshold(), "0");
    expect(server.sent("set_compact_at").at(-1)).toEqual({ cmd: "set_compact_at", percent: 0 });
    await unmount();
    await render(server);
    expect(threshold().value).toBe("0");
  });

  it("offers a threshold config.toml has that the list lacks, and shows a failed change", async () => {
    const server = new FakeServer(OFFLINE_TEX);
    server.compactAt = 72;
    server.configRefusal = "could not write /d/config.toml: read-only file system";
    await render(server);
    expect(threshold().value).toBe("72");
    expect(threshold().selectedOptions[0]!.textContent).toBe("72% of the context window");
    await choose(threshold(), "90");
    expect(q("compact-at-error")?.textContent).toBe("could not write /d/config.toml: read-only file system");
    expect(threshold().value).toBe("72");
  });

  it("lists the providers' rate limits, counting down to the reset, and follows each rate_limits event", async () => {
    vi.useFakeTimers({ toFake: ["Date", "setInterval", "clearInterval"] });
    try {
      const now = 1_760_000_000_000;
      vi.setSystemTime(now);
      const server = new FakeServer(OFFLINE_TEX);
      server.rateLimits = [
        {
          provider: "openai",
          requests: { limit: 50, remaining: 41, resets_at: now + 130_000 },
          tokens: { limit: 30_000, remaining: 28_500, resets_at: now + 130_000 },
          seen_at: now - 5000,
        },
      ];
      await render(server);
      const items = () => [...container.querySelectorAll<HTMLElement>("[data-testid='rate-limit']")];
      expect(q("rate-limits")?.querySelector("h3")?.textContent).toBe("Rate limits");
      expect(items().map((i) => i.textContent)).toEqual(["openai: 41/50 requests, 28.5k/30k tokens left; resets in 2m 10s"]);
      await act(async () => vi.advanceTimersByTime(1000));
      expect(items()[0]!.textContent).toBe("openai: 41/50 requests, 28.5k/30k tokens left; resets in 2m 9s");

      // Another provider states its own; a newer statement replaces a provider's.
      const anthropic: RateLimitInfo = { provider: "anthropic", requests: { limit: 1000, remaining: 20, resets_at: now + 61_000 }, seen_at: now };
      await act(async () => server.emit(4, { type: "rate_limits", session_id: 4, limits: anthropic }));
      expect(items().map((i) => i.dataset.provider)).toEqual(["anthropic", "openai"]);
      expect(items()[0]!.textContent).toBe("anthropic: 20/1k requests left; resets in 1m");
      // A tenth or less left is marked.
      expect(items()[0]!.className).toBe("low");
      expect(items()[1]!.className).toBe("");
      await act(async () =>
        server.emit(5, { type: "rate_limits", session_id: 5, limits: { provider: "openai", requests: { limit: 50, remaining: 40, resets_at: now + 360_000 }, seen_at: now + 1000 } }),
      );
      expect(items()[1]!.textContent).toBe("openai: 40/50 requests left; resets in 5m 59s");
      // Past the reset, it says so.
      await act(async () => vi.advanceTimersByTime(400_000));
      expect(items()[1]!.textContent).toBe("openai: 40/50 requests left; reset by now");
    } finally {
      vi.useRealTimers();
    }
  });

  it("lists none before any provider stated its limits", async () => {
    const server = new FakeServer(OFFLINE_TEX);
    await render(server);
    expect(q("rate-limits")).toBeNull();
  });
});

describe("Settings → Agents", () => {
  const OFFLINE_TEX = { bundle: ONLINE, offline: false, system_tex: null };
  const field = () => q("at-once") as HTMLInputElement;
  const error = () => q("at-once-error");
  async function type(value: string) {
    await act(async () => {
      Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value")!.set!.call(field(), value);
      field().dispatchEvent(new Event("input", { bubbles: true }));
    });
  }
  async function submit() {
    await act(async () => field().form!.requestSubmit());
    await settle();
  }

  it("shows how many agents run at once, sets it on Enter, and keeps it", async () => {
    const server = new FakeServer(OFFLINE_TEX);
    await render(server);
    const section = container.querySelector<HTMLElement>("[aria-labelledby='s-agents']")!;
    expect(section.querySelector("h2")?.textContent).toBe("Agents");
    expect(section.contains(field())).toBe(true);
    expect(field().value).toBe("4");
    expect(field().labels?.[0]?.textContent).toContain("Agents at once");
    expect(field().min).toBe("0");
    expect(field().max).toBe("64");
    expect(q("at-once-saved")).toBeNull();
    await type("1");
    await submit();
    expect(server.sent("set_at_once")).toEqual([{ cmd: "set_at_once", count: 1 }]);
    expect(q("at-once-saved")?.textContent).toBe("Saved: 1 at once.");
    // Leaving the field after Enter saves nothing more.
    await act(async () => {
      field().focus();
      field().blur();
    });
    await settle();
    expect(server.count("set_at_once")).toBe(1);
    await unmount();
    await render(server);
    expect(field().value).toBe("1");
  });

  it("takes 0 as no limit, saved with Save or on leaving the field", async () => {
    const server = new FakeServer(OFFLINE_TEX);
    await render(server);
    await type("0");
    await click(q("at-once-save"));
    expect(server.sent("set_at_once")).toEqual([{ cmd: "set_at_once", count: 0 }]);
    expect(q("at-once-saved")?.textContent).toBe("Saved: no limit.");
    await type("8");
    await act(async () => {
      field().focus();
      field().blur();
    });
    await settle();
    expect(server.sent("set_at_once").at(-1)).toEqual({ cmd: "set_at_once", count: 8 });
  });

  it("says beside the field what is not a number of agents, and the engine's refusal", async () => {
    const server = new FakeServer(OFFLINE_TEX);
    await render(server);
    await type("65");
    await submit();
    expect(error()?.textContent).toBe("At most 64 agents can run at once; 0 sets no limit.");
    expect(error()?.getAttribute("role")).toBe("alert");
    expect(field().getAttribute("aria-invalid")).toBe("true");
    await type("2.5");
    await submit();
    expect(error()?.textContent).toBe('"2.5" is not a whole number: write one from 0 (no limit) to 64.');
    await type("");
    await submit();
    expect(error()?.textContent).toBe("Write how many agents may run at once: a whole number from 0 (no limit) to 64.");
    expect(server.count("set_at_once")).toBe(0);

    server.configRefusal = "could not write /d/config.toml: read-only file system";
    await type("2");
    await submit();
    expect(error()?.textContent).toBe("could not write /d/config.toml: read-only file system");
    expect(server.atOnce).toBe(4);
    expect(q("at-once-saved")).toBeNull();

    // A good number clears the error.
    server.configRefusal = null;
    await type("2");
    await submit();
    expect(error()).toBeNull();
    expect(server.atOnce).toBe(2);
  });
});

describe("Settings → Web", () => {
  const OFFLINE_TEX = { bundle: ONLINE, offline: false, system_tex: null };
  const webSection = () => container.querySelector<HTMLElement>("[aria-labelledby='s-web']")!;
  const search = () => q("web-search") as HTMLSelectElement;
  const url = () => q("web-search-url") as HTMLInputElement | null;
  const timeout = () => q("web-timeout") as HTMLInputElement;
  const providerSearch = () => q("web-provider-search") as HTMLInputElement | null;
  const keyField = () => q("web-key") as HTMLInputElement | null;
  const error = () => q("web-error");
  async function type(input: HTMLInputElement | null, value: string) {
    expect(input).not.toBeNull();
    await act(async () => {
      Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value")!.set!.call(input, value);
      input!.dispatchEvent(new Event("input", { bubbles: true }));
    });
  }
  /** Enter in a text field: the form is submitted (jsdom does not do it from the key). */
  async function enter(input: HTMLInputElement) {
    await act(async () => input.form!.requestSubmit());
    await settle();
  }
  async function choose(value: string) {
    await act(async () => {
      search().value = value;
      search().dispatchEvent(new Event("change", { bubbles: true }));
    });
    await settle();
  }
  async function key(el: HTMLElement, k: string) {
    await act(async () => {
      el.dispatchEvent(new KeyboardEvent("keydown", { key: k, bubbles: true, cancelable: true }));
    });
    await settle();
  }

  it("says web search is off, and how to set it up, with the fetch timeout", async () => {
    const server = new FakeServer(OFFLINE_TEX);
    await render(server);
    expect(webSection().querySelector("h2")?.textContent).toBe("Web");
    expect(q("web-status")?.textContent).toBe("off");
    expect(q("web-ready")).toBeNull();
    expect(q("web-hint")?.textContent).toBe(HOW_TO_SET_UP);
    expect(search().value).toBe("");
    expect([...search().options].map((o) => [o.value, o.textContent])).toEqual([
      ["", "Off"],
      ["provider", "The provider's own search"],
      ["searxng", "SearXNG"],
      ["brave", "Brave Search"],
      ["tavily", "Tavily"],
    ]);
    // Off: no address, no key, no choice of Anthropic's search.
    expect(url()).toBeNull();
    expect(keyField()).toBeNull();
    expect(providerSearch()).toBeNull();
    expect(q("web-search-note")?.textContent).toContain("Agents cannot search the web");
    expect(timeout().value).toBe("30");
    expect(timeout().labels?.[0]?.textContent).toContain("Fetch timeout");
    // One settings read serves every section.
    expect(server.count("settings")).toBe(1);
  });

  it("sets up SearXNG on Enter, its address required, and shows the status it returns", async () => {
    const server = new FakeServer(OFFLINE_TEX);
    await render(server);
    await choose("searxng");
    expect(url()!.labels?.[0]?.textContent).toBe("Search URL (required)");
    expect(url()!.required).toBe(true);
    expect(url()!.placeholder).toBe("http://127.0.0.1:8888");
    expect(providerSearch()!.checked).toBe(true);
    expect(providerSearch()!.parentElement!.textContent).toBe("Chats on Anthropic use Anthropic's own search");
    expect(q("web-key-stored")).toBeNull();

    // No address: said before anything is sent, beside the field.
    await enter(url()!);
    expect(error()?.textContent).toContain("SearXNG needs its address");
    expect(error()?.getAttribute("role")).toBe("alert");
    expect(url()!.getAttribute("aria-invalid")).toBe("true");
    expect(server.count("set_web")).toBe(0);

    await type(url(), " http://127.0.0.1:8888 ");
    await type(timeout(), "20");
    await enter(url()!);
    expect(server.sent("set_web")).toEqual([{ cmd: "set_web", search: "searxng", search_url: "http://127.0.0.1:8888", provider_search: true, timeout_secs: 20 }]);
    expect(error()).toBeNull();
    expect(q("web-saved")?.textContent).toBe("Saved.");
    expect(q("web-status")?.textContent).toBe("searxng at http://127.0.0.1:8888; chats on Anthropic use Anthropic's own search");
    expect(q("web-ready")?.textContent).toBe("Ready");
    expect(q("web-hint")).toBeNull();
    expect(url()!.value).toBe("http://127.0.0.1:8888");

    // Kept: Settings opened again shows it.
    await unmount();
    await render(server);
    expect(search().value).toBe("searxng");
    expect(url()!.value).toBe("http://127.0.0.1:8888");
    expect(timeout().value).toBe("20");
    expect(q("web-ready")?.textContent).toBe("Ready");
  });

  it("shows the engine's refusal and what is not a timeout inline, keeping everything typed", async () => {
    const server = new FakeServer(OFFLINE_TEX);
    await render(server);
    await choose("searxng");
    await type(url(), "searx.local");
    await type(timeout(), "45");
    await act(async () => providerSearch()!.click());
    await click(q("web-save"));
    expect(server.sent("set_web")).toEqual([{ cmd: "set_web", search: "searxng", search_url: "searx.local", provider_search: false, timeout_secs: 45 }]);
    expect(error()?.textContent).toBe("bad URL searx.local: relative URL without a base");
    expect(webSection().contains(error())).toBe(true);
    expect(q("web-saved")).toBeNull();
    // Nothing lost: the form is as typed, and the status is still the one in force.
    expect(search().value).toBe("searxng");
    expect(url()!.value).toBe("searx.local");
    expect(timeout().value).toBe("45");
    expect(providerSearch()!.checked).toBe(false);
    expect(q("web-status")?.textContent).toBe("off");
    expect(server.web.search).toBe("");

    for (const [typed, said] of [
      ["0", "A fetch's timeout is 1 to 600 seconds, not 0."],
      ["601", "A fetch's timeout is 1 to 600 seconds, not 601."],
      ["1.5", '"1.5" is not a whole number of seconds: write one from 1 to 600.'],
      ["", "Write how long a page fetch may take: a whole number of seconds from 1 to 600."],
    ]) {
      await type(timeout(), typed!);
      await enter(timeout());
      expect(error()?.textContent).toBe(said);
      expect(timeout().getAttribute("aria-invalid")).toBe("true");
    }
    expect(server.count("set_web")).toBe(1);

    // Corrected, it is saved and the error goes.
    await type(url(), "http://searx.local");
    await type(timeout(), "45");
    await enter(url()!);
    expect(error()).toBeNull();
    expect(server.web).toEqual({ search: "searxng", search_url: "http://searx.local", provider_search: false, timeout_secs: 45 });
    expect(q("web-status")?.textContent).toBe("searxng at http://searx.local");
  });

  it("stores Brave's key, reads the settings again, and keeps what is being edited", async () => {
    const server = new FakeServer(OFFLINE_TEX);
    server.web = { search: "brave", search_url: "", provider_search: true, timeout_secs: 30 };
    await render(server);
    expect(q("web-status")?.textContent).toBe("brave is set but its key is not stored");
    expect(q("web-ready")?.textContent).toBe("Not ready");
    expect(q("web-hint")?.textContent).toBe("skald secrets set WEB_SEARCH_KEY");
    // The API's own address is the placeholder; the field is not required.
    expect(url()!.value).toBe("");
    expect(url()!.placeholder).toBe("https://api.search.brave.com/res/v1/web/search");
    expect(url()!.required).toBe(false);
    expect(url()!.labels?.[0]?.textContent).toBe("Search URL");
    expect(q("web-key-stored")?.textContent).toBe("No key stored: Brave Search needs one (WEB_SEARCH_KEY).");
    expect(keyField()!.type).toBe("password");
    const store = () => q("web-key-save") as HTMLButtonElement;
    expect(store().textContent).toBe("Store key");
    expect(store().disabled).toBe(true);

    // An edit not saved yet stays through the settings read after the key.
    await type(timeout(), "60");
    await type(keyField(), "brave-secret");
    await enter(keyField()!);
    expect(server.sent("set_secret")).toEqual([{ cmd: "set_secret", name: "WEB_SEARCH_KEY", value: "brave-secret" }]);
    // Storing the key is not saving the form.
    expect(server.count("set_web")).toBe(0);
    expect(server.count("settings")).toBe(2);
    expect(q("web-key-stored")?.textContent).toBe("A key is stored (WEB_SEARCH_KEY).");
    expect(q("web-key-stored")?.dataset.stored).toBe("1");
    expect(store().textContent).toBe("Replace key");
    expect(keyField()!.value).toBe("");
    expect(q("web-status")?.textContent).toBe("brave at https://api.search.brave.com/res/v1/web/search; chats on Anthropic use Anthropic's own search");
    expect(q("web-ready")?.textContent).toBe("Ready");
    expect(q("web-hint")).toBeNull();
    expect(timeout().value).toBe("60");

    await enter(timeout());
    expect(server.sent("set_web")).toEqual([{ cmd: "set_web", search: "brave", search_url: "", provider_search: true, timeout_secs: 60 }]);
  });

  it("shows a key that could not be stored under its field", async () => {
    const server = new FakeServer(OFFLINE_TEX);
    await render(server);
    await choose("tavily");
    expect(url()!.placeholder).toBe("https://api.tavily.com/search");
    expect(q("web-key-stored")?.textContent).toBe("No key stored: Tavily needs one (WEB_SEARCH_KEY).");
    server.configRefusal = "the secrets store is locked";
    await type(keyField(), "tvly-key");
    await click(q("web-key-save"));
    expect(q("web-key-error")?.textContent).toBe("the secrets store is locked");
    expect(keyField()!.value).toBe("tvly-key");
    expect(search().value).toBe("tavily");
  });

  it("saves on Enter in the select, and the provider's own search keeps the address config.toml has", async () => {
    const server = new FakeServer(OFFLINE_TEX);
    server.web = { search: "searxng", search_url: "http://127.0.0.1:8888", provider_search: true, timeout_secs: 30 };
    await render(server);
    await choose("provider");
    expect(url()).toBeNull();
    expect(providerSearch()).toBeNull();
    expect(q("web-search-note")?.textContent).toBe("Chats on Anthropic use Anthropic's own search; chats on other providers have none.");
    await key(search(), "Enter");
    expect(server.sent("set_web")).toEqual([{ cmd: "set_web", search: "provider", search_url: "http://127.0.0.1:8888", provider_search: true, timeout_secs: 30 }]);
    expect(q("web-status")?.textContent).toBe("chats on Anthropic use Anthropic's own search; on other providers there is none (set a search API for them)");
    expect(q("web-ready")?.textContent).toBe("Ready");

    // Enter on the checkbox saves too; then Off, with Save.
    await choose("brave");
    await key(providerSearch()!, "Enter");
    expect(server.sent("set_web").at(-1)).toMatchObject({ search: "brave" });
    await choose("");
    await click(q("web-save"));
    expect(server.sent("set_web").at(-1)).toEqual({ cmd: "set_web", search: "", search_url: "http://127.0.0.1:8888", provider_search: true, timeout_secs: 30 });
    expect(q("web-status")?.textContent).toBe("off");
    expect(q("web-ready")).toBeNull();
  });

  it("shows a search config.toml names that Skald does not know, and its error", async () => {
    const server = new FakeServer(OFFLINE_TEX);
    server.web = { search: "google", search_url: "", provider_search: true, timeout_secs: 30 };
    await render(server);
    expect(search().value).toBe("google");
    expect(search().selectedOptions[0]!.textContent).toBe("google");
    expect(q("web-ready")?.textContent).toBe("Not ready");
    expect(q("web-hint")?.textContent).toBe("fix [web] in config.toml (docs/web.md)");
    await click(q("web-save"));
    expect(error()?.textContent).toBe('[web] search = "google" is not one of provider, searxng, brave, tavily');
  });
});

describe("Settings → Language servers", () => {
  const OFFLINE_TEX = { bundle: ONLINE, offline: false, system_tex: null };
  const lspSection = () => container.querySelector<HTMLElement>("[aria-labelledby='s-lsp']")!;
  const row = (language: string) => lspSection().querySelector<HTMLElement>(`[data-testid='lsp-${language}']`)!;
  const inRow = (language: string, id: string) => row(language).querySelector<HTMLElement>(`[data-testid='${id}']`);
  /** The page's clipboard: `writeText` as given, or none (undefined). */
  function clipboard(writeText: ((text: string) => Promise<void>) | undefined) {
    Object.defineProperty(navigator, "clipboard", { value: writeText ? { writeText } : undefined, configurable: true });
  }
  afterEach(() => {
    Reflect.deleteProperty(navigator, "clipboard");
    window.getSelection()?.removeAllRanges();
  });

  it("lists each language with the server found, or none and how to install one", async () => {
    const server = new FakeServer(OFFLINE_TEX);
    await render(server);
    expect(lspSection().querySelector("h2")?.textContent).toBe("Language servers");
    // Next to Web, from the one settings read.
    const titles = [...container.querySelectorAll(".settings-section > h2")].map((h) => h.textContent);
    expect(titles.indexOf("Language servers")).toBe(titles.indexOf("Web") + 1);
    expect(server.count("settings")).toBe(1);

    const rows = [...lspSection().querySelectorAll<HTMLElement>(".lsp-row")];
    expect(rows.map((r) => [r.querySelector(".lsp-language")?.textContent, r.dataset.found])).toEqual([
      ["Python", "1"],
      ["TypeScript / JavaScript", "0"],
      ["Rust", "1"],
      ["Go", "0"],
      ["C / C++", "1"],
    ]);

    // Found: the program's file name, then the whole command line.
    expect(inRow("python", "lsp-program")?.textContent).toBe("pyright-langserver");
    expect(inRow("python", "lsp-command")?.textContent).toBe("/usr/local/bin/pyright-langserver --stdio");
    expect(inRow("python", "lsp-command")?.tagName).toBe("CODE");
    expect(inRow("python", "lsp-none")).toBeNull();
    expect(inRow("python", "lsp-install")).toBeNull();
    expect(inRow("rust", "lsp-program")?.textContent).toBe("rust-analyzer");
    expect(inRow("rust", "lsp-command")?.textContent).toBe("/home/me/.cargo/bin/rust-analyzer");
    expect(inRow("c", "lsp-program")?.textContent).toBe("clangd");

    // None: said so, with the command that installs one, as code.
    expect(inRow("typescript", "lsp-none")?.textContent).toBe("none found");
    expect(inRow("typescript", "lsp-program")).toBeNull();
    expect(inRow("typescript", "lsp-command")).toBeNull();
    const install = inRow("typescript", "lsp-install")!;
    expect(install.tagName).toBe("CODE");
    expect(install.textContent).toBe("npm install -g typescript typescript-language-server");
    expect(install.parentElement?.textContent).toContain("To install:");
    expect(inRow("go", "lsp-install")?.textContent).toBe("go install golang.org/x/tools/gopls@latest");
    expect(inRow("go", "lsp-copy")?.getAttribute("aria-label")).toBe("Copy the command that installs a Go server");

    // What they are for, and where another is named.
    const about = q("lsp-about")!;
    expect(about.textContent).toContain("diagnostics, go_to_definition and find_references");
    expect(about.textContent).toContain("[lsp.commands]");
    expect(q("lsp-config-path")?.textContent).toBe("/d/config.toml");
  });

  it("copies an install command, or selects it where there is no clipboard", async () => {
    const writeText = vi.fn(async (_text: string) => {});
    clipboard(writeText);
    const server = new FakeServer(OFFLINE_TEX);
    await render(server);
    expect(inRow("go", "lsp-copied")).toBeNull();
    await click(inRow("go", "lsp-copy"));
    expect(writeText.mock.calls).toEqual([["go install golang.org/x/tools/gopls@latest"]]);
    expect(inRow("go", "lsp-copied")?.textContent).toBe("Copied.");
    expect(inRow("typescript", "lsp-copied")).toBeNull();

    // Refused (no permission, no focus): the command is selected instead.
    clipboard(async () => {
      throw new Error("NotAllowedError");
    });
    await click(inRow("typescript", "lsp-copy"));
    expect(inRow("typescript", "lsp-copied")?.textContent).toBe("Selected: copy it with the keyboard.");
    expect(window.getSelection()?.toString()).toBe("npm install -g typescript typescript-language-server");

    // No clipboard at all: the same.
    clipboard(undefined);
    await click(inRow("go", "lsp-copy"));
    expect(inRow("go", "lsp-copied")?.textContent).toBe("Selected: copy it with the keyboard.");
    expect(window.getSelection()?.toString()).toBe("go install golang.org/x/tools/gopls@latest");
  });

  it("shows a configured server by its program, a path with spaces included", async () => {
    const server = new FakeServer(OFFLINE_TEX);
    server.languageServers = [
      { language: "python", command: "/opt/My Tools/bin/basedpyright-langserver --stdio", install: "npm install -g pyright" },
      { language: "typescript", command: "/usr/bin/node /opt/tsls/lib/cli.mjs --stdio", install: "npm install -g typescript typescript-language-server" },
      { language: "zig", command: null, install: "see zls's releases" },
    ];
    await render(server);
    expect(inRow("python", "lsp-program")?.textContent).toBe("basedpyright-langserver");
    expect(inRow("python", "lsp-command")?.textContent).toBe("/opt/My Tools/bin/basedpyright-langserver --stdio");
    expect(inRow("typescript", "lsp-program")?.textContent).toBe("node");
    // A language this UI does not know is shown as the engine names it.
    expect(row("zig").querySelector(".lsp-language")?.textContent).toBe("zig");
    expect(inRow("zig", "lsp-install")?.textContent).toBe("see zls's releases");
  });

  it("says so when the engine says nothing of language servers", async () => {
    const server = new FakeServer(OFFLINE_TEX);
    server.languageServers = undefined;
    await render(server);
    expect(lspSection().textContent).toContain("This engine has no language servers.");
    expect(lspSection().querySelector(".lsp-row")).toBeNull();
  });

  it("finds the program's file name in a command line", () => {
    expect(programName("/usr/local/bin/pyright-langserver --stdio")).toBe("pyright-langserver");
    expect(programName("/usr/bin/rust-analyzer")).toBe("rust-analyzer");
    expect(programName("gopls")).toBe("gopls");
    expect(programName("/usr/bin/gopls serve -rpc.trace")).toBe("gopls");
    expect(programName("/Users/me/Visual Studio Code.app/Contents/bin/clangd --background-index")).toBe("clangd");
    expect(programName("/usr/bin/node /opt/tsls/lib/cli.mjs --stdio")).toBe("node");
    expect(programName("  /usr/bin/clangd  ")).toBe("clangd");
  });
});

describe("Settings → Approval rules", () => {
  const OFFLINE_TEX = { bundle: ONLINE, offline: false, system_tex: null };
  const rule = (over: Partial<RuleInfo>): RuleInfo => ({
    id: 1,
    group_name: "",
    tool_pattern: "read_file",
    path_pattern: null,
    command_pattern: null,
    agent_id: null,
    working_dir: null,
    action: "allow",
    priority: 0,
    note: "",
    network: false,
    domain_pattern: null,
    ...over,
  });

  it("says the host a web rule is about", async () => {
    const server = new FakeServer(OFFLINE_TEX);
    server.rules = [
      rule({ id: 1, tool_pattern: "web_fetch", domain_pattern: "docs.rs", note: "Always allowed from the Inbox" }),
      rule({ id: 2, tool_pattern: "web_fetch", domain_pattern: "*.python.org" }),
      rule({ id: 3, tool_pattern: "web_fetch", domain_pattern: "tracker.example", action: "deny" }),
      rule({ id: 4, tool_pattern: "execute_cmd", command_pattern: "cargo test*", network: true }),
    ];
    await render(server);
    const rows = [...container.querySelectorAll<HTMLElement>("[aria-labelledby='s-rules'] .row-card code")].map((c) => c.textContent);
    expect(rows).toEqual(["web_fetch · host docs.rs", "web_fetch · host *.python.org", "web_fetch · host tracker.example", "execute_cmd · command cargo test* · with the network"]);
  });
});
