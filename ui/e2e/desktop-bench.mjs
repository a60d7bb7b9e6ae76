// The desktop benchmark `skald-bench --only desktop` runs, inside a display and a D-Bus
// session: the app's start to interactive (from the WebDriver session request to its
// sessions list on screen) and the memory of all its processes with a 10,000-message chat
// open, against WebKitGTK's own MiniBrowser (the same engine, no app) started the same way
// to a page of its own, then showing the same 10,000 messages as a static page. Prints
// one JSON object.
//   dbus-run-session -- xvfb-run -a node ui/e2e/desktop-bench.mjs [runs]
// SKALD_DESKTOP_BIN names the app, SKALD_BIN the `skald` command line (to prepare the store).

import { readdirSync, readFileSync, mkdirSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { seedLongChat, tempDir } from "./harness.mjs";
import { ELEMENT, startDriver, wd } from "./webdriver.mjs";

const runs = Number(process.argv[2] ?? 3);
const N = 10_000;
const bin = process.env.SKALD_DESKTOP_BIN;
const miniBrowser = process.env.MINIBROWSER ?? "/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser";
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const js = (base, id, script) => wd(base, "POST", `/session/${id}/execute/sync`, { script: `return (${script});`, args: [] });

async function until(f, ms = 60_000) {
  const end = Date.now() + ms;
  while (!(await f())) {
    if (Date.now() > end) throw new Error("timed out");
    await sleep(20);
  }
}

/** Memory of a process and all its descendants, in MB: their proportional set sizes
 * (PSS), so the large shared WebKit libraries count once, not once per process. */
function treeRssMb(root) {
  const parent = new Map();
  for (const p of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, "utf8");
      parent.set(Number(p), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // gone meanwhile
    }
  }
  const inTree = (pid) => {
    for (let p = pid; p > 1; p = parent.get(p) ?? 0) if (p === root) return true;
    return false;
  };
  let kb = 0;
  for (const pid of parent.keys()) {
    if (!inTree(pid)) continue;
    try {
      const m = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8").match(/^Pss:\s+(\d+)/m);
      if (m) kb += Number(m[1]);
    } catch {
      // gone meanwhile
    }
  }
  return kb / 1024;
}

/** The newest process whose command line starts with `exe`. */
function pidOf(exe) {
  let best = 0;
  for (const p of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      if (readFileSync(`/proc/${p}/cmdline`, "utf8").split("\0")[0] === exe) best = Math.max(best, Number(p));
    } catch {
      // gone meanwhile
    }
  }
  return best;
}

async function skald() {
  const root = tempDir("skald-bench-desktop-");
  const data = join(root, ".skald-data");
  mkdirSync(data, { recursive: true });
  const id = seedLongChat(data, root, N);
  const d = await startDriver("tauri-driver", (p) => ["--port", String(p)], { SKALD_DATA_DIR: data, SKALD_ROOT: root, SKALD_SECRETS: "file" });
  const start = [];
  const rss = [];
  try {
    for (let r = 0; r < runs; r++) {
      const t0 = Date.now();
      const s = await wd(d.base, "POST", "/session", { capabilities: { alwaysMatch: { browserName: "wry", "tauri:options": { application: bin } } } });
      const sid = s.sessionId;
      await until(async () => (await js(d.base, sid, "document.body.dataset.ready")) === "1");
      start.push(Date.now() - t0);
      const el = await wd(d.base, "POST", `/session/${sid}/element`, { using: "css selector", value: `[data-testid='session-item'][data-session-id='${id}']` });
      await wd(d.base, "POST", `/session/${sid}/element/${el[ELEMENT]}/click`, {});
      await until(async () => await js(d.base, sid, "document.body.textContent.includes('Message 9999:')"));
      await sleep(2000); // idle
      rss.push(treeRssMb(pidOf(bin)));
      await wd(d.base, "DELETE", `/session/${sid}`).catch(() => {});
      await sleep(500);
    }
  } finally {
    d.stop();
  }
  return { start_ms: median(start), rss_mb: median(rss) };
}

async function reference() {
  const text = (i) =>
    i % 2 === 0 ? `Message ${i}: a question about the chapter` : `Message ${i}: an answer with <b>bold</b> text and a list: <ul><li>one</li><li>two</li></ul>`;
  const html = "<!doctype html><meta charset=utf-8><body>" + Array.from({ length: N }, (_, i) => `<div>${text(i)}</div>`).join("") + "</body>";
  const server = createServer((req, res) => {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    res.end(req.url === "/small" ? "<!doctype html><body>ready</body>" : html);
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${server.address().port}/`;
  const d = await startDriver("WebKitWebDriver", (p) => [`--port=${p}`]);
  const start = [];
  const rss = [];
  try {
    for (let r = 0; r < runs; r++) {
      const t0 = Date.now();
      const s = await wd(d.base, "POST", "/session", {
        capabilities: { alwaysMatch: { browserName: "MiniBrowser", "webkitgtk:browserOptions": { binary: miniBrowser, args: ["--automation"] } } },
      });
      const sid = s.sessionId;
      // Started: a page of its own is on screen and answers.
      await wd(d.base, "POST", `/session/${sid}/url`, { url: `${url}small` });
      await until(async () => (await js(d.base, sid, "document.body.textContent")) === "ready");
      start.push(Date.now() - t0);
      // The same 10,000 messages, for the memory.
      await wd(d.base, "POST", `/session/${sid}/url`, { url });
      await until(async () => await js(d.base, sid, "document.body.textContent.includes('Message 9999:')"));
      await sleep(2000);
      rss.push(treeRssMb(pidOf(miniBrowser)));
      await wd(d.base, "DELETE", `/session/${sid}`).catch(() => {});
      await sleep(500);
    }
  } finally {
    d.stop();
    server.close();
  }
  return { start_ms: median(start), rss_mb: median(rss) };
}

const ours = await skald();
const ref = await reference();
console.log(
  JSON.stringify({
    runs,
    messages: N,
    skald_start_ms: ours.start_ms,
    reference_start_ms: ref.start_ms,
    skald_rss_mb: Math.round(ours.rss_mb),
    reference_rss_mb: Math.round(ref.rss_mb),
  }),
);
process.exit(0);
