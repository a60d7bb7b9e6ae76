// The desktop app end to end: the real `skald-desktop` binary in a virtual display (Xvfb),
// driven through tauri-driver and WebKitGTK's WebDriver, against a scripted model server.
// Messages go through Tauri IPC, files through the app's URI scheme.
// Run inside a display and a D-Bus session (the single-instance lock uses D-Bus):
//   dbus-run-session -- xvfb-run -a node --test ui/e2e/desktop.e2e.mjs
// (SKALD_DESKTOP_BIN names the binary; scripts/test.sh does this).

import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { call, commandsAsk, say, screenshotsDir, scriptedModel, tempDir } from "./harness.mjs";
import { ELEMENT, startDriver, wd } from "./webdriver.mjs";

const repo = resolve(import.meta.dirname, "../..");
const bin =
  process.env.SKALD_DESKTOP_BIN ??
  join(process.env.CARGO_TARGET_DIR ?? join(repo, "target"), "debug", "skald-desktop");
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** tauri-driver, in this process's display and D-Bus session. */
const startTauriDriver = (env) => startDriver("tauri-driver", (port) => ["--port", String(port)], env);

/** A minimal W3C WebDriver client: what these tests need and nothing else. */
class Session {
  constructor(base, id) {
    this.base = base;
    this.id = id;
  }
  static async start(base, args = []) {
    const v = await wd(base, "POST", "/session", {
      capabilities: { alwaysMatch: { browserName: "wry", "tauri:options": { application: bin, args } } },
    });
    return new Session(base, v.sessionId);
  }
  cmd(method, path, body) {
    return wd(this.base, method, `/session/${this.id}${path}`, body);
  }
  async find(css) {
    const v = await this.cmd("POST", "/element", { using: "css selector", value: css });
    return v[ELEMENT];
  }
  /** Waits (up to `ms`) for `css` to match; its element id. */
  async wait(css, ms = 30_000) {
    const until = Date.now() + ms;
    for (;;) {
      try {
        return await this.find(css);
      } catch (e) {
        if (Date.now() > until) throw new Error(`no ${css}: ${e.message}`);
        await sleep(150);
      }
    }
  }
  async waitFor(script, ms = 30_000) {
    const until = Date.now() + ms;
    while (!(await this.js(script))) {
      if (Date.now() > until) throw new Error(`timed out waiting for: ${script}`);
      await sleep(150);
    }
  }
  js(script, ...args) {
    return this.cmd("POST", "/execute/sync", { script: `return (${script});`, args });
  }
  click(el) {
    return this.cmd("POST", `/element/${el}/click`, {});
  }
  type(el, text) {
    return this.cmd("POST", `/element/${el}/value`, { text });
  }
  text(el) {
    return this.cmd("GET", `/element/${el}/text`);
  }
  async screenshot(name) {
    const png = await this.cmd("GET", "/screenshot");
    mkdirSync(screenshotsDir, { recursive: true });
    writeFileSync(join(screenshotsDir, name), Buffer.from(png, "base64"));
  }
  quit() {
    return this.cmd("DELETE", "").catch(() => {});
  }
}

/** Opens the viewer pane with its shortcut (Ctrl+Shift+E), unless it is open. */
async function openViewer(s) {
  if (await s.js("!!document.querySelector(\"[data-testid='viewer-path']\")")) return;
  await s.js("window.dispatchEvent(new KeyboardEvent('keydown', { key: 'E', ctrlKey: true, shiftKey: true, bubbles: true }))");
  await s.wait("[data-testid='viewer-path']");
}

/**
 * The app processes started for the test marked `marker`: an argument each test's app is
 * launched with and that a restart keeps. Found by their command line, which stays
 * readable (Skald makes itself non-dumpable, so another user's view of its /proc/PID/exe
 * and environ is closed) — and not by the binary's path, which a restart does not keep:
 * Tauri starts the canonical path of the binary again, so a relative or symlinked
 * SKALD_DESKTOP_BIN names the first process and not the second.
 */
function appPids(marker) {
  const pids = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    let argv;
    try {
      argv = readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0");
    } catch {
      continue; // gone meanwhile
    }
    if (basename(argv[0] ?? "") === basename(bin) && argv.includes(marker)) pids.push(Number(name));
  }
  return pids.sort((a, b) => a - b);
}

