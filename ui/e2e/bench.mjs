// The UI benchmark `skald-bench --only ui` runs: a 10,000-message chat opened in headless
// Chromium from `skald serve`, against the same browser painting the same 10,000 messages
// as a plain static page (the reference: no app, no protocol, no virtualisation).
// Prints one JSON object on stdout.
//   node ui/e2e/bench.mjs [runs]     (SKALD_BIN names the skald binary)

import { createServer } from "node:http";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { browser, openSkald, seedLongChat, startSkald, tempDir } from "./harness.mjs";

const runs = Number(process.argv[2] ?? 5);
const N = 10_000;

const text = (i) =>
  i % 2 === 0
    ? `Message ${i}: a question about the chapter`
    : `Message ${i}: an answer with **bold** text and a list:\n\n- one\n- two`;

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
  const root = tempDir("skald-bench-ui-");
  const data = join(root, ".skald-data");
  mkdirSync(data, { recursive: true });
  const id = seedLongChat(data, root, N);
  const skald = await startSkald({ root });
  const b = await browser();
  const skaldMs = [];
  const heaps = [];
  try {
    for (let r = 0; r < runs; r++) {
      const { page, context } = await openSkald(b, skald);
      const t0 = await page.evaluate(() => performance.now());
      await page.locator(`[data-testid='session-item'][data-session-id='${id}']`).click();
      await page.waitForFunction(() => document.body.textContent.includes("Message 9999:"), null, { timeout: 60_000 });
      // Painted: the frame after the last message is in the DOM.
      const t1 = await page.evaluate(() => new Promise((ok) => requestAnimationFrame(() => ok(performance.now()))));
      skaldMs.push(t1 - t0);
      heaps.push(await page.evaluate(() => performance.memory?.usedJSHeapSize ?? 0));
      await context.close();
    }
    // The reference: the same messages as one static page.
    const html =
      "<!doctype html><meta charset=utf-8><body>" +
      Array.from({ length: N }, (_, i) => `<div class=m><p>${text(i).replace(/</g, "&lt;")}</p></div>`).join("") +
      "</body>";
    const server = createServer((_, res) => {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      res.end(html);
    });
    await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
    const url = `http://127.0.0.1:${server.address().port}/`;
    const refMs = [];
    for (let r = 0; r < runs; r++) {
      const context = await b.newContext({ viewport: { width: 1400, height: 900 } });
      const page = await context.newPage();
      await page.goto("about:blank");
      const start = Date.now();
      await page.goto(url, { waitUntil: "load" });
      await page.evaluate(() => new Promise((ok) => requestAnimationFrame(() => ok())));
      refMs.push(Date.now() - start);
      await context.close();
    }
    server.close();
    console.log(
      JSON.stringify({
        messages: N,
        runs,
        skald_open_ms: Math.round(median(skaldMs)),
        reference_open_ms: Math.round(median(refMs)),
        skald_js_heap_mb: Math.round(median(heaps) / 1e5) / 10,
      }),
    );
  } finally {
    await b.close();
    await skald.stop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
