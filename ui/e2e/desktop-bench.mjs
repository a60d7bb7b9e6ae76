// The desktop benchmark `skald-bench --only desktop` runs, inside a display and a D-Bus
// session: the app's start to interactive (from the WebDriver session request to its
// sessions list on screen) and the memory of all its processes, empty and with a
// 10,000-message chat open, against Tauri 2's hello-world window (crates/tauri-hello: the
// same Tauri, WebKitGTK and window size, a static page) started the same way. Memory is
// also given per process, with the page's element count, to show where it goes. Both are
// measured in each rendering: Skald as configured by default (`[desktop] rendering =
// "auto"`, which paints in software where there is no GPU driver) and with `rendering =
// "gpu"`; the hello-world as Tauri ships it (OpenGL compositing) and painting in software
// (WEBKIT_DISABLE_COMPOSITING_MODE, WebKitGTK's switch for the same thing). Prints one
// JSON object.
//   dbus-run-session -- xvfb-run -a node ui/e2e/desktop-bench.mjs [runs]
// SKALD_DESKTOP_BIN names the app, TAURI_HELLO_BIN the hello-world, SKALD_BIN the `skald`
// command line (to prepare the store).

import { readdirSync, readFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { seedLongChat, tempDir } from "./harness.mjs";
import { ELEMENT, startDriver, wd } from "./webdriver.mjs";

const runs = Number(process.argv[2] ?? 3);
const N = 10_000;
const bin = process.env.SKALD_DESKTOP_BIN;
const hello = process.env.TAURI_HELLO_BIN;
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
 * (PSS), so the large shared WebKit libraries count once, not once per process. `total`,
 * and `by` process name (the app, WebKitWebProcess, WebKitNetworkProcess). */
function treeMemory(root) {
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
  const by = {};
  let total = 0;
  for (const pid of parent.keys()) {
    if (!inTree(pid)) continue;
    try {
      const m = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8").match(/^Pss:\s+(\d+)/m);
      if (!m) continue;
      const mb = Number(m[1]) / 1024;
      const name = pid === root ? "app" : readFileSync(`/proc/${pid}/comm`, "utf8").trim();
      by[name] = (by[name] ?? 0) + mb;
      total += mb;
    } catch {
      // gone meanwhile
    }
  }
  return { total, by };
}

/** The run whose total is the median, so its parts add up to the figure shown. */
function medianRun(samples) {
  const sorted = [...samples].sort((a, b) => a.total - b.total);
  return sorted[Math.floor(sorted.length / 2)];
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

const elements = (d, sid) => js(d.base, sid, "document.getElementsByTagName('*').length");

async function skald(rendering) {
  const root = tempDir("skald-bench-desktop-");
  const data = join(root, ".skald-data");
  mkdirSync(data, { recursive: true });
  const id = seedLongChat(data, root, N);
  if (rendering) writeFileSync(join(data, "config.toml"), `[desktop]\nrendering = "${rendering}"\n`);
  const d = await startDriver("tauri-driver", (p) => ["--port", String(p)], { SKALD_DATA_DIR: data, SKALD_ROOT: root, SKALD_SECRETS: "file" });
  const start = [];
  const empty = [];
  const chat = [];
  try {
    for (let r = 0; r < runs; r++) {
      const t0 = Date.now();
      const s = await wd(d.base, "POST", "/session", { capabilities: { alwaysMatch: { browserName: "wry", "tauri:options": { application: bin } } } });
      const sid = s.sessionId;
      await until(async () => (await js(d.base, sid, "document.body.dataset.ready")) === "1");
      start.push(Date.now() - t0);
      await sleep(2000); // idle
      empty.push({ ...treeMemory(pidOf(bin)), elements: await elements(d, sid) });
      const el = await wd(d.base, "POST", `/session/${sid}/element`, { using: "css selector", value: `[data-testid='session-item'][data-session-id='${id}']` });
      await wd(d.base, "POST", `/session/${sid}/element/${el[ELEMENT]}/click`, {});
      await until(async () => await js(d.base, sid, "document.body.textContent.includes('Message 9999:')"));
      await sleep(2000); // idle
      chat.push({ ...treeMemory(pidOf(bin)), elements: await elements(d, sid) });
      await wd(d.base, "DELETE", `/session/${sid}`).catch(() => {});
      await sleep(500);
    }
  } finally {
    d.stop();
  }
  return { start_ms: median(start), empty: medianRun(empty), chat: medianRun(chat) };
}

async function reference(env = {}) {
  const d = await startDriver("tauri-driver", (p) => ["--port", String(p)], env);
  const start = [];
  const empty = [];
  try {
    for (let r = 0; r < runs; r++) {
      const t0 = Date.now();
      const s = await wd(d.base, "POST", "/session", { capabilities: { alwaysMatch: { browserName: "wry", "tauri:options": { application: hello } } } });
      const sid = s.sessionId;
      await until(async () => await js(d.base, sid, "document.body.textContent.includes('Hello, world.')"));
      start.push(Date.now() - t0);
      await sleep(2000); // idle, as the app is measured
      empty.push({ ...treeMemory(pidOf(hello)), elements: await elements(d, sid) });
      await wd(d.base, "DELETE", `/session/${sid}`).catch(() => {});
      await sleep(500);
    }
  } finally {
    d.stop();
  }
  return { start_ms: median(start), empty: medianRun(empty) };
}

const ours = await skald();
const oursGpu = await skald("gpu");
const ref = await reference();
const refCpu = await reference({ WEBKIT_DISABLE_COMPOSITING_MODE: "1" });
const round = (m) => ({ total_mb: Math.round(m.total), by_mb: Object.fromEntries(Object.entries(m.by).map(([k, v]) => [k, Math.round(v)])), elements: m.elements });
console.log(
  JSON.stringify({
    runs,
    messages: N,
    skald_start_ms: ours.start_ms,
    skald_gpu_start_ms: oursGpu.start_ms,
    hello_start_ms: ref.start_ms,
    hello_cpu_start_ms: refCpu.start_ms,
    skald_empty: round(ours.empty),
    skald_chat: round(ours.chat),
    skald_gpu_empty: round(oursGpu.empty),
    skald_gpu_chat: round(oursGpu.chat),
    hello: round(ref.empty),
    hello_cpu: round(refCpu.empty),
  }),
);
process.exit(0);
