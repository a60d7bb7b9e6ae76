// Settings → LaTeX: which TeX bundle previews use, the "Works offline" badge, building the
// offline bundle from the installed TeX Live with its progress (tex_bundle events), the
// settings read again after the build, a failed build's error, and the hint to install
// TeX Live where there is none. Settings → Models: what today's model calls cost. Settings
// → MCP servers: signing in.

import { act } from "react";
import { createRoot, type Root } from "react-dom/client";
import { afterEach, describe, expect, it } from "vitest";
import { AppContext, TransportContext } from "../app/context";
import { fakeApp } from "../test/fakeApp";
import type { Command, McpServerInfo, SessionInfo, TexStatus } from "../protocol";
import { ServerError } from "../transport";
import { FakeTransport } from "../test/fakeTransport";
import { settle } from "../test/settle";
import { SettingsView } from "./SettingsView";

const ONLINE = "tectonic's online bundle, fetched and cached on the first build, which needs the network";
const BUNDLE = "/home/me/.local/share/skald/tex/bundle.zip";

/** Answers Settings' commands; `build_tex_bundle` waits until the test finishes it. */
class FakeServer extends FakeTransport {
  tex: TexStatus;
  private build: { resolve: () => void; reject: (e: Error) => void } | null = null;
  mcpServers: McpServerInfo[] = [];
  private login: { resolve: () => void; reject: (e: Error) => void } | null = null;
  constructor(tex: TexStatus) {
    super();
    this.tex = tex;
  }
  override answer(c: Command): unknown {
    switch (c.cmd) {
      case "settings":
        return { cmd: c.cmd, version: "0.1.0", data_dir: "/d", models: ["openai/gpt-4.1"], model_error: null, config_path: "/d/config.toml", approval: "ask", tex: this.tex };
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
        return { cmd: c.cmd, rules: [] };
      case "list_secrets":
        return { cmd: c.cmd, names: [], store: "the OS keyring" };
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

describe("Settings → Models", () => {
  it("says what today's model calls cost, and follows each turn's", async () => {
    const server = new FakeServer({ bundle: ONLINE, offline: false, system_tex: null });
    server.today = 0.4;
    await render(server, [server.sessionInfo(3)]);
    expect(server.sent("usage")).toEqual([{ cmd: "usage", session_id: 3 }]);
    expect(q("today-cost")?.textContent).toContain("Spent today: $0.40");
    expect(q("today-cost")?.textContent).toContain("no known price");
    await act(async () =>
      server.emit(7, { type: "turn_usage", session_id: 7, requests: 1, input_tokens: 10, output_tokens: 5, cost_usd: 0.02, unpriced: 0, chat_cost_usd: 0.02, today_cost_usd: 0.42 }),
    );
    expect(q("today-cost")?.textContent).toContain("Spent today: $0.42");
  });

  it("says nothing of it with no chat to ask", async () => {
    const server = new FakeServer({ bundle: ONLINE, offline: false, system_tex: null });
    await render(server);
    expect(server.count("usage")).toBe(0);
    expect(q("today-cost")).toBeNull();
  });
});