/** Ends the test's app processes, however they were started, and waits until they are gone. */
async function endApps(marker) {
  for (const signal of ["SIGTERM", "SIGKILL"]) {
    for (const p of appPids(marker)) {
      try {
        process.kill(p, signal);
      } catch {
        /* gone already */
      }
    }
    for (let i = 0; i < 50 && appPids(marker).length > 0; i++) await sleep(100);
    if (appPids(marker).length === 0) return;
  }
}

async function withApp(script, files, body) {
  const root = tempDir("skald-desktop-");
  const marker = `--skald-e2e=${basename(root)}`;
  for (const [name, content] of Object.entries(files)) writeFileSync(join(root, name), content);
  const model = script ? await scriptedModel(script) : null;
  commandsAsk(join(root, ".skald-data"));
  const env = {
    SKALD_DATA_DIR: join(root, ".skald-data"),
    SKALD_ROOT: root,
    SKALD_SECRETS: "file",
    ...(model ? { OPENAI_BASE_URL: model.baseUrl, OPENAI_API_KEY: "sk-desktop", SKALD_MODEL: "scripted-model" } : {}),
  };
  const driver = await startTauriDriver(env);
  let s;
  try {
    s = await Session.start(driver.base, [marker]);
    await s.waitFor("document.body.dataset.ready === '1'", 60_000);
    await body({ s, root, model, env, marker });
  } catch (e) {
    throw new Error(`${e.message}\n--- tauri-driver ---\n${driver.log().slice(-3000)}`);
  } finally {
    await s?.quit();
    driver.stop();
    // Nothing the test started outlives it (a restarted app is no child of the driver).
    await endApps(marker);
    await model?.close();
  }
}

const hasApp =
  existsSync(bin) &&
  !!process.env.DISPLAY &&
  !!process.env.DBUS_SESSION_BUS_ADDRESS &&
  spawnSync("sh", ["-c", "command -v tauri-driver && command -v WebKitWebDriver"]).status === 0;
const needs = !hasApp && "needs skald-desktop, tauri-driver, WebKitWebDriver, a display and a D-Bus session";
// In CI the tests must run, not skip.
if (!hasApp && process.env.SKALD_DESKTOP_REQUIRED) throw new Error(needs);

test("the desktop app chats over IPC, approves a write from the Inbox and shows a file", { skip: needs }, async () => {
  await withApp(
    [say(["Hello from ", "the desktop."]), call("w1", "write_file", { path: "notes.md", content: "# Notes\n\nWritten by the agent.\n" }), say(["Done."])],
    { "notes.md": "# Notes\n\nOld.\n" },
    async ({ s, root }) => {
      // A message round-trips through Tauri IPC against the scripted model. A first
      // window on a cold machine can still be settling when it says it is ready: the
      // click is repeated until the new chat is there.
      for (let i = 0; ; i++) {
        await s.click(await s.wait("[data-testid='new-session']"));
        try {
          await s.wait("[data-testid='message-list'][data-loaded='1']", 10_000);
          break;
        } catch (e) {
          const seen = await s.js("document.body.innerText.slice(0, 600)");
          if (i === 2) throw new Error(`${e.message}; the window shows: ${seen}`);
        }
      }
      const composer = await s.wait("[data-testid='composer']");
      await s.type(composer, "Say hello");
      await s.click(await s.wait("[data-testid='send']"));
      await s.waitFor("[...document.querySelectorAll(\"[data-testid='message'][data-role='assistant']\")].some(m => m.textContent.includes('Hello from the desktop.'))");
      // The Inbox answers an approval.
      await s.type(composer, "Update the notes");
      await s.click(await s.wait("[data-testid='send']"));
      await s.waitFor("document.querySelector(\"[data-testid='inbox-badge']\")?.textContent?.trim() === '1'");
      await s.click(await s.wait("[data-testid='nav-inbox']"));
      const item = await s.wait("[data-testid='inbox-item'] [data-testid='approve']");
      await s.screenshot("desktop-inbox.png");
      await s.click(item);
      await s.waitFor("!document.querySelector(\"[data-testid='inbox-item']\")");
      for (let i = 0; i < 100 && !readFileSync(join(root, "notes.md"), "utf8").includes("Written by the agent"); i++) await sleep(100);
      assert.match(readFileSync(join(root, "notes.md"), "utf8"), /Written by the agent/);
      // A file opens in the viewer, through the app's file scheme for its parts.
      await s.click(await s.wait("[data-testid='nav-chat']"));
      await openViewer(s);
      const path = await s.wait("[data-testid='viewer-path']");
      await s.type(path, join(root, "notes.md"));
      await s.click(await s.wait("[data-testid='viewer-open']"));
      await s.waitFor("document.querySelector(\"[data-testid='viewer-markdown'] h1\")?.textContent === 'Notes'");
      await s.screenshot("desktop.png");
    },
  );
});

