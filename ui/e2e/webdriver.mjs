// The small W3C WebDriver pieces the desktop tests and the desktop benchmark share: a
// driver process (tauri-driver or WebKitWebDriver) on a free loopback port, and requests.

import { spawn } from "node:child_process";
import { createServer } from "node:net";

/** The key under which WebDriver returns an element's id. */
export const ELEMENT = "element-6066-11e4-a52e-4f735466cecf";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function freePort() {
  const s = createServer();
  await new Promise((r) => s.listen(0, "127.0.0.1", r));
  const { port } = s.address();
  await new Promise((r) => s.close(r));
  return port;
}

/**
 * Starts `cmd` with the arguments `args(port)` in its own process group and waits until it
 * answers `/status`. Returns its base URL, its output so far, and how to stop it.
 */
export async function startDriver(cmd, args, env = {}) {
  const port = await freePort();
  const child = spawn(cmd, args(port), {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let log = "";
  child.stdout.on("data", (d) => (log += d));
  child.stderr.on("data", (d) => (log += d));
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(`${base}/status`)).ok) break;
    } catch {
      // not up yet
    }
    if (child.exitCode !== null) throw new Error(`${cmd} exited: ${log}`);
    await sleep(100);
  }
  return {
    base,
    log: () => log,
    stop: () => {
      try {
        process.kill(-child.pid, "SIGTERM");
      } catch {
        // already gone
      }
    },
  };
}

/** One WebDriver request; its `value`, or an error naming the request and the answer. */
export async function wd(base, method, path, body) {
  const r = await fetch(`${base}${path}`, {
    method,
    headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const v = await r.json();
  if (!r.ok) throw new Error(`${method} ${path}: ${JSON.stringify(v.value ?? v)}`);
  return v.value;
}
