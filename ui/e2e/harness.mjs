// The end-to-end harness: a real `skald serve` process, a scripted model server speaking
// the OpenAI streaming protocol over a real socket on 127.0.0.1, and Debian's Chromium
// driven by playwright-core. Nothing of Skald is mocked.

import { execFileSync, spawn, spawnSync } from "node:child_process";
import { createServer } from "node:http";
import { mkdtempSync, mkdirSync, existsSync, realpathSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { chromium } from "playwright-core";

const repo = resolve(import.meta.dirname, "../..");

export const skaldBin =
  process.env.SKALD_BIN ??
  join(process.env.CARGO_TARGET_DIR ?? join(repo, "target"), "debug", "skald");

export const screenshotsDir = join(repo, "docs", "screenshots");

/** A temporary folder, resolved (macOS and some CI machines put tmp behind a symlink). */
export function tempDir(prefix = "skald-e2e-") {
  return realpathSync(mkdtempSync(join(tmpdir(), prefix)));
}

/**
 * A temporary folder that sandboxed commands see as it is, for a test about what a command
 * does there: not in /tmp, which each command sees as a private, empty folder of its own.
 * In the home folder, as `.skald-test-*` (crates/skald-testkit's `tempdir_seen_by_commands`);
 * the caller removes it.
 */
export function homeTempDir(prefix = ".skald-test-") {
  const home = homedir();
  if (!home || home.startsWith("/tmp") || home.startsWith("/var/tmp")) throw new Error(`this test needs a home folder outside /tmp and /var/tmp, not ${home}`);
  return realpathSync(mkdtempSync(join(home, prefix)));
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** One OpenAI chunk as an SSE event. */
const chunk = (delta, finish = null) =>
  `data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

/** A streamed text answer, `pieces` sent `gapMs` apart. */
export const say = (pieces, gapMs = 120) => ({ kind: "text", pieces, gapMs });

/** A streamed tool call. */
export const call = (id, name, args) => ({ kind: "tool", id, name, args });

/**
 * A model server that answers each request with the next reply of `script` (a list, or a
 * function of the request body). Records every request body. A reply may carry response
 * `headers` of its own (a provider's `x-ratelimit-*`) and the `usage` its final chunk
 * states (10 tokens in, 5 out unless it says). A reply may be a promise: the request waits,
 * unanswered, until it settles (a model that is slow until the test says).
 */
export async function scriptedModel(script) {
  const requests = [];
  const headers = [];
  const queue = Array.isArray(script) ? [...script] : null;
  const server = createServer(async (req, res) => {
    let body = "";
    for await (const part of req) body += part;
    let parsed = {};
    try {
      parsed = JSON.parse(body);
    } catch {
      // Not a model request: answered with an error below.
    }
    requests.push(parsed);
    headers.push(req.headers);
    const reply = await (queue ? queue.shift() : script(parsed, requests.length - 1));
    if (!reply) {
      res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: "the script has no reply left" } }));
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", ...reply.headers });
    if (reply.kind === "text") {
      res.write(chunk({ role: "assistant", content: "" }));
      for (const p of reply.pieces) {
        if (res.destroyed) return;
        res.write(chunk({ content: p }));
        await sleep(reply.gapMs);
      }
      res.write(chunk({}, "stop"));
    } else {
      res.write(
        chunk({
          role: "assistant",
          tool_calls: [
            {
              index: 0,
              id: reply.id,
              type: "function",
              function: { name: reply.name, arguments: JSON.stringify(reply.args) },
            },
          ],
        }),
      );
      res.write(chunk({}, "tool_calls"));
    }
    const usage = reply.usage ?? { prompt_tokens: 10, completion_tokens: 5 };
    res.write(`data: ${JSON.stringify({ choices: [], usage })}\n\n`);
    res.end("data: [DONE]\n\n");
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address();
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    headers,
    close: () => new Promise((r) => server.close(r)),
  };
}

/**
 * Makes every command ask, as with no sandbox (docs/sandbox.md): these tests are about the
 * approval cards, which a sandboxed command no rule names would skip.
 */
export function commandsAsk(data) {
  mkdirSync(data, { recursive: true });
  const config = join(data, "config.toml");
  if (!existsSync(config)) writeFileSync(config, '[sandbox]\nask = "always"\n');
}

/**
 * `skald serve` on a free port, working in `root`, its data in `data` (`root/.skald-data`
 * unless given). Resolves once its URL is printed.
 */
export async function startSkald({ root, model, env = {}, modelFromEnv = true, data = join(root, ".skald-data") }) {
  if (!existsSync(skaldBin)) throw new Error(`no skald binary at ${skaldBin}; build it first`);
  commandsAsk(data);
  const bundle = join(repo, "tests", "tex", "bundle.zip");
  const child = spawn(skaldBin, ["--data-dir", data, "serve", "--port", "0", "--root", root], {
    env: {
      ...process.env,
      SKALD_SECRETS: "file",
      // A UI built elsewhere (`vite build --outDir /tmp/…`) while ui/dist is in use.
      SKALD_UI_DIR: process.env.SKALD_UI_DIR ?? join(repo, "ui", "dist"),
      ...(existsSync(bundle) ? { SKALD_TEX_BUNDLE: bundle } : {}),
      ...(model && modelFromEnv
        ? { OPENAI_BASE_URL: model.baseUrl, OPENAI_API_KEY: "sk-e2e", SKALD_MODEL: "scripted-model" }
        : {}),
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  const url = await new Promise((ok, fail) => {
    let out = "";
    const timer = setTimeout(() => fail(new Error(`skald serve printed no URL; stderr: ${stderr}`)), 30_000);
    child.stdout.on("data", (d) => {
      out += d;
      const m = out.match(/http:\/\/skald-[0-9a-f]+\.localhost:\d+\/\?token=[0-9a-f]+/);
      if (m) {
        clearTimeout(timer);
        ok(m[0]);
      }
    });
    child.on("exit", (code) => fail(new Error(`skald serve exited (${code}): ${stderr}`)));
  });
  return {
    url,
    origin: new URL(url).origin,
    data,
    /** What the server has printed on stderr so far (for a failure's report). */
    stderr: () => stderr,
    stop: () =>
      new Promise((r) => {
        if (child.exitCode !== null) return r();
        child.on("exit", () => r());
        child.kill("SIGINT");
        setTimeout(() => child.kill("SIGKILL"), 5000);
      }),
  };
}

/** Debian's Chromium, headless, with the flags this machine's closed network needs. */
export async function browser() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
    ],
  });
}

/** A page on Skald's URL, once the UI has loaded its sessions. */
export async function openSkald(b, skald, viewport = { width: 1400, height: 900 }) {
  const context = await b.newContext({ viewport });
  const page = await context.newPage();
  const problems = [];
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(`console: ${m.text()}`);
  });
  await page.goto(skald.url);
  await page.waitForSelector("body[data-ready='1']", { timeout: 30_000 });
  return { page, context, problems };
}

/** Clicks "New chat" and waits for the new chat's (empty) history. */
export async function newChat(page) {
  const before = await page.getByTestId("session-item").count();
  await page.getByTestId("new-session").click();
  await page.waitForFunction(
    (n) => document.querySelectorAll("[data-testid='session-item']").length > n,
    before,
  );
  await page.waitForSelector("[data-testid='message-list'][data-loaded='1']");
}

/** Types a message into the composer and sends it with Enter. */
export async function send(page, text) {
  const composer = page.getByTestId("composer");
  await composer.fill(text);
  await composer.press("Enter");
}

/**
 * Waits (three minutes at most) for the chat's assistant to have answered and the turn to
 * have ended. A local model's speed depends on the machine, so a timeout says what the
 * chat showed, what the server logged and what else was using the CPU: a slow run can be
 * told from a hang.
 */
export async function waitForAnswer(page, skald) {
  try {
    await page.waitForFunction(
      () =>
        [...document.querySelectorAll("[data-testid='message'][data-role='assistant']")].some(
          (m) => m.textContent.trim().length > 0,
        ) && !document.querySelector("[data-testid='stop']"),
      null,
      { timeout: 180_000 },
    );
  } catch (e) {
    const shown = await page
      .locator("[data-testid='message']")
      .allTextContents()
      .catch(() => []);
    const busiest = spawnSync("ps", ["-eo", "pcpu,etime,args", "--sort=-pcpu"], { encoding: "utf8" })
      .stdout?.split("\n")
      .slice(0, 8)
      .map((l) => l.slice(0, 160))
      .join("\n");
    throw new Error(
      `${e.message}\nthe chat showed: ${JSON.stringify(shown.map((t) => t.slice(0, 300)))}\n` +
        `the server's log (end): ${skald.stderr().slice(-3000)}\nthe busiest processes:\n${busiest}`,
    );
  }
}

/** A chat of `n` messages written straight into a migrated store, as a long-lived chat. */
export function seedLongChat(data, root, n) {
  execFileSync(skaldBin, ["--data-dir", data, "sessions", "list"], { env: { ...process.env, SKALD_SECRETS: "file" } });
  const py = `
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1])
now = int(time.time() * 1000)
cur = db.execute("INSERT INTO chat_sessions (title, agent_id, kind, working_dir, created_at, updated_at) VALUES (?, 'main', 'interactive', ?, ?, ?)", ("Long chat", sys.argv[2], now, now))
sid = cur.lastrowid
rows = []
for i in range(int(sys.argv[3])):
    role = "user" if i % 2 == 0 else "assistant"
    text = f"Message {i}: " + ("a question about the chapter" if role == "user" else "an answer with **bold** text and a list:\\n\\n- one\\n- two")
    rows.append((sid, role, text, now - (100000 - i)))
db.executemany("INSERT INTO chat_history (session_id, role, content, created_at) VALUES (?, ?, ?, ?)", rows)
db.commit()
print(sid)
`;
  return Number(execFileSync("python3", ["-c", py, join(data, "skald.db"), root, String(n)]).toString().trim());
}