// The sandbox helper ships beside the app's binary (scripts/package.sh installs it as
// /usr/bin/skald-sandbox next to /usr/bin/skald-desktop), and the app finds it there: the
// chat header says the chat's commands are sandboxed, and an approved command writes in
// the chat's folder but not beside it. (Run against the packaged binary with
// SKALD_DESKTOP_BIN=…/usr/bin/skald-desktop.) Where this machine cannot sandbox (the
// helper is there but its own probe fails), the header must say so instead.
test("the desktop app finds its sandbox helper and runs an approved command in it", { skip: needs }, async () => {
  const helper = join(dirname(bin), "skald-sandbox");
  assert.ok(existsSync(helper), `no sandbox helper beside ${bin}`);
  const sandboxes = spawnSync(helper, ["--probe"]).status === 0;
  const outside = `${tempDir("skald-outside-")}/written`;
  const command = `echo in > inside.txt; echo out > ${outside} || echo refused-outside`;
  await withApp(
    [call("c1", "execute_cmd", { command }), say(["Ran it."])],
    {},
    async ({ s, root }) => {
      await s.click(await s.wait("[data-testid='new-session']"));
      await s.wait("[data-testid='message-list'][data-loaded='1']");
      const badge = await s.wait("[data-testid='sandbox-badge']");
      const available = await s.js("arguments[0].getAttribute('data-available')", { [ELEMENT]: badge });
      assert.equal(available, sandboxes ? "1" : "0", `the helper ${helper} ${sandboxes ? "confines" : "does not"}`);
      if (!sandboxes) return;
      assert.equal((await s.text(badge)).trim(), "Sandbox: workspace-write · network off");
      const composer = await s.wait("[data-testid='composer']");
      await s.type(composer, "Write a file");
      await s.click(await s.wait("[data-testid='send']"));
      await s.waitFor("document.querySelector(\"[data-testid='inbox-badge']\")?.textContent?.trim() === '1'");
      await s.click(await s.wait("[data-testid='nav-inbox']"));
      await s.click(await s.wait("[data-testid='inbox-item'] [data-testid='approve']"));
      await s.click(await s.wait("[data-testid='nav-chat']"));
      await s.waitFor("[...document.querySelectorAll(\"[data-testid='message'][data-role='assistant']\")].some(m => m.textContent.includes('Ran it.'))");
      assert.equal(readFileSync(join(root, "inside.txt"), "utf8"), "in\n");
      assert.ok(!existsSync(outside), `${outside} was written from the sandbox`);
    },
  );
});

const hostile = `<!doctype html><div id="r">pending</div><script>
const out = [];
try { out.push("internals:" + (window.__TAURI_INTERNALS__ ? "present" : "absent")); } catch (e) { out.push("internals:blocked"); }
try { out.push("parent:" + (parent.__TAURI_INTERNALS__ ? "open" : "blocked")); } catch (e) { out.push("parent:blocked"); }
try { out.push("storage:" + (localStorage ? "open" : "blocked")); } catch (e) { out.push("storage:blocked"); }
const done = () => { document.getElementById("r").textContent = out.join(" "); };
try {
  window.__TAURI_INTERNALS__.invoke("request", { request: { id: 1, command: { cmd: "list_sessions" } } })
    .then(() => { out.push("ipc:open"); done(); }, () => { out.push("ipc:blocked"); done(); });
} catch (e) { out.push("ipc:blocked"); done(); }
fetch("ipc://localhost/request", { method: "POST", body: "{}" }).then(() => out.push("fetch:open"), () => out.push("fetch:blocked")).finally(done);
</script>`;

test("an HTML preview in the desktop app cannot reach IPC", { skip: needs }, async () => {
  await withApp(null, { "page.html": hostile }, async ({ s, root }) => {
    await openViewer(s);
    await s.type(await s.wait("[data-testid='viewer-path']"), join(root, "page.html"));
    await s.click(await s.wait("[data-testid='viewer-open']"));
    const frame = await s.wait("iframe[data-testid='viewer-html'], [data-testid='viewer-html'] iframe");
    assert.equal(await s.js("arguments[0].getAttribute('sandbox')", { [ELEMENT]: frame }), "allow-scripts");
    await s.cmd("POST", "/frame", { id: { [ELEMENT]: frame } });
    const until = Date.now() + 20_000;
    let text = "pending";
    while (Date.now() < until) {
      text = await s.js("document.getElementById('r')?.textContent ?? 'pending'");
      if (text.includes("ipc:") && text.includes("fetch:")) break;
      await sleep(200);
    }
    await s.cmd("POST", "/frame/parent", {});
    console.log(`the preview's own report: ${text}`);
    for (const part of ["internals:absent", "parent:blocked", "ipc:blocked", "fetch:blocked"]) {
      assert.ok(text.includes(part), `${part} not in "${text}"`);
    }
  });
});

/** Closes the window as a window manager's close button does (the app hides to the tray). */
function closeWindow(marker) {
  const newest = String(appPids(marker).at(-1) ?? "");
  const r = spawnSync("/usr/bin/python3", [join(import.meta.dirname, "wm_close.py"), "Skald", newest], { encoding: "utf8" });
  assert.equal(r.status, 0, `wm_close: ${r.stderr}`);
}

/** Sends a message from the composer (the click works on a hidden window too). */
async function send(s, text) {
  const composer = await s.wait("[data-testid='composer']");
  await s.type(composer, text);
  await s.js("document.querySelector(\"[data-testid='send']\").click()");
}

/** Opens a new chat, repeating the first click on a cold window (see the first test). */
async function newChat(s) {
  for (let i = 0; ; i++) {
    await s.click(await s.wait("[data-testid='new-session']"));
    try {
      await s.wait("[data-testid='message-list'][data-loaded='1']", 10_000);
      return;
    } catch (e) {
      if (i === 2) throw e;
    }
  }
}

/** The pid holding the single-instance lock (its D-Bus name), or null. */
function lockHolder() {
  const r = spawnSync(
    "dbus-send",
    ["--session", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus.GetConnectionUnixProcessID", "string:app.skald.desktop.SingleInstance"],
    { encoding: "utf8" },
  );
  const m = r.status === 0 && r.stdout.match(/uint32 (\d+)/);
  return m ? Number(m[1]) : null;
}

test("closing hides the window to the tray; a second launch brings it back and exits", { skip: needs }, async () => {
  await withApp(null, {}, async ({ s, env, marker }) => {
    await s.waitFor("document.visibilityState === 'visible'");
    closeWindow(marker);
    await s.waitFor("document.visibilityState === 'hidden'");
    // Still running (in the tray), still answering.
    assert.equal(await s.js("document.body.dataset.ready"), "1");
    // The same display and D-Bus session as the first (both are this process's).
    const second = spawnSync("timeout", ["30", bin], { env: { ...process.env, ...env }, encoding: "utf8" });
    assert.equal(second.status, 0, `second launch: ${second.stderr}`);
    // The first is in front again.
    await s.waitFor("document.visibilityState === 'visible'");
  });
});

const hasDunst = spawnSync("sh", ["-c", "command -v dunst && command -v dunstctl"]).status === 0;
if (hasApp && !hasDunst && process.env.SKALD_DESKTOP_REQUIRED) throw new Error("the notification test needs dunst");

test("a notification for an approval opens its Inbox item when clicked", { skip: needs || (!hasDunst && "needs dunst") }, async () => {
  // A real notification server on this D-Bus session: dunst, on the virtual display. The
  // bus is started outside the display (dbus-run-session runs xvfb-run), so a dunst the bus
  // activates by itself has no display and dies: the bus is told the display first, and
  // the name's owner is asked with NameHasOwner, which activates nothing (dunstctl would,
  // and such a failed activation once kept this test's own dunst from the name in CI).
  spawnSync("dbus-send", [
    "--session",
    "--dest=org.freedesktop.DBus",
    "--type=method_call",
    "/org/freedesktop/DBus",
    "org.freedesktop.DBus.UpdateActivationEnvironment",
    `dict:string:string:DISPLAY,${process.env.DISPLAY ?? ""}`,
  ]);
  const owned = () =>
    (spawnSync(
      "dbus-send",
      [
        "--session",
        "--print-reply=literal",
        "--dest=org.freedesktop.DBus",
        "/org/freedesktop/DBus",
        "org.freedesktop.DBus.NameHasOwner",
        "string:org.freedesktop.Notifications",
      ],
      { encoding: "utf8" },
    ).stdout ?? "").includes("true");
  let dunst = spawn("dunst", [], { stdio: "ignore" });
  try {
    // Dunst must own the notification name before the app notifies, or the notification
    // is lost; one that exited early is started again.
    const up = Date.now() + 30_000;
    while (!owned()) {
      if (Date.now() > up) throw new Error("dunst did not start");
      if (dunst.exitCode !== null || dunst.signalCode !== null) dunst = spawn("dunst", [], { stdio: "ignore" });
      await sleep(100);
    }
    await withApp(
      [call("c1", "execute_cmd", { command: "echo notified" }), say(["Ran it."])],
      {},
      async ({ s, marker }) => {
        await newChat(s);
        closeWindow(marker);
        await s.waitFor("document.visibilityState === 'hidden'");
        await send(s, "Run echo");
        // The window is hidden: the approval becomes an OS notification.
        const until = Date.now() + 30_000;
        while (spawnSync("dunstctl", ["count", "displayed"], { encoding: "utf8" }).stdout.trim() === "0") {
          if (Date.now() > until) throw new Error("no notification was shown");
          await sleep(200);
        }
        // Clicking it (its default action) brings the window up on the item.
        assert.equal(spawnSync("dunstctl", ["action", "0"]).status, 0);
        await s.waitFor("document.visibilityState === 'visible'");
        await s.wait("[data-testid='inbox-item'][data-focused='1'] [data-testid='approve']");
        await s.screenshot("desktop-notification.png");
        await s.click(await s.wait("[data-testid='inbox-item'][data-focused='1'] [data-testid='approve']"));
        await s.waitFor("!document.querySelector(\"[data-testid='inbox-item']\")");
      },
    );
  } finally {
    dunst.kill();
  }
});

test("an approved restart starts the app again and keeps the chat", { skip: needs }, async () => {
  await withApp(
    [call("r1", "restart", { reason: "new settings" }), say(["Restarting now."])],
    {},
    async ({ s, root, env, marker }) => {
      const first = appPids(marker);
      assert.equal(first.length, 1, "one app process");
      await newChat(s);
      await send(s, "Restart please");
      await s.click(await s.wait("[data-testid='nav-inbox']"));
      await s.wait("[data-testid='inbox-item'] [data-testid='approve']");
      // Clicked from a timer, so that the WebDriver command has returned before the app
      // leaves: a click whose answer races the window's end fails in tauri-driver
      // ("fetch failed") on a loaded machine.
      await s.js("setTimeout(() => document.querySelector(\"[data-testid='inbox-item'] [data-testid='approve']\").click(), 100), true");
      // The turn ends, the app leaves, the same binary starts again (with the same
      // arguments, so with the test's marker).
      let restarted = [];
      for (const until = Date.now() + 60_000; ; ) {
        const now = appPids(marker);
        if (!now.includes(first[0]) && now.length === 1) {
          restarted = now;
          break;
        }
        if (Date.now() > until) throw new Error(`no restart: processes ${now}`);
        await sleep(200);
      }
      // The new one takes the single-instance lock once it has started...
      for (const until = Date.now() + 60_000; lockHolder() !== restarted[0]; ) {
        if (Date.now() > until) throw new Error(`the lock is held by ${lockHolder()}, not ${restarted[0]}`);
        await sleep(200);
      }
      // ...so a further launch hands over to it and exits...
      const again = spawnSync("timeout", ["30", bin], { env: { ...process.env, ...env }, encoding: "utf8" });
      assert.equal(again.status, 0, `launch after restart: ${again.stderr}`);
      assert.deepEqual(appPids(marker), restarted);
      // ...and the chat was saved to its end before the restart.
      const py = "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print(c.execute(\"select content from chat_history where role='assistant' order by id desc limit 1\").fetchone()[0])";
      const last = spawnSync("python3", ["-c", py, join(root, ".skald-data", "skald.db")], { encoding: "utf8" });
      assert.match(last.stdout, /Restarting now\./, last.stderr);
    },
  );
});
