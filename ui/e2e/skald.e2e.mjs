// End to end in headless Chromium against `skald serve` and a scripted model server:
// what a person does in the UI, checked on disk and in what the model was sent.
// Run with `npm run e2e` (after `cargo build -p skald-cli` and `npm run build`).

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, rmSync, writeFileSync, existsSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import { createServer } from "node:http";
import { createHash } from "node:crypto";
import { crc32, deflateSync } from "node:zlib";
import {
  browser,
  call,
  homeTempDir,
  newChat,
  openSkald,
  say,
  screenshotsDir,
  scriptedModel,
  seedLongChat,
  send,
  startSkald,
  tempDir,
  waitForAnswer,
} from "./harness.mjs";

let b;
before(async () => {
  mkdirSync(screenshotsDir, { recursive: true });
  b = await browser();
});
after(async () => {
  await b?.close();
});

/**
 * Runs `body` with a fresh folder, model, server and page; cleans up whatever happens.
 * `env` is added to the server's environment. `seenByCommands`: the folder (`paper`) and
 * the data directory (`data`, beside it, so worktrees are made in `data-worktrees`) are in
 * a `.skald-test-*` folder of the home folder — sandboxed commands see /tmp as a private
 * empty folder of their own — removed at the end; `body` gets that folder as `base`.
 */
async function withSkald(script, body, files = {}, env = {}, { seenByCommands = false } = {}) {
  const base = seenByCommands ? homeTempDir() : null;
  const root = base ? join(base, "paper") : tempDir();
  mkdirSync(root, { recursive: true });
  try {
    for (const [name, content] of Object.entries(files)) {
      mkdirSync(join(root, name, ".."), { recursive: true });
      writeFileSync(join(root, name), content);
    }
    const model = script ? await scriptedModel(script) : null;
    const skald = await startSkald({ root, model, env, ...(base ? { data: join(base, "data") } : {}) });
    const { page, context, problems } = await openSkald(b, skald);
    try {
      await body({ page, root, model, skald, base });
      // Failed loads the test provoked on purpose are not the UI's errors.
      const real = problems.filter((p) => !p.includes("403") && !p.includes("Content Security Policy"));
      assert.deepEqual(real, [], "the page logged errors");
    } finally {
      await context.close();
      await skald.stop();
      await model?.close();
    }
  } finally {
    if (base) rmSync(base, { recursive: true, force: true });
  }
}

const assistantText = (page) =>
  page.evaluate(() =>
    [...document.querySelectorAll("[data-testid='message'][data-role='assistant']")]
      .map((m) => m.textContent)
      .join("\n"),
  );

async function openInViewer(page, path) {
  if (!(await page.getByTestId("viewer-path").isVisible())) {
    await page.keyboard.press("Control+Shift+E");
  }
  await page.getByTestId("viewer-path").fill(path);
  await page.getByTestId("viewer-open").click();
}

test("a message streams its answer, rendered as Markdown", async () => {
  await withSkald([say(["Hello ", "from ", "**Skald**", ", streaming ", "as it ", "comes."], 300)], async ({ page, model }) => {
    await newChat(page);
    await send(page, "Say hello");
    // The answer shows while it streams, not only at the end.
    await page.getByTestId("streaming").waitFor({ timeout: 20_000 });
    const partial = await assistantText(page);
    assert.ok(!partial.includes("as it comes."), `already complete while streaming: ${partial}`);
    await page.waitForFunction(
      () => document.querySelector("[data-testid='message'][data-role='assistant'] strong")?.textContent === "Skald",
      null,
      { timeout: 20_000 },
    );
    await page.getByTestId("streaming").waitFor({ state: "detached", timeout: 20_000 });
    assert.match(await assistantText(page), /Hello from Skald, streaming as it comes\./);
    // Token usage per chat, from the provider's usage report.
    await page.getByTestId("token-usage").filter({ hasText: "10 in · 5 out" }).waitFor({ timeout: 10_000 });
    assert.equal(model.requests.length, 1);
    assert.match(JSON.stringify(model.requests[0].messages), /Say hello/);
    await page.screenshot({ path: join(screenshotsDir, "chat.png") });
  });
});

/** A real PNG of `width`×`height`, its pixels made by `pixel(x, y)` ([r, g, b, a]). */
function png(width, height, pixel, level = 6) {
  const raw = Buffer.alloc((width * 4 + 1) * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) raw.set(pixel(x, y), y * (width * 4 + 1) + 1 + x * 4);
  }
  const chunk = (type, data) => {
    const head = Buffer.alloc(8);
    head.writeUInt32BE(data.length, 0);
    head.write(type, 4, "latin1");
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
    return Buffer.concat([head, data, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 6, 0, 0, 0], 8);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", ihdr),
    chunk("IDAT", deflateSync(raw, { level })),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

/** Pastes files (name, MIME type, base64) into the composer as a clipboard does. */
async function pasteFiles(page, files) {
  await page.getByTestId("composer").focus();
  await page.evaluate((files) => {
    const dt = new DataTransfer();
    for (const f of files) {
      const bytes = Uint8Array.from(atob(f.base64), (c) => c.charCodeAt(0));
      dt.items.add(new File([bytes], f.name, { type: f.type }));
    }
    document.activeElement.dispatchEvent(new ClipboardEvent("paste", { clipboardData: dt, bubbles: true, cancelable: true }));
  }, files);
}

/** Whether the image of a selector has loaded (its bytes reached the page). */
const loaded = (page, selector) =>
  page.waitForFunction((sel) => [...document.querySelectorAll(sel)].some((img) => img.complete && img.naturalWidth > 0), selector, {
    timeout: 20_000,
  });

// Images in (docs/images.md): a screenshot pasted in the composer is attached at once and
// shown as a thumbnail; sent, the model is given it as an `image_url` part with its bytes,
// and the chat shows it — also after a reload, read back from the store — and opens it
// whole until Escape.
test("an image pasted in the composer reaches the model and shows in the chat", async () => {
  const shot = png(40, 24, (x, y) => (x < 20 ? [220, 40, 40, 255] : [40, 40, 220, y * 10]));
  const base64 = shot.toString("base64");
  await withSkald([say(["A red and a blue square."])], async ({ page, model, skald }) => {
    await newChat(page);
    await pasteFiles(page, [{ name: "screenshot.png", type: "image/png", base64 }]);
    const attachment = page.locator("[data-testid='attachment'][data-state='ready']");
    await attachment.waitFor({ timeout: 20_000 });
    assert.equal((await attachment.textContent()).trim(), "screenshot.png");
    await loaded(page, "[data-testid='attachment'] img");
    // The scripted model is taken to see images: nothing to warn of.
    assert.equal(await page.getByTestId("image-warning").count(), 0);
    await page.getByTestId("composer").fill("What is on this screen?");
    await page.getByTestId("composer").press("Enter");
    await waitForAnswer(page, skald);
    assert.equal(await page.getByTestId("attachment").count(), 0);

    const user = model.requests[0].messages.filter((m) => m.role === "user").at(-1);
    assert.ok(Array.isArray(user.content), `the message is sent in parts: ${JSON.stringify(user).slice(0, 300)}`);
    assert.deepEqual(
      user.content.filter((p) => p.type === "image_url"),
      [{ type: "image_url", image_url: { url: `data:image/png;base64,${base64}` } }],
    );
    assert.match(JSON.stringify(user.content), /What is on this screen\?/);

    const thumb = "[data-testid='message'][data-role='user'] [data-testid='chat-image'] img";
    await loaded(page, thumb);
    await page.screenshot({ path: join(screenshotsDir, "images.png") });
    // After a reload the chat reads it back from the store (`get_image`).
    await page.reload();
    await page.waitForSelector("[data-testid='message-list'][data-loaded='1']", { timeout: 30_000 });
    await loaded(page, thumb);
    assert.deepEqual(await page.locator(thumb).evaluate((img) => [img.naturalWidth, img.naturalHeight, img.src.slice(0, 5)]), [40, 24, "blob:"]);
    await page.locator("[data-testid='chat-image']").first().click();
    const lightbox = page.getByTestId("lightbox");
    await lightbox.waitFor();
    await loaded(page, "[data-testid='lightbox'] img");
    assert.match(await lightbox.textContent(), /screenshot\.png.*40×24/);
    await page.keyboard.press("Escape");
    await lightbox.waitFor({ state: "detached" });
  });
});

// A large image (over the WebSocket's usual 16 MiB frame once in base64) chosen with the
// attach button is attached; with a model that cannot see, the composer says so before
// sending and the model is told an image was there, not sent it.
test("a large image is attached from the file picker, and a model that cannot see is warned of", async () => {
  // 2400×1800 in stored deflate blocks: 17 MB, 23 MB as base64.
  const big = png(2400, 1800, (x, y) => [x & 255, y & 255, (x ^ y) & 255, 255], 0);
  assert.ok(big.length > 16 * 1024 * 1024, `${big.length} bytes`);
  const tiny = png(2, 2, () => [0, 0, 0, 255]);
  await withSkald(
    [say(["I cannot see it."])],
    async ({ page, model, skald }) => {
      await newChat(page);
      await page.getByTestId("attach-image-input").setInputFiles([
        { name: "photo.png", mimeType: "image/png", buffer: big },
        { name: "tiny.png", mimeType: "image/png", buffer: tiny },
      ]);
      await page.locator("[data-testid='attachment'][data-state='ready']").nth(1).waitFor({ timeout: 60_000 });
      assert.deepEqual(await page.getByTestId("attachment").allTextContents(), ["photo.png", "tiny.png"]);
      const warning = page.getByTestId("image-warning");
      await warning.waitFor();
      assert.match(await warning.textContent(), /openai\/scripted-model cannot see images/);
      assert.equal(await warning.count(), 1);
      await page.screenshot({ path: join(screenshotsDir, "images-warning.png") });
      // Removed from the keyboard.
      await page.getByRole("button", { name: "Remove tiny.png" }).focus();
      await page.keyboard.press("Delete");
      assert.deepEqual(await page.getByTestId("attachment").allTextContents(), ["photo.png"]);
      await page.getByTestId("send").click();
      await waitForAnswer(page, skald);
      const sent = JSON.stringify(model.requests[0].messages);
      assert.ok(!sent.includes("image_url"), "an image was sent to a model that cannot see");
      assert.match(sent, /\[1 image attached here; the model answering \(openai\/scripted-model\) cannot see images\]/);
      await page.locator("[data-testid='message'][data-role='user'] [data-testid='chat-image']").waitFor();
    },
    {
      ".skald-data/config.toml": '[sandbox]\nask = "always"\n\n[models.vision]\n"openai/scripted-*" = false\n',
    },
  );
});

test("a write is approved from its diff and the file changes", async () => {
  await withSkald(
    [call("w1", "write_file", { path: "notes.txt", content: "first line\nsecond line, new\n" }), say(["Written."])],
    async ({ page, root }) => {
      await newChat(page);
      await send(page, "update the notes");
      const card = page.getByTestId("approval-card").first();
      await card.waitFor({ timeout: 20_000 });
      const diff = card.getByTestId("diff-view");
      await diff.waitFor();
      const diffText = await diff.textContent();
      assert.match(diffText, /second line, new/);
      assert.match(diffText, /second line, old/);
      await page.screenshot({ path: join(screenshotsDir, "approval.png") });
      await card.getByTestId("approve").click();
      await page.locator("[data-testid='tool-card'][data-tool='write_file'][data-status='done']").waitFor({ timeout: 20_000 });
      await page.waitForFunction(() =>
        [...document.querySelectorAll("[data-testid='message'][data-role='assistant']")].some((m) =>
          m.textContent.includes("Written."),
        ),
      );
      assert.equal(readFileSync(join(root, "notes.txt"), "utf8"), "first line\nsecond line, new\n");
    },
    { "notes.txt": "first line\nsecond line, old\n" },
  );
});

// Checkpoints (docs/ui.md): the approved write's card says what it changed and shows the
// diff; "Restore to before this" (confirmed) brings the file back on disk, and the
// restore's "Undo restore" the written content; restoring with "Also rewind the
// conversation" opens a new chat with the messages before the call.
test("a write's checkpoint shows its diff, restores the file, undoes the restore and rewinds the chat", async () => {
  const oldText = "first line\nsecond line, old\n";
  const newText = "first line\nsecond line, new\n";
  await withSkald(
    [call("cp1", "write_file", { path: "notes.md", content: newText }), say(["Written."])],
    async ({ page, root }) => {
      const onDisk = () => readFileSync(join(root, "notes.md"), "utf8");
      await newChat(page);
      await send(page, "update the notes");
      const approval = page.getByTestId("approval-card").first();
      await approval.waitFor({ timeout: 20_000 });
      await approval.getByTestId("approve").click();
      const card = page.locator("[data-testid='tool-card'][data-tool='write_file']");
      const summary = card.getByTestId("checkpoint-summary");
      await summary.waitFor({ timeout: 20_000 });
      assert.equal((await summary.textContent()).trim(), "1 file changed: notes.md +1 −1");
      // A restore waits for the turn's end.
      await page.waitForFunction(
        () =>
          [...document.querySelectorAll("[data-testid='message'][data-role='assistant']")].some((m) => m.textContent.includes("Written.")) &&
          !document.querySelector("[data-testid='stop']"),
        null,
        { timeout: 20_000 },
      );
      assert.equal(onDisk(), newText);

      await summary.click();
      await card.locator("[data-testid='checkpoint-file']").filter({ hasText: "notes.md" }).waitFor();
      await card.getByTestId("checkpoint-show-diff").click();
      const diff = card.getByTestId("checkpoint-diff");
      await diff.waitFor({ timeout: 10_000 });
      assert.deepEqual(await diff.locator(".diff-add .code").allTextContents(), ["second line, new"]);
      assert.deepEqual(await diff.locator(".diff-del .code").allTextContents(), ["second line, old"]);

      await card.getByTestId("checkpoint-restore").click();
      const dialog = page.getByTestId("restore-dialog");
      await dialog.waitFor();
      assert.match(await dialog.textContent(), /every later call/);
      // Escape closes it and nothing is restored; confirmed, the file comes back.
      await page.keyboard.press("Escape");
      await dialog.waitFor({ state: "detached" });
      assert.equal(onDisk(), newText);
      await card.getByTestId("checkpoint-restore").click();
      await dialog.getByTestId("restore-dialog-confirm").click();
      const restored = page.getByTestId("restore-line").first();
      await restored.waitFor({ timeout: 20_000 });
      assert.match(await restored.textContent(), /Folder restored to before .+ — 1 file changed/);
      assert.equal(onDisk(), oldText);
      await page.screenshot({ path: join(screenshotsDir, "checkpoint.png") });

      await restored.getByTestId("restore-undo").click();
      await page.locator("[data-testid='restore-line'][data-undone='1']").waitFor({ timeout: 20_000 });
      const undo = page.getByTestId("restore-line").nth(1);
      assert.match(await undo.getByTestId("restore-text").textContent(), /Restore undone/);
      assert.equal(onDisk(), newText);
      assert.equal(await page.getByTestId("checkpoint-error").count(), 0);

      // Restored again, this time rewinding the conversation too: a new chat with what came
      // before the call opens, and the original keeps every message.
      const original = await page.locator(".session.active").getAttribute("data-session-id");
      const chats = await page.getByTestId("session-item").count();
      await card.getByTestId("checkpoint-restore").click();
      await dialog.waitFor();
      const rewind = dialog.getByTestId("restore-dialog-rewind");
      assert.equal(await rewind.isChecked(), false);
      await rewind.click();
      assert.equal(await rewind.isChecked(), true);
      await dialog.getByTestId("restore-dialog-confirm").click();
      await page.waitForFunction(
        (id) => {
          const active = document.querySelector(".session.active");
          return active && active.getAttribute("data-session-id") !== id && document.querySelector("[data-testid='message-list'][data-loaded='1']");
        },
        original,
        { timeout: 20_000 },
      );
      assert.equal(onDisk(), oldText);
      assert.equal(await page.getByTestId("session-item").count(), chats + 1);
      await page.locator("[data-testid='message'][data-role='user']").filter({ hasText: "update the notes" }).waitFor({ timeout: 10_000 });
      assert.doesNotMatch(await assistantText(page), /Written\./);
      await page.locator(`[data-testid='session-item'][data-session-id='${original}'] .session-main`).click();
      await page.waitForFunction(() => [...document.querySelectorAll("[data-testid='message'][data-role='assistant']")].some((m) => m.textContent.includes("Written.")), null, {
        timeout: 20_000,
      });
      assert.equal(await page.getByTestId("checkpoint-error").count(), 0);
    },
    { "notes.md": oldText },
  );
});

test("a write is rejected with a note that reaches the model", async () => {
  await withSkald(
    [call("w2", "write_file", { path: "other.txt", content: "x" }), say(["Understood, leaving it."])],
    async ({ page, root, model }) => {
      await newChat(page);
      await send(page, "write the other file");
      const card = page.getByTestId("approval-card").first();
      await card.waitFor({ timeout: 20_000 });
      await card.getByTestId("reject").click();
      await card.getByTestId("reject-note").fill("not that file, please");
      await card.getByTestId("reject-confirm").click();
      await page.locator("[data-testid='tool-card'][data-tool='write_file'][data-status='rejected']").waitFor({ timeout: 20_000 });
      await page.waitForFunction(() =>
        [...document.querySelectorAll("[data-testid='message'][data-role='assistant']")].some((m) =>
          m.textContent.includes("Understood, leaving it."),
        ),
      );
      assert.ok(!existsSync(join(root, "other.txt")));
      assert.match(JSON.stringify(model.requests[1].messages), /not that file, please/);
    },
  );
});

// A long multi-line command with terminal and bidi controls: every line is shown, whole
// and escaped, in the Inbox card and in the chat's tool card — nothing is cut at the
// label's 120 characters, joined onto one line or left raw to hide or reorder text.
test("an approval shows a long multi-line command whole, every line, with controls escaped", async () => {
  const lines = [
    "echo start " + "a".repeat(200),
    "printf 'ok\u001b[2K\u001b[1A'",
    "cp report.pdf \u202efdp.exe",
    "echo zero\u200bwidth\u2066isolate\u2069",
    "touch the-last-line-" + "z".repeat(40),
  ];
  const shown = [
    lines[0],
    "printf 'ok\\x1b[2K\\x1b[1A'",
    "cp report.pdf \\u{202e}fdp.exe",
    "echo zero\\u{200b}width\\u{2066}isolate\\u{2069}",
    lines[4],
  ];
  await withSkald([call("m1", "execute_cmd", { command: lines.join("\n") }), say(["Not run."])], async ({ page }) => {
    await newChat(page);
    await send(page, "run the script");
    const check = async (card, where) => {
      const args = card.getByTestId("approval-arguments");
      await args.waitFor({ timeout: 20_000 });
      const rows = args.locator("[data-arg='command'] [data-testid='arg-line'] .code");
      assert.deepEqual(await rows.allTextContents(), shown, `${where}: every line, whole and escaped`);
      for (let i = 0; i < shown.length; i++) {
        assert.ok(await rows.nth(i).isVisible(), `${where}: line ${i + 1} is visible`);
        const box = await rows.nth(i).boundingBox();
        assert.ok(box && box.height >= 8 && box.width >= 8, `${where}: line ${i + 1} has room: ${JSON.stringify(box)}`);
      }
      const text = await card.evaluate((el) => el.textContent + " " + el.getAttribute("aria-label") + " " + (el.querySelector(".card-label")?.getAttribute("title") ?? ""));
      assert.ok(!/[\u001b\u202e\u200b\u2066\u2069]/.test(text), `${where}: no raw control characters: ${JSON.stringify(text)}`);
      assert.ok((await card.locator(".esc").count()) >= 6, `${where}: escapes are marked`);
    };
    const chatCard = page.locator("[data-testid='tool-card'][data-tool='execute_cmd'] [data-testid='approval-card']").first();
    await chatCard.waitFor({ timeout: 20_000 });
    await check(chatCard, "chat");
    await page.screenshot({ path: join(screenshotsDir, "approval-multiline.png") });
    await page.getByTestId("nav-inbox").click();
    const item = page.getByTestId("inbox-item").first();
    await item.waitFor();
    await check(item.getByTestId("approval-card"), "Inbox");
    await item.getByTestId("reject").click();
    await item.getByTestId("reject-confirm").click();
    await page.getByTestId("inbox-item").first().waitFor({ state: "detached", timeout: 20_000 });
  });
});

// The chat header says how its commands run (docs/sandbox.md), and its menu changes the
// chat's own setting, which the next turn's approval card then shows. The harness writes
// `[sandbox] ask = "always"`, so the command still asks.
test("the chat header shows the sandbox, its menu changes it, and the approval card says it", async () => {
  await withSkald([call("s1", "execute_cmd", { command: "ls" }), say(["Not run."])], async ({ page }) => {
    await newChat(page);
    const badge = page.getByTestId("sandbox-badge");
    await badge.waitFor({ timeout: 20_000 });
    assert.equal(await badge.getAttribute("data-mode"), "workspace-write");
    const available = (await badge.getAttribute("data-available")) === "1";
    const note = await badge.getAttribute("title");
    assert.match(note, /workspace-write/);
    if (available) {
      assert.equal((await badge.textContent()).trim(), "Sandbox: workspace-write · network off");
      assert.match(note, /each asks first/);
    } else {
      // A machine without the sandbox says so, and every command asks.
      assert.equal((await badge.textContent()).trim(), "Not sandboxed");
      assert.match(note, /not available here/);
    }

    await badge.click();
    const menu = page.getByTestId("sandbox-menu");
    await menu.waitFor();
    assert.match(await menu.textContent(), /Applies from the next turn\./);
    // Escape closes it; the badge opens it again.
    await page.keyboard.press("Escape");
    await menu.waitFor({ state: "detached" });
    await badge.click();
    await menu.waitFor();
    await menu.getByTestId("sandbox-mode-read-only").click();
    await page.locator("[data-testid='sandbox-badge'][data-mode='read-only']").waitFor({ timeout: 10_000 });
    // A click, not `check()`: the box is the server's setting, ticked when `set_sandbox`
    // answers (`check()` fails when the answer comes after its look right after the click).
    await menu.getByTestId("sandbox-network").click();
    await page.waitForFunction(
      () => document.querySelector("[data-testid='sandbox-network']")?.checked === true,
      null,
      { timeout: 10_000 },
    );
    if (available) {
      await page.getByTestId("sandbox-badge").filter({ hasText: "Sandbox: read-only · network on" }).waitFor({ timeout: 10_000 });
    }
    assert.match(await page.getByTestId("sandbox-note").textContent(), /read-only/);
    await page.keyboard.press("Escape");
    await menu.waitFor({ state: "detached" });

    // The next turn runs with the chat's new setting: its command's card says so.
    await send(page, "list the files");
    const card = page.locator("[data-testid='tool-card'][data-tool='execute_cmd'] [data-testid='approval-card']").first();
    await card.waitFor({ timeout: 20_000 });
    const line = card.getByTestId("approval-sandbox");
    await line.waitFor();
    assert.match(await line.textContent(), /read-only/);
    if (available) assert.match(await line.textContent(), /network on/);
    await page.screenshot({ path: join(screenshotsDir, "sandbox.png") });
    await card.getByTestId("reject").click();
    await card.getByTestId("reject-confirm").click();
    await page.locator("[data-testid='tool-card'][data-tool='execute_cmd'][data-status='rejected']").waitFor({ timeout: 20_000 });
  });
});

// A model and effort per chat (docs/models.md "A model per chat", docs/ui.md): mid-chat,
// the header's picker gives the chat a reasoning model typed in (the scripted server takes
// any name) with a high effort; the next request asks that model with that effort, the
// first asked the configured one with none; the chat remembers it after a reload, and
// `/model default` in the composer gives the configured model back.
test("the chat header's picker switches the chat's model and effort mid-chat, and /model default gives it back", async () => {
  await withSkald([say(["Plain first."]), say(["Reasoned."]), say(["Plain again."])], async ({ page, model }) => {
    const answered = (text) =>
      page.waitForFunction(
        (t) =>
          [...document.querySelectorAll("[data-testid='message'][data-role='assistant']")].some((m) => m.textContent.includes(t)) &&
          !document.querySelector("[data-testid='stop']"),
        text,
        { timeout: 20_000 },
      );
    await newChat(page);
    const button = page.getByTestId("model-button");
    await button.filter({ hasText: "scripted-model (default)" }).waitFor({ timeout: 20_000 });
    await send(page, "First question");
    await answered("Plain first.");

    await button.click();
    const menu = page.getByTestId("model-menu");
    await menu.waitFor();
    // The configured model is listed, marked, and checked through "Use the default".
    await menu.locator("[data-testid='model-option'][data-value='openai/scripted-model']").waitFor();
    assert.equal(await menu.getByTestId("model-default").getAttribute("aria-checked"), "true");
    // It takes no effort: none is offered.
    assert.equal(await menu.getByTestId("effort-options").count(), 0);
    await menu.getByTestId("model-input").fill("openai/o3-mini");
    await menu.getByTestId("model-input").press("Enter");
    await page.locator("[data-testid='model-button'][data-model='openai/o3-mini']").waitFor({ timeout: 10_000 });
    // A model typed in is offered an effort; the engine knows o3-mini takes one.
    await menu.getByTestId("effort-high").click();
    await page.locator("[data-testid='model-button'][data-effort='high']").waitFor({ timeout: 10_000 });
    assert.equal((await button.textContent()).trim(), "o3-mini · high");
    assert.equal(await menu.getByTestId("effort-high").getAttribute("aria-checked"), "true");
    assert.equal(await menu.getByTestId("model-error").count(), 0);
    await page.screenshot({ path: join(screenshotsDir, "model.png") });
    await page.keyboard.press("Escape");
    await menu.waitFor({ state: "detached" });

    await send(page, "Think about it");
    await answered("Reasoned.");
    assert.equal(model.requests.length, 2);
    assert.equal(model.requests[0].model, "scripted-model");
    assert.ok(!("reasoning_effort" in model.requests[0]), `the first request had an effort: ${model.requests[0].reasoning_effort}`);
    assert.equal(model.requests[1].model, "o3-mini");
    assert.equal(model.requests[1].reasoning_effort, "high");

    // The chat remembers it.
    await page.reload();
    await page.waitForSelector("[data-testid='message-list'][data-loaded='1']", { timeout: 30_000 });
    await page.locator("[data-testid='model-button'][data-model='openai/o3-mini'][data-effort='high']").waitFor({ timeout: 10_000 });

    // `/model default` in the composer gives the configured model back, with its own effort.
    await send(page, "/model default");
    await page.locator("[data-testid='model-button'][data-model='']").waitFor({ timeout: 10_000 });
    assert.equal((await button.textContent()).trim(), "scripted-model (default)");
    assert.match(await page.getByTestId("composer-note").textContent(), /default model \(openai\/scripted-model\) again/);
    assert.equal(await page.getByTestId("composer").inputValue(), "");
    assert.equal(model.requests.length, 2, "the command reached the model");
    await send(page, "And now?");
    await answered("Plain again.");
    assert.equal(model.requests[2].model, "scripted-model");
    assert.ok(!("reasoning_effort" in model.requests[2]), `an effort was sent: ${model.requests[2].reasoning_effort}`);
  });
});

/** The names of the tools the scripted model was offered in its request `i`. */
const offered = (model, i) => (model.requests[i].tools ?? []).map((t) => t.function.name);

// Plan mode (docs/agent-loop.md "Plan mode", docs/ui.md): Shift+Tab in the composer puts the
// chat in plan mode, its text kept; the model is offered exit_plan_mode and nothing that
// writes; its plan shows as Markdown in the approval card, labelled for a plan; approved,
// the same turn's next request is offered write_file again, and the header says act.
test("Shift+Tab puts a chat in plan mode; the agent's plan is approved from its card and the chat acts", async () => {
  const plan = "# Add the notes\n\n1. Write `notes.md` with a summary\n2. Read it back to check it\n";
  await withSkald([call("p1", "exit_plan_mode", { plan }), say(["Approved: acting now."])], async ({ page, model, skald }) => {
    await newChat(page);
    const mode = page.getByTestId("chat-mode");
    await mode.waitFor({ timeout: 20_000 });
    assert.equal(await mode.getAttribute("data-mode"), "act");
    const composer = page.getByTestId("composer");
    await composer.fill("Plan the notes");
    await composer.press("Shift+Tab");
    await page.locator("[data-testid='chat-mode'][data-mode='plan']").waitFor({ timeout: 10_000 });
    await page.getByTestId("plan-mode-note").waitFor();
    assert.equal(await composer.inputValue(), "Plan the notes");
    assert.equal(await composer.evaluate((el) => el === document.activeElement), true);
    await composer.press("Enter");

    const card = page.locator("[data-testid='approval-card'][data-plan='1']").first();
    await card.waitFor({ timeout: 20_000 });
    await card.locator("[data-testid='plan-markdown'] h1").filter({ hasText: "Add the notes" }).waitFor({ timeout: 10_000 });
    assert.equal((await card.locator("[data-testid='plan-markdown'] li").first().textContent()).trim(), "Write notes.md with a summary");
    assert.equal((await card.getByTestId("approve").textContent()).trim(), "Approve plan and start");
    assert.equal((await card.getByTestId("reject").textContent()).trim(), "Keep planning…");
    assert.equal(model.requests.length, 1);
    assert.ok(offered(model, 0).includes("exit_plan_mode"), `${offered(model, 0)}`);
    assert.ok(!offered(model, 0).includes("write_file"), `${offered(model, 0)}`);
    await page.screenshot({ path: join(screenshotsDir, "plan.png") });

    await card.getByTestId("approve").click();
    await page.locator("[data-testid='chat-mode'][data-mode='act']").waitFor({ timeout: 20_000 });
    await waitForAnswer(page, skald);
    assert.match(await assistantText(page), /Approved: acting now\./);
    assert.equal(model.requests.length, 2);
    assert.ok(offered(model, 1).includes("write_file"), `${offered(model, 1)}`);
    assert.ok(!offered(model, 1).includes("exit_plan_mode"), `${offered(model, 1)}`);
    assert.equal(await page.getByTestId("plan-mode-note").count(), 0);
    await page.locator("[data-testid='tool-card'][data-tool='exit_plan_mode'][data-status='done']").waitFor();
  });
});

// Edit and resend (docs/store.md "Forks", docs/ui.md): an earlier message is edited in
// place and sent; a new chat opens with the conversation before it and the edited text,
// which the model answers (it was sent neither the old question nor its answer); the
// original is unchanged, linked from the fork's header, and lists the fork in its own.
test("an earlier message edited and sent opens a new chat that answers it; the original stays, linked both ways", async () => {
  await withSkald([say(["Paris."]), say(["Rome."]), say(["Madrid."])], async ({ page, model, skald }) => {
    const answered = (text) =>
      page.waitForFunction(
        (t) =>
          [...document.querySelectorAll("[data-testid='message'][data-role='assistant']")].some((m) => m.textContent.includes(t)) &&
          !document.querySelector("[data-testid='stop']"),
        text,
        { timeout: 20_000 },
      );
    await newChat(page);
    await send(page, "Capital of France?");
    await answered("Paris.");
    await send(page, "And Italy?");
    await answered("Rome.");
    const original = await page.locator(".session.active").getAttribute("data-session-id");
    // The server titles a chat from its first exchange.
    await page.waitForFunction(() => document.querySelector(".chat-title h1")?.textContent.trim() !== "New chat", null, { timeout: 10_000 }).catch(() => {});
    const title = (await page.locator(".chat-title h1").textContent()).trim();

    const italy = page.locator("[data-testid='message'][data-role='user']").filter({ hasText: "And Italy?" });
    await italy.hover();
    await italy.getByTestId("message-edit").click();
    const input = page.getByTestId("message-editor-input");
    await input.waitFor();
    assert.equal(await input.inputValue(), "And Italy?");
    await input.fill("And Spain?");
    await page.screenshot({ path: join(screenshotsDir, "edit.png") });
    await input.press("Enter");

    await page.waitForFunction((id) => document.querySelector(".session.active")?.getAttribute("data-session-id") !== id, original, { timeout: 20_000 });
    const fork = await page.locator(".session.active").getAttribute("data-session-id");
    await answered("Madrid.");
    // A chat read while its turn ran is read again when it ends: wait for that.
    const userTexts = () => [...document.querySelectorAll("[data-testid='message'][data-role='user'] .bubble")].map((b) => b.textContent.trim()).join("|");
    await page
      .waitForFunction(() => [...document.querySelectorAll("[data-testid='message'][data-role='user'] .bubble")].map((b) => b.textContent.trim()).join("|") === "Capital of France?|And Spain?", null, { timeout: 10_000 })
      .catch(async () => assert.fail(`the new chat shows ${await page.evaluate(userTexts)}`));
    assert.doesNotMatch(await assistantText(page), /Rome\./);
    assert.equal((await page.locator(".chat-title h1").textContent()).trim(), `${title} (edited)`);
    assert.equal(model.requests.length, 3);
    const sent = JSON.stringify(model.requests[2].messages);
    assert.match(sent, /Capital of France\?/);
    assert.match(sent, /Paris\./);
    assert.match(sent, /And Spain\?/);
    assert.doesNotMatch(sent, /Italy|Rome/);
    assert.equal(await page.getByTestId("session-item").count(), 2);
    await page.locator("[data-testid='message'][data-role='assistant']").filter({ hasText: "Madrid." }).hover();
    await page.waitForTimeout(300);
    await page.screenshot({ path: join(screenshotsDir, "fork.png") });

    // The original, from the fork's header: as it was, and it lists the fork.
    const link = page.getByTestId("forked-from");
    assert.equal((await link.textContent()).trim(), title);
    await link.click();
    await page.locator(`.session.active[data-session-id='${original}']`).waitFor({ timeout: 10_000 });
    await answered("Rome.");
    assert.equal((await page.locator("[data-testid='message'][data-role='user'] .bubble").last().textContent()).trim(), "And Italy?");
    await page.getByTestId("forks-button").click();
    const item = page.locator(`[data-testid='fork-item'][data-session-id='${fork}']`);
    await item.waitFor();
    await item.click();
    await page.locator(`.session.active[data-session-id='${fork}']`).waitFor({ timeout: 10_000 });
    await answered("Madrid.");
    assert.equal(model.requests.length, 3, "opening the chats sent nothing");
  });
});

// Cost (docs/models.md "Cost", docs/ui.md): with a price for the scripted model in
// config.toml (per million tokens; the harness's usage chunk says 10 in, 5 out), the chat
// header shows what each turn cost, the chat's sum and today's, and Settings today's.
test("the chat header shows what the chat and today cost, at the configured price, and Settings today's", async () => {
  // 10 × $1,000 + 5 × $2,000 per million tokens: $0.02 a call.
  const config = '[models.prices]\n"openai/scripted-model" = { input = 1000.0, output = 2000.0 }\n';
  await withSkald(
    [say(["One."]), say(["Two."])],
    async ({ page, skald }) => {
      await newChat(page);
      await send(page, "First");
      await waitForAnswer(page, skald);
      const cost = page.getByTestId("cost-usage");
      await cost.filter({ hasText: "$0.0200 · today $0.0200" }).waitFor({ timeout: 10_000 });
      assert.equal(await cost.getAttribute("data-unpriced"), "0");
      await send(page, "Second");
      await page.waitForFunction(
        () =>
          [...document.querySelectorAll("[data-testid='message'][data-role='assistant']")].some((m) => m.textContent.includes("Two.")) &&
          !document.querySelector("[data-testid='stop']"),
        null,
        { timeout: 20_000 },
      );
      await cost.filter({ hasText: "$0.0400 · today $0.0400" }).waitFor({ timeout: 10_000 });
      const title = await cost.getAttribute("title");
      assert.match(title, /This chat: 2 model calls, 20 tokens in, 10 out — \$0\.0400/);
      assert.match(title, /Last turn: 1 model call, 10 tokens in, 5 out — \$0\.0200/);
      assert.match(title, /Today, every chat and task: \$0\.0400/);
      await page.getByTestId("token-usage").filter({ hasText: "20 in · 10 out" }).waitFor();

      await page.getByTestId("nav-settings").click();
      await page.getByTestId("today-cost").filter({ hasText: "Spent today: $0.0400" }).waitFor({ timeout: 10_000 });
    },
    { ".skald-data/config.toml": config },
  );
});

// The context view (docs/instructions.md, docs/ui.md): the chat header's chip counts the
// AGENTS.md files the agent is given and its panel lists them (the person's own, from a
// config folder of the test's, and the project's) with the project's skills; a turn's
// `context` event updates the chip live, here after the project's file grew past the
// 32 KiB cap (cut, with a note; the person's then left out), and the model was given it.
test("the context view lists the AGENTS.md files and skills, and a turn updates it", async () => {
  const home = tempDir("skald-e2e-home-");
  mkdirSync(join(home, ".config", "skald"), { recursive: true });
  writeFileSync(join(home, ".config", "skald", "AGENTS.md"), "Answer briefly.\n");
  const skill = "---\nname: release\ndescription: Cut a release of the paper\n---\n\nTag it, then build the PDF.\n";
  await withSkald(
    [say(["Noted."])],
    async ({ page, root, model }) => {
      await newChat(page);
      const chip = page.getByTestId("context-chip");
      await page.locator("[data-testid='context-chip'][data-count='2']").waitFor({ timeout: 20_000 });
      assert.equal((await chip.textContent()).trim(), "AGENTS.md ×2");

      await page.keyboard.press("Control+Shift+X");
      const panel = page.getByTestId("context-panel");
      await panel.waitFor();
      assert.equal(await page.getByTestId("context-root").locator("[title]").getAttribute("title"), root);
      const files = panel.getByTestId("context-file");
      assert.deepEqual(await files.locator(".context-path").allTextContents(), ["~/.config/skald/AGENTS.md", "AGENTS.md"]);
      assert.deepEqual(await files.getByTestId("context-source").allTextContents(), ["yours", "project"]);
      assert.deepEqual(await files.getByTestId("context-size").allTextContents(), ["16 B", "26 B"]);
      assert.equal(await panel.getByTestId("context-note").count(), 0);
      const skills = panel.getByTestId("context-skill");
      assert.deepEqual(await skills.locator(".context-name").allTextContents(), ["release"]);
      assert.match(await skills.first().textContent(), /Cut a release of the paper/);
      await page.keyboard.press("Escape");
      await panel.waitFor({ state: "detached" });

      // Past the cap: the next turn is given the project's file cut, and the event says so.
      // 625 lines of 64 bytes: the first 512 fill the 32 KiB exactly, so nothing is left
      // for the person's file.
      const line = `${"Cite every source with its page number, in the house style.".padEnd(63, ".")}\n`;
      writeFileSync(join(root, "AGENTS.md"), line.repeat(625));
      await send(page, "Summarise the chapter");
      await page.locator("[data-testid='context-chip'][data-count='1'].warn").waitFor({ timeout: 20_000 });
      await page.waitForFunction(
        () => [...document.querySelectorAll("[data-testid='message'][data-role='assistant']")].some((m) => m.textContent.includes("Noted.")),
        null,
        { timeout: 20_000 },
      );
      const sent = JSON.stringify(model.requests[0].messages);
      assert.match(sent, /Instructions from AGENTS\.md files/);
      assert.match(sent, /Cite every source with its page number/);
      assert.match(sent, /cut to 32768 of 40000 bytes/);
      assert.ok(!sent.includes("Answer briefly."), "the person's file was left out, yet sent");

      await chip.click();
      await panel.waitFor();
      const notes = await panel.getByTestId("context-note").allTextContents();
      assert.equal(notes.length, 2, notes.join(" | "));
      assert.equal(notes[0], "left out: the AGENTS.md files together are limited to 32 KiB");
      assert.equal(notes[1], "cut to 32768 of 40000 bytes: the AGENTS.md files together are limited to 32 KiB");
      assert.deepEqual(await files.getByTestId("context-size").allTextContents(), ["not given (16 B)", "32.8 kB of 40.0 kB"]);
      assert.deepEqual(await files.evaluateAll((els) => els.map((e) => e.dataset.state)), ["omitted", "cut"]);
      await page.screenshot({ path: join(screenshotsDir, "context.png") });
      await page.keyboard.press("Escape");
      await panel.waitFor({ state: "detached" });
    },
    {
      "AGENTS.md": "Write in British English.\n",
      ".agents/skills/release/SKILL.md": skill,
    },
    // The person's own AGENTS.md and ~/.agents/skills are the test's, not this machine's.
    { HOME: home, XDG_CONFIG_HOME: join(home, ".config") },
  );
});

// A long conversation (docs/agent-loop.md "Long conversations"): with a 10,000-token window
// summarised at 90%, three notes of 8,200 characters (about 2,066 tokens each) pass the
// threshold at the third — the second stays under it (the system prompt and the tool
// definitions take some 3,800 tokens, counted alike by the meter and the threshold). The compaction is announced in the chat before the
// summary comes, the first two turns fold under the summary's card (and unfold), the
// card's Undo gives them back whole (the meter goes up), and the meter's "Compact now"
// summarises them again.
test("the context meter shows the window filling; a compaction is announced, folds the older turns under its summary, is undone and made again", async () => {
  const SUMMARY_PROMPT = "You are summarising the earlier part of a conversation";
  const note = (n) => `Note ${n}: ${"harbour ".repeat(1024)}`;
  const summaries = [];
  const script = (body) => {
    const messages = body.messages ?? [];
    if (String(messages[0]?.content ?? "").startsWith(SUMMARY_PROMPT)) {
      summaries.push(String(messages[1]?.content ?? ""));
      // Slow enough to see the announcement before the summary.
      return say(["The person sent two long notes ", "about the harbour; ", "the agent noted each.\n", "Left out: the notes' full text."], 500);
    }
    const last = [...messages].reverse().find((m) => m.role === "user");
    const n = /Note (\d+):/.exec(String(last?.content ?? ""))?.[1] ?? "?";
    return say([`Noted ${n}.`]);
  };
  const config = '[sandbox]\nask = "always"\n\n[agent]\ncompact_at = 90\n\n[models]\ncontext_window = 10000\n';
  await withSkald(
    script,
    async ({ page, model }) => {
      await newChat(page);
      const meter = page.getByTestId("context-meter");
      await meter.waitFor({ timeout: 10_000 });
      assert.match(await page.getByTestId("context-meter-label").textContent(), /^[\d.]+k? \/ 10k$/);
      const tokens = async () => Number(await meter.getAttribute("data-tokens"));
      const grows = async (from) => page.waitForFunction((n) => Number(document.querySelector("[data-testid='context-meter']")?.dataset.tokens) > n, from, { timeout: 10_000 });
      const answered = (text) =>
        page.waitForFunction(
          (t) => [...document.querySelectorAll("[data-testid='message'][data-role='assistant']")].some((m) => m.textContent.includes(t)) && !document.querySelector("[data-testid='stop']"),
          text,
          { timeout: 30_000 },
        );
      const empty = await tokens();
      assert.match(await meter.getAttribute("title"), /^Context: [\d,]+ of 10,000 tokens \(\d+%\), summarised at 90%$/);

      // The meter follows the turns.
      await send(page, note(1));
      await answered("Noted 1.");
      await grows(empty + 2000);
      await send(page, note(2));
      await answered("Noted 2.");
      await grows(empty + 4000);
      const two = await tokens();
      assert.equal(summaries.length, 0, "summarised before the threshold");
      assert.equal(await meter.getAttribute("data-level"), "near");

      // The third passes the threshold: announced, then summarised, then answered.
      await send(page, note(3));
      const announced = page.locator(".notice", { hasText: /Summarising older turns to keep the context within the model's window — [\d.]+k of 10k tokens/ });
      await announced.waitFor({ timeout: 20_000 });
      assert.equal(await page.getByTestId("summary-card").count(), 0, "the summary showed before it was made");
      const card = page.getByTestId("summary-card");
      await card.waitFor({ timeout: 20_000 });
      await answered("Noted 3.");
      // The meter read again after the turn: the summary stands in for two notes.
      await page.waitForFunction((n) => Number(document.querySelector("[data-testid='context-meter']")?.dataset.tokens) < n, two, { timeout: 10_000 });
      assert.equal(summaries.length, 1);
      assert.ok(summaries[0].includes("Note 1:") && summaries[0].includes("Note 2:") && !summaries[0].includes("Note 3:"), summaries[0].slice(0, 200));
      const asked = JSON.stringify(model.requests.at(-1).messages);
      assert.match(asked, /Summary of the earlier part of this conversation/);
      assert.ok(!asked.includes("Note 1:") && asked.includes("Note 3:"), "the summary did not stand in for the older turns");
      assert.match(await card.getByTestId("summary-text").textContent(), /two long notes about the harbour/);
      assert.equal((await card.getByTestId("summary-left-out").textContent()).trim(), "Left out: the notes' full text.");

      // The older turns are folded under it, not gone.
      const userTexts = () => page.locator("[data-testid='message'][data-role='user'] .bubble").allTextContents();
      const toggle = card.getByTestId("summary-toggle");
      assert.equal((await toggle.textContent()).trim(), "Show 4 earlier messages");
      assert.equal(await toggle.getAttribute("aria-expanded"), "false");
      assert.deepEqual((await userTexts()).map((t) => t.slice(0, 7)), ["Note 3:"]);
      await toggle.click();
      await page.locator(".virtual-row.folded [data-testid='message'][data-role='user']", { hasText: "Note 1:" }).waitFor();
      assert.equal((await toggle.textContent()).trim(), "Hide the 4 earlier messages");
      assert.deepEqual((await userTexts()).map((t) => t.slice(0, 7)), ["Note 1:", "Note 2:", "Note 3:"]);
      await page.screenshot({ path: join(screenshotsDir, "compaction.png") });
      await toggle.click();
      await page.locator(".virtual-row.folded").first().waitFor({ state: "detached" });

      // Undone from the card: the summary goes, the turns show as before, the meter goes up.
      const compacted = await tokens();
      await card.getByTestId("summary-undo").click();
      await card.waitFor({ state: "detached", timeout: 10_000 });
      await grows(compacted + 3000);
      assert.deepEqual((await userTexts()).map((t) => t.slice(0, 7)), ["Note 1:", "Note 2:", "Note 3:"]);
      assert.equal(await page.locator(".virtual-row.folded").count(), 0);

      // The meter's popover: what fills the context, and "Compact now".
      await meter.click();
      const menu = page.getByTestId("context-meter-menu");
      await menu.waitFor();
      const parts = await menu.locator(".meter-part dt").allTextContents();
      assert.deepEqual(parts, ["System prompt", "AGENTS.md & skills", "Tool definitions", "Messages", "Tool results"]);
      assert.equal((await menu.getByTestId("context-meter-threshold").textContent()).trim(), "Summarises at 90% (9k tokens)");
      assert.match(await menu.getByTestId("context-meter-last").textContent(), /^The last model call read 10 tokens\.$/);
      assert.equal(await menu.getByTestId("undo-compaction").count(), 0);
      const whole = await tokens();
      await menu.getByTestId("compact-now").click();
      await card.waitFor({ timeout: 20_000 });
      assert.equal(summaries.length, 2);
      assert.equal((await card.getByTestId("summary-toggle").textContent()).trim(), "Show 4 earlier messages");
      assert.equal(await page.locator(".notice", { hasText: /Summarising older turns/ }).count(), 2);
      await page.waitForFunction((n) => Number(document.querySelector("[data-testid='context-meter']")?.dataset.tokens) < n - 3000, whole, { timeout: 10_000 });
      await menu.getByTestId("undo-compaction").waitFor();
      await menu.locator(".meter-part[data-part='summary']").waitFor();
      await page.screenshot({ path: join(screenshotsDir, "context-meter.png") });
      await page.keyboard.press("Escape");
      await menu.waitFor({ state: "detached" });
      assert.equal(await page.evaluate(() => document.activeElement?.dataset.testid), "context-meter");
    },
    { ".skald-data/config.toml": config },
  );
});

test("a project's hooks run only once approved in the context view; a blocked message comes back to the composer", async () => {
  const dir = '"$SKALD_PROJECT_DIR"/.skald';
  const hooksJson = JSON.stringify({
    hooks: {
      UserPromptSubmit: [
        {
          hooks: [
            { type: "command", command: `sh ${dir}/log-prompt.sh` },
            { type: "command", command: `sh ${dir}/no-secrets.sh` },
          ],
        },
      ],
    },
  });
  await withSkald(
    [say(["Not yet."]), say(["Noted."])],
    async ({ page, root, model }) => {
      const marker = join(root, "hook-marker.jsonl");
      await newChat(page);
      // The file waits for approval: the chip says so.
      await page.locator("[data-testid='context-chip'][data-hooks='pending']").waitFor({ timeout: 20_000 });
      assert.match(await page.getByTestId("context-chip").getAttribute("aria-label"), /the project's 2 hooks wait for your approval/);

      // Not approved: a message goes to the model, and no hook runs.
      await send(page, "first message");
      await page.waitForFunction(
        () => [...document.querySelectorAll("[data-testid='message'][data-role='assistant']")].some((m) => m.textContent.includes("Not yet.")),
        null,
        { timeout: 20_000 },
      );
      assert.equal(existsSync(marker), false, "a hook of a file not approved ran");
      assert.equal(await page.getByTestId("hook-run").count() + (await page.getByTestId("hook-quiet").count()), 0);

      // The panel says what the file is, opens it, and approves it.
      await page.keyboard.press("Control+Shift+X");
      const panel = page.getByTestId("context-panel");
      await panel.waitFor();
      const notice = panel.getByTestId("context-hooks-notice");
      assert.match(
        await notice.textContent(),
        /This project has 2 hooks in \.skald\/hooks\.json\. They are code from the repository and do not run until you approve this file's content\./,
      );
      await page.screenshot({ path: join(screenshotsDir, "hooks-approve.png") });
      await panel.getByTestId("context-hooks-open").click();
      await panel.waitFor({ state: "detached" });
      await page.waitForFunction(() => document.querySelector("[data-testid='viewer']")?.textContent.includes("log-prompt.sh"), null, { timeout: 20_000 });
      await page.keyboard.press("Control+Shift+X");
      await panel.waitFor();
      await panel.getByTestId("context-hooks-approve").click();
      await panel.locator("[data-testid='context-hooks'][data-state='approved']").waitFor({ timeout: 20_000 });
      assert.match(await panel.getByTestId("context-hooks-status").textContent(), /Project hooks: 2, approved/);
      await page.locator("[data-testid='context-chip'][data-hooks='approved']").waitFor();
      await page.keyboard.press("Escape");
      await panel.waitFor({ state: "detached" });

      // Approved: the hooks run on the next message, shown under it.
      await send(page, "second message");
      await page.waitForFunction(
        () => [...document.querySelectorAll("[data-testid='message'][data-role='assistant']")].some((m) => m.textContent.includes("Noted.")),
        null,
        { timeout: 20_000 },
      );
      const logged = readFileSync(marker, "utf8");
      assert.match(logged, /"prompt":\s*"second message"/);
      assert.match(logged, /"hook_event_name":\s*"UserPromptSubmit"/);
      assert.ok(!logged.includes("first message"), logged);
      const second = page.locator("[data-testid='message'][data-role='user']", { hasText: "second message" });
      const quiet = second.getByTestId("hook-quiet");
      await quiet.waitFor();
      assert.equal(await quiet.getAttribute("data-count"), "2");
      assert.match(await quiet.textContent(), /2 hooks ran·log-prompt\.sh, no-secrets\.sh/);

      // Blocked: not sent, not stored, the reason shown, the text back in the box.
      await send(page, "the password is hunter2");
      const blocked = page.locator("[data-testid='message'][data-state='blocked']");
      await blocked.waitFor({ timeout: 20_000 });
      assert.equal(await blocked.getByTestId("blocked-reason").textContent(), "Not sent: a hook blocked it — no secrets in prompts");
      const row = blocked.locator("[data-testid='hook-run'][data-outcome='blocked']");
      assert.equal(await row.getAttribute("data-event"), "UserPromptSubmit");
      assert.equal(await row.getAttribute("data-source"), "project");
      assert.equal(await row.getByTestId("hook-command").textContent(), "no-secrets.sh");
      assert.equal(await page.getByTestId("composer").inputValue(), "the password is hunter2");
      await page.waitForFunction(() => !document.querySelector("[data-testid='stop']"), null, { timeout: 20_000 });
      assert.equal(await page.locator(".notice", { hasText: "Stopped." }).count(), 0);
      assert.equal(model.requests.length, 2, "a blocked message reached the model");
      await page.screenshot({ path: join(screenshotsDir, "hooks.png") });

      // It was not stored: after a reload only the two messages sent are in the chat.
      await page.reload();
      await page.waitForSelector("[data-testid='message-list'][data-loaded='1']");
      await page.locator("[data-testid='message'][data-role='user']", { hasText: "second message" }).waitFor();
      assert.deepEqual(await page.locator("[data-testid='message'][data-role='user'] .bubble").allTextContents(), ["first message", "second message"]);
    },
    {
      ".git/HEAD": "ref: refs/heads/main\n",
      ".skald/hooks.json": hooksJson,
      ".skald/log-prompt.sh": 'cat >> "$SKALD_PROJECT_DIR/hook-marker.jsonl"\necho >> "$SKALD_PROJECT_DIR/hook-marker.jsonl"\n',
      ".skald/no-secrets.sh": 'input=$(cat)\ncase "$input" in\n  *hunter2*) echo "no secrets in prompts" >&2; exit 2 ;;\nesac\n',
    },
  );
});

test("a question is answered in the Agent Inbox", async () => {
  await withSkald(
    [
      call("q1", "ask_user_clarification", {
        title: "Colour",
        question: "Which colour should the button be?",
        suggested_answers: ["blue", "green"],
      }),
      say(["Making it teal."]),
    ],
    async ({ page, model }) => {
      await newChat(page);
      await send(page, "style the button");
      await page.getByTestId("question-card").first().waitFor({ timeout: 20_000 });
      await page.waitForFunction(() => document.querySelector("[data-testid='inbox-badge']")?.textContent?.trim() === "1");
      await page.getByTestId("nav-inbox").click();
      const item = page.getByTestId("inbox-item").first();
      await item.waitFor();
      assert.match(await item.textContent(), /Which colour should the button be\?/);
      await page.screenshot({ path: join(screenshotsDir, "inbox.png") });
      await item.getByTestId("answer-input").fill("teal");
      await item.getByTestId("answer-submit").click();
      await page.getByTestId("inbox-item").first().waitFor({ state: "detached", timeout: 20_000 });
      await page.waitForFunction(() => !document.querySelector("[data-testid='inbox-badge']")?.textContent?.trim());
      // The answer went to the model, and the chat went on.
      await page.getByTestId("nav-chat").click();
      await page.waitForFunction(
        () =>
          [...document.querySelectorAll("[data-testid='message'][data-role='assistant']")].some((m) =>
            m.textContent.includes("Making it teal."),
          ),
        null,
        { timeout: 20_000 },
      );
      assert.match(JSON.stringify(model.requests[1].messages), /teal/);
    },
  );
});

test("a running shell command is stopped from the chat", async () => {
  await withSkald([call("c1", "execute_cmd", { command: "sleep 60" }), say(["never sent"])], async ({ page, model }) => {
    await newChat(page);
    await send(page, "wait a minute");
    const card = page.getByTestId("approval-card").first();
    await card.waitFor({ timeout: 20_000 });
    await card.getByTestId("approve").click();
    await page.locator("[data-testid='tool-card'][data-tool='execute_cmd'][data-status='running']").waitFor({ timeout: 20_000 });
    await page.getByTestId("stop").click();
    await page.locator("[data-testid='tool-card'][data-tool='execute_cmd'][data-status='cancelled']").waitFor({ timeout: 15_000 });
    await page.getByTestId("stop").waitFor({ state: "hidden", timeout: 15_000 }).catch(async () => {
      // Some layouts keep the button but disable it.
      assert.ok(await page.getByTestId("stop").isDisabled());
    });
    assert.equal(model.requests.length, 1, "the stopped turn asked the model again");
  });
});

// Background processes (docs/processes.md): a command started with `background: true`
// runs on after its call returned; the chat's Processes strip lists it while it runs,
// opens (from the keyboard) to its output, read every second, and stops it.
test("a background process is listed in the chat, shows its output and is stopped", async () => {
  const command = "echo ready-marker; sleep 300";
  await withSkald([call("bg1", "execute_cmd", { command, background: true }), say(["started"])], async ({ page, model }) => {
    await newChat(page);
    await send(page, "start the dev server");
    // The harness makes every command ask (`[sandbox] ask = "always"`); a chat whose
    // sandbox runs it without asking goes straight on.
    const approval = page.getByTestId("approval-card").first();
    const listed = page.getByTestId("process-row").first();
    await approval.or(listed).first().waitFor({ timeout: 20_000 });
    if (await approval.isVisible()) await approval.getByTestId("approve").click();
    await page.waitForFunction(
      () =>
        [...document.querySelectorAll("[data-testid='message'][data-role='assistant']")].some((m) => m.textContent.includes("started")) &&
        !document.querySelector("[data-testid='stop']"),
      null,
      { timeout: 20_000 },
    );
    // The call returned at once, saying which process it started.
    assert.equal(model.requests.length, 2);
    assert.match(JSON.stringify(model.requests[1].messages), /started in the background as process \d+/);

    const panel = page.getByTestId("processes");
    await panel.locator("[data-testid='process-row'][data-status='running']").waitFor({ timeout: 20_000 });
    const id = await panel.getByTestId("process-row").first().getAttribute("data-process-id");
    const row = panel.locator(`[data-testid='process-row'][data-process-id='${id}']`);
    assert.equal(await panel.getByTestId("process-row").count(), 1);
    assert.equal(await row.getByTestId("process-command").textContent(), command);
    assert.equal(await row.getByTestId("process-command").getAttribute("title"), command);
    assert.match(await row.getByTestId("process-state").textContent(), /^running · \d+ (s|min \d+ s)$/);
    assert.match(await panel.getByTestId("processes-summary").textContent(), /^1 running$/);

    // Opened from the keyboard, it shows what the process wrote.
    const toggle = row.getByTestId("process-toggle");
    assert.equal(await toggle.getAttribute("aria-expanded"), "false");
    await toggle.focus();
    await page.keyboard.press("Enter");
    assert.equal(await toggle.getAttribute("aria-expanded"), "true");
    await page.waitForFunction(
      (pid) =>
        document
          .querySelector(`[data-testid='process-row'][data-process-id='${pid}'] [data-testid='process-output']`)
          ?.textContent.includes("ready-marker"),
      id,
      { timeout: 15_000 },
    );

    // Stop answers once the process is gone: the row says it was stopped.
    await row.getByTestId("process-stop").click();
    await panel.locator(`[data-testid='process-row'][data-process-id='${id}'][data-status='stopped']`).waitFor({ timeout: 15_000 });
    assert.equal((await row.getByTestId("process-state").textContent()).trim(), "stopped");
    assert.equal(await row.getByTestId("process-stop").count(), 0);
    assert.equal(await page.getByTestId("process-error").count(), 0);
    assert.match(await row.getByTestId("process-ended").textContent(), /stopped/);
    assert.match(await row.getByTestId("process-output").textContent(), /ready-marker/);
    assert.match(await panel.getByTestId("processes-summary").textContent(), /^1 ended$/);
    // Stopping it asked nothing of the model.
    assert.equal(model.requests.length, 2);
  });
});

const goodTex = "\\documentclass{article}\n\\begin{document}\nHello, fixed.\n\\end{document}\n";
const badTex = "\\documentclass{article}\n\\begin{document}\nHello.\n\\undefinedmacro\n\\end{document}\n";

test("the viewer shows Markdown, and a LaTeX error with its line, then the rebuilt PDF", async () => {
  await withSkald(
    null,
    async ({ page, root }) => {
      await openInViewer(page, join(root, "notes.md"));
      const md = page.getByTestId("viewer-markdown");
      await md.waitFor({ timeout: 20_000 });
      assert.equal(await md.locator("h1").textContent(), "Project notes");
      assert.ok((await md.locator("script").count()) === 0);
      // Every status the build shows: a first build says it is making the format.
      await page.evaluate(() => {
        window.__latex = new Set();
        new MutationObserver(() => {
          for (const el of document.querySelectorAll("[data-testid='latex-status']")) window.__latex.add(el.textContent);
        }).observe(document.body, { subtree: true, childList: true, characterData: true });
      });
      await openInViewer(page, join(root, "paper.tex"));
      const err = page.getByTestId("latex-error").first();
      await err.waitFor({ timeout: 120_000 });
      assert.match(await err.textContent(), /paper\.tex:4: Undefined control sequence/);
      const statuses = await page.evaluate(() => [...window.__latex]);
      assert.ok(
        statuses.some((t) => t.startsWith("Making the LaTeX format")),
        `the first build's statuses: ${JSON.stringify(statuses)}`,
      );
      await page.screenshot({ path: join(screenshotsDir, "viewer-latex-error.png") });
      // Fixed in an editor: the viewer rebuilds on its own and shows the PDF.
      writeFileSync(join(root, "paper.tex"), goodTex);
      await page.locator("[data-testid='viewer-pdf'] [data-testid='pdf-page']").first().waitFor({ timeout: 120_000 });
      assert.equal(await page.getByTestId("latex-error").count(), 0);
      await page.screenshot({ path: join(screenshotsDir, "viewer-latex.png") });
    },
    {
      "notes.md": "# Project notes\n\nSome *text*.\n\n<script>alert(1)</script>\n\n```rust\nfn main() {}\n```\n",
      "paper.tex": badTex,
    },
  );
});

const hostileHtml = `<!doctype html><div id="r">pending</div><script>
const out = [];
try { localStorage.setItem("pwned", "1"); out.push("storage:open"); } catch (e) { out.push("storage:blocked"); }
try { out.push("parent:" + (parent.document.body ? "open" : "blocked")); } catch (e) { out.push("parent:blocked"); }
const done = () => { document.getElementById("r").textContent = out.join(" "); };
let pending = 2;
const one = () => { if (--pending === 0) done(); };
fetch("/api/file?path=" + encodeURIComponent("/etc/hostname"))
  .then((r) => { out.push(r.ok ? "fetch:open" : "fetch:blocked"); })
  .catch(() => out.push("fetch:blocked"))
  .finally(one);
try {
  const ws = new WebSocket("ws://" + location.host + "/api/ws");
  ws.onopen = () => { out.push("ws:open"); one(); };
  ws.onerror = () => { out.push("ws:blocked"); one(); };
} catch (e) { out.push("ws:blocked"); one(); }
</script>`;

test("an HTML preview can neither read the app's storage nor call the server", async () => {
  await withSkald(
    null,
    async ({ page, root }) => {
      await page.evaluate(() => localStorage.setItem("app-secret", "kept"));
      await openInViewer(page, join(root, "page.html"));
      const frame = page.frameLocator("[data-testid='viewer-html']");
      const result = frame.locator("#r");
      await page.waitForFunction(
        () => {
          const f = document.querySelector("[data-testid='viewer-html']");
          const iframe = f?.tagName === "IFRAME" ? f : f?.querySelector("iframe");
          return iframe?.getAttribute("sandbox") === "allow-scripts";
        },
        null,
        { timeout: 20_000 },
      );
      await assert.doesNotReject(result.filter({ hasNotText: "pending" }).waitFor({ timeout: 20_000 }));
      const text = await result.textContent();
      for (const part of ["storage:blocked", "parent:blocked", "fetch:blocked", "ws:blocked"]) {
        assert.ok(text.includes(part), `${part} not in "${text}"`);
      }
      assert.equal(await page.evaluate(() => localStorage.getItem("pwned")), null);
      assert.equal(await page.evaluate(() => localStorage.getItem("app-secret")), "kept");
    },
    { "page.html": hostileHtml },
  );
});

test("a 10,000-message chat opens, paints fast and scrolls", async () => {
  const root = tempDir();
  const data = join(root, ".skald-data");
  mkdirSync(data, { recursive: true });
  const id = seedLongChat(data, root, 10_000);
  const skald = await startSkald({ root });
  const { page, context, problems } = await openSkald(b, skald);
  try {
    const item = page.locator(`[data-testid='session-item'][data-session-id='${id}']`);
    const t0 = await page.evaluate(() => performance.now());
    await item.click();
    await page.waitForSelector("[data-testid='message-list'][data-loaded='1']", { timeout: 30_000 });
    await page.waitForFunction(() => document.body.textContent.includes("Message 9999:"));
    const t1 = await page.evaluate(() => performance.now());
    // Virtualised: only what is on screen is in the DOM.
    const rendered = await page.getByTestId("message").count();
    assert.ok(rendered > 0 && rendered < 300, `${rendered} message elements in the DOM`);
    // Scrolling to the top reaches the first message. Each poll scrolls to the top again:
    // rows measured as they render can move the offset after the first arrival (one CI run
    // saw "Message 0:" and then lost it while nothing scrolled any more).
    await page.waitForFunction(
      () => {
        const list = document.querySelector("[data-testid='message-list']");
        const scroller = list.scrollHeight > list.clientHeight ? list : list.querySelector("[data-scroller]") ?? list;
        scroller.scrollTop = 0;
        return document.body.textContent.includes("Message 0:");
      },
      null,
      { timeout: 30_000, polling: 50 },
    );
    const memory = await page.evaluate(() => performance.memory?.usedJSHeapSize ?? 0);
    const results = { messages: 10_000, open_ms: Math.round(t1 - t0), js_heap_bytes: memory, dom_messages: rendered };
    const out = process.env.SKALD_E2E_RESULTS;
    if (out) writeFileSync(out, JSON.stringify(results));
    console.log(`10k chat: ${JSON.stringify(results)}`);
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
    await skald.stop();
  }
});

test("a provider is configured in Settings, tested, and answers in a chat", async () => {
  const root = tempDir();
  const model = await scriptedModel([say(["ok"]), say(["Hello through the configured provider."])]);
  const skald = await startSkald({ root, model, modelFromEnv: false });
  const { page, context, problems } = await openSkald(b, skald);
  try {
    // With no model, the app opens on Settings.
    await page.getByText("Welcome to Skald").waitFor({ timeout: 20_000 });
    await page.getByTestId("provider-kind").selectOption("openai");
    await page.getByTestId("provider-model").fill("scripted-model");
    await page.getByTestId("provider-url").fill(model.baseUrl);
    await page.getByTestId("provider-key").fill("sk-typed-in-settings");
    await page.getByTestId("provider-save").click();
    await page.getByTestId("provider-result").filter({ hasText: "Now using openai/scripted-model" }).waitFor({ timeout: 20_000 });
    await page.getByTestId("test-model").click();
    await page.getByTestId("test-model-result").filter({ hasText: /answered/ }).waitFor({ timeout: 20_000 });
    await page.screenshot({ path: join(screenshotsDir, "settings.png") });
    assert.equal(model.headers[0].authorization, "Bearer sk-typed-in-settings");
    // The key went to the secrets, not to the configuration file.
    const config = readFileSync(join(skald.data, "config.toml"), "utf8");
    assert.match(config, /default = "openai\/scripted-model"/);
    assert.ok(!config.includes("sk-typed-in-settings"));
    await page.getByTestId("nav-chat").click();
    await newChat(page);
    await send(page, "hello?");
    await page.waitForFunction(
      () =>
        [...document.querySelectorAll("[data-testid='message'][data-role='assistant']")].some((m) =>
          m.textContent.includes("Hello through the configured provider."),
        ),
      null,
      { timeout: 20_000 },
    );
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
    await skald.stop();
    await model.close();
  }
});

test("a recommended model downloads from the hub with its progress, is prepared, and the first chat reads none of the prompt", async () => {
  const gguf = join(import.meta.dirname, "..", "..", "tests", "models", "SmolLM2-135M-Instruct.Q4_1.gguf");
  assert.ok(existsSync(gguf), "the test model is missing: run `bash scripts/setup.sh --test`");
  const bytes = readFileSync(gguf);
  const sha = createHash("sha256").update(bytes).digest("hex");
  // A hub answering as Hugging Face's resolve endpoint does: a redirect to its storage that
  // carries the file's SHA-256 and size, and range requests there. It serves the test model
  // under the name of a recommended one.
  const hub = createServer((req, res) => {
    if (req.url === "/Qwen/Qwen3-4B-GGUF/resolve/main/Qwen3-4B-Q4_K_M.gguf") {
      res.writeHead(302, {
        Location: "/storage/qwen3-4b",
        "X-Linked-Etag": `"${sha}"`,
        "X-Linked-Size": String(bytes.length),
        "Content-Length": "0",
      });
      return res.end();
    }
    if (req.url === "/storage/qwen3-4b") {
      const m = /^bytes=(\d+)-$/.exec(req.headers.range ?? "");
      const from = m ? Number(m[1]) : 0;
      res.writeHead(from ? 206 : 200, { "Content-Length": String(bytes.length - from) });
      return res.end(req.method === "HEAD" ? undefined : bytes.subarray(from));
    }
    res.writeHead(404, { "Content-Length": "0" });
    res.end();
  });
  await new Promise((ok) => hub.listen(0, "127.0.0.1", ok));
  const root = tempDir();
  const skald = await startSkald({
    root,
    model: null,
    env: {
      OPENAI_API_KEY: "",
      OPENAI_BASE_URL: "",
      ANTHROPIC_API_KEY: "",
      OLLAMA_HOST: "",
      SKALD_MODEL: "",
      SKALD_MODELS_DIR: "",
      HF_ENDPOINT: `http://127.0.0.1:${hub.address().port}`,
    },
  });
  const { page, context, problems } = await openSkald(b, skald);
  try {
    await page.getByTestId("nav-settings").click();
    const row = page.locator("[data-testid='recommended-model'][data-name='qwen3-4b']");
    await row.waitFor({ timeout: 20_000 });
    // Every progress text the row shows, without its numbers.
    await page.evaluate(() => {
      window.__shown = new Set();
      new MutationObserver(() => {
        for (const el of document.querySelectorAll(".pull-progress span")) {
          window.__shown.add(el.textContent.replace(/[0-9.]+/g, "#"));
        }
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    });
    await row.getByTestId("pull-model").click();
    await page
      .getByTestId("local-models-result")
      .filter({ hasText: "local/qwen3-4b" })
      .waitFor({ timeout: 240_000 });
    const shown = await page.evaluate(() => [...window.__shown]);
    assert.ok(shown.some((t) => t.includes(" of ")), `the download's progress: ${JSON.stringify(shown)}`);
    assert.ok(
      shown.some((t) => t.startsWith("Preparing for chats: reading the agent's prompt")),
      `the preparation's progress: ${JSON.stringify(shown)}`,
    );
    assert.deepEqual(readFileSync(join(skald.data, "models", "qwen3-4b.gguf")), bytes);
    // The first chat starts from the prepared prompt: it never shows "Reading the prompt".
    await page.getByTestId("nav-chat").click();
    await newChat(page);
    await page.evaluate(() => {
      window.__reading = false;
      new MutationObserver(() => {
        if (document.body.textContent.includes("Reading the prompt")) window.__reading = true;
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    });
    await send(page, "Say hello.");
    await waitForAnswer(page, skald);
    assert.equal(await page.evaluate(() => window.__reading), false);
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
    await skald.stop();
    await new Promise((ok) => hub.close(ok));
  }
});

test("with no key, Settings offers the local model and a chat answers with it", async () => {
  const gguf = join(import.meta.dirname, "..", "..", "tests", "models", "SmolLM2-135M-Instruct.Q4_1.gguf");
  assert.ok(existsSync(gguf), "the test model is missing: run `bash scripts/setup.sh --test`");
  const root = tempDir();
  // No provider anywhere; two models in the models folder (links: the file is 98 MB).
  mkdirSync(join(root, ".skald-data", "models"), { recursive: true });
  symlinkSync(gguf, join(root, ".skald-data", "models", "smol.gguf"));
  symlinkSync(gguf, join(root, ".skald-data", "models", "tiny.gguf"));
  const skald = await startSkald({
    root,
    model: null,
    env: { OPENAI_API_KEY: "", OPENAI_BASE_URL: "", ANTHROPIC_API_KEY: "", OLLAMA_HOST: "", SKALD_MODEL: "", SKALD_MODELS_DIR: "" },
  });
  const { page, context, problems } = await openSkald(b, skald);
  try {
    await page.getByTestId("nav-settings").click();
    const section = page.getByTestId("local-models");
    await section.waitFor({ timeout: 20_000 });
    // The recommended model to download is offered next to the installed one.
    await section.getByTestId("recommended-model").filter({ hasText: "SmolLM2" }).waitFor();
    // With nothing configured, the first local model is already the one in use.
    await section.locator("[data-testid='local-model'][data-name='smol'] [data-testid='use-local-model'][disabled]").waitFor();
    await section.locator("[data-testid='local-model'][data-name='tiny'] [data-testid='use-local-model']").click();
    await section.getByTestId("local-models-result").filter({ hasText: "local/tiny" }).waitFor({ timeout: 20_000 });
    await page.screenshot({ path: join(screenshotsDir, "settings-local.png") });
    assert.match(readFileSync(join(skald.data, "config.toml"), "utf8"), /default = "local\/tiny"/);
    await page.getByTestId("nav-chat").click();
    await newChat(page);
    await send(page, "Say hello.");
    // The local model answers (a tiny model: any words will do).
    await waitForAnswer(page, skald);
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
    await skald.stop();
  }
});

// Cost and limits (docs/models.md "Cost and limits", docs/ui.md): the daily budget and the
// context threshold set in Settings (written to config.toml, kept when Settings is opened
// again); an answer stating OpenAI's rate-limit headers and a costly usage ($10 at the
// configured price: 100 tokens out at $100,000 a million) shows in the header's cost, past
// the $5 budget, with the limits in its tooltip and in Settings; the next message asks
// "Daily budget" in the chat and the Inbox before any model call, and "Run it" lets it run.
test("the daily budget and threshold are set in Settings; a turn past the budget asks first, and Run it lets it answer", async () => {
  const config =
    '[sandbox]\nask = "always"\n[models.prices]\n"openai/scripted-*" = { input = 10.0, output = 100000.0 }\n';
  const limits = {
    "x-ratelimit-limit-requests": "50",
    "x-ratelimit-remaining-requests": "41",
    "x-ratelimit-reset-requests": "6m0s",
    "x-ratelimit-limit-tokens": "30000",
    "x-ratelimit-remaining-tokens": "28500",
    "x-ratelimit-reset-tokens": "6m0s",
  };
  await withSkald(
    [
      { ...say(["A costly answer."]), headers: limits, usage: { prompt_tokens: 10, completion_tokens: 100 } },
      say(["Ran past the budget."]),
    ],
    async ({ page, model, skald }) => {
      await page.getByTestId("nav-settings").click();
      const budget = page.getByTestId("daily-budget");
      await budget.waitFor({ timeout: 20_000 });
      assert.equal(await budget.inputValue(), "");
      await budget.fill("5");
      await budget.press("Enter");
      await page.getByTestId("budget-spent").filter({ hasText: "$0.00 of $5.00 today" }).waitFor({ timeout: 10_000 });
      await page.getByTestId("compact-at").selectOption("60");
      await page.waitForFunction(() => {
        const s = document.querySelector("[data-testid='compact-at']");
        return s && !s.disabled && s.value === "60";
      });
      const toml = readFileSync(join(skald.data, "config.toml"), "utf8");
      assert.match(toml, /\[budget\]\s*\ndaily_usd = 5(\.0)?\s*\n/);
      assert.match(toml, /compact_at = 60/);
      assert.match(toml, /"openai\/scripted-\*"/, "the rest of config.toml is kept");
      // Kept: Settings opened again reads them back.
      await page.getByTestId("nav-chat").click();
      await page.getByTestId("nav-settings").click();
      await page.getByTestId("budget-spent").waitFor({ timeout: 10_000 });
      assert.equal(await page.getByTestId("daily-budget").inputValue(), "5");
      assert.equal(await page.getByTestId("compact-at").inputValue(), "60");
      assert.equal(await page.getByTestId("rate-limits").count(), 0, "no provider has stated limits yet");

      await page.getByTestId("nav-chat").click();
      await newChat(page);
      await send(page, "First");
      await waitForAnswer(page, skald);
      const cost = page.getByTestId("cost-usage");
      await cost.filter({ hasText: "$10.00 · today $10.00 of $5.00" }).waitFor({ timeout: 10_000 });
      assert.equal(await cost.getAttribute("data-budget"), "over");
      assert.equal(await cost.getAttribute("data-rate-limits"), "openai");
      await cost.hover();
      const title = await cost.getAttribute("title");
      assert.match(title, /Daily budget: \$5\.00, 200% spent — passed: the next turn asks first/);
      assert.match(title, /Rate limits, openai: 41\/50 requests, 28\.5k\/30k tokens left; resets in (6m|5m \d+s)$/);
      assert.equal(model.requests.length, 1);

      // Settings lists the limits too, and today past the budget.
      await page.getByTestId("nav-settings").click();
      const line = page.locator("[data-testid='rate-limit'][data-provider='openai']");
      await line.waitFor({ timeout: 10_000 });
      assert.match(await line.textContent(), /^openai: 41\/50 requests, 28\.5k\/30k tokens left; resets in (6m|5m \d+s)$/);
      const spent = page.getByTestId("budget-spent");
      assert.equal((await spent.textContent()).trim(), "$10.00 of $5.00 today");
      assert.equal(await spent.getAttribute("data-level"), "over");
      await page.locator("[aria-labelledby='s-limits']").screenshot({ path: join(screenshotsDir, "settings-limits.png") });

      // The next message asks before its model call: in the chat, and in the Inbox.
      await page.getByTestId("nav-chat").click();
      await page.waitForSelector("[data-testid='message-list'][data-loaded='1']");
      await send(page, "Second");
      const card = page.locator(".pending-area [data-testid='question-card'][data-from='skald']");
      await card.waitFor({ timeout: 20_000 });
      assert.match(await card.textContent(), /Daily budget/);
      assert.match(await card.textContent(), /of your \$5\.00 daily budget/);
      assert.deepEqual(await card.getByTestId("suggested-answer").allTextContents(), ["Run it", "Stop"]);
      await page.waitForFunction(() => document.querySelector("[data-testid='inbox-badge']")?.textContent?.trim() === "1");
      assert.equal(model.requests.length, 1, "no model call before the answer");
      await page.screenshot({ path: join(screenshotsDir, "budget.png") });
      await page.getByTestId("nav-inbox").click();
      const item = page.getByTestId("inbox-item").first();
      await item.waitFor();
      assert.match(await item.textContent(), /Daily budget/);
      assert.deepEqual(await item.getByTestId("suggested-answer").allTextContents(), ["Run it", "Stop"]);
      await page.getByTestId("nav-chat").click();
      await card.getByRole("button", { name: "Run it" }).click();
      await card.waitFor({ state: "detached", timeout: 20_000 });
      await page.waitForFunction(
        () =>
          [...document.querySelectorAll("[data-testid='message'][data-role='assistant']")].some((m) => m.textContent.includes("Ran past the budget.")) &&
          !document.querySelector("[data-testid='stop']"),
        null,
        { timeout: 20_000 },
      );
      assert.equal(model.requests.length, 2);
      await page.waitForFunction(() => !document.querySelector("[data-testid='inbox-badge']")?.textContent?.trim());
    },
    { ".skald-data/config.toml": config },
  );
});

// A chat in a worktree (docs/worktrees.md, "In the app"): made from the sidebar, named
// after the folder; its command changes the worktree's copy of draft.md, never the
// person's. The review shows the two changes as hunks with their line numbers; the first
// is left out (from the keyboard) and the second applied, reaching the person's folder;
// Undo takes it back. A comment on a line is sent to the agent: the chat's next message,
// and what the model is sent. The Worktrees screen lists it with its chat, and once
// discarded from the review the chat's badge goes and so does the worktree's folder.
test("a chat in a worktree: its changes are reviewed hunk by hunk, applied in part, undone, commented on, and the worktree discarded", async () => {
  const draft = "one\ntwo\nthree\nfour\nfive\n";
  const command = "sed -i 's/^one$/ONE/; s/^five$/FIVE/' draft.md";
  await withSkald(
    [call("wt1", "execute_cmd", { command }), say(["Changed the first and the last line."]), say(["I will keep the last line as it was."])],
    async ({ page, root, base, skald, model }) => {
      const onDisk = () => readFileSync(join(root, "draft.md"), "utf8");
      const folder = join(base, "data-worktrees", "paper-1");

      // New chat in a worktree: the sidebar's button opens its form; no name, the folder's.
      const chats = await page.getByTestId("session-item").count();
      await page.getByTestId("new-session-worktree").click();
      await page.getByTestId("worktree-name").waitFor();
      assert.equal(await page.getByTestId("worktree-name").evaluate((el) => el === document.activeElement), true);
      await page.getByTestId("worktree-create").click();
      await page.waitForFunction((n) => document.querySelectorAll("[data-testid='session-item']").length > n, chats, { timeout: 30_000 });
      await page.waitForSelector("[data-testid='message-list'][data-loaded='1']");
      await page.getByTestId("worktree-form").waitFor({ state: "detached" });
      const badge = page.getByTestId("worktree-badge");
      await badge.waitFor({ timeout: 10_000 });
      assert.equal((await badge.textContent()).trim(), "worktree: paper-1");
      const tip = await badge.getAttribute("title");
      assert.ok(tip.includes(`Your folder: ${root}`), tip);
      assert.ok(tip.includes(`Its folder: ${folder}`), tip);
      assert.equal(readFileSync(join(folder, "draft.md"), "utf8"), draft);

      await send(page, "capitalise the first and the last line of the draft");
      // The harness makes every command ask; a sandbox that runs it at once goes straight on.
      const approval = page.getByTestId("approval-card").first();
      const ran = page.locator("[data-testid='tool-card'][data-tool='execute_cmd'][data-status='done']");
      await approval.or(ran).first().waitFor({ timeout: 20_000 });
      if (await approval.isVisible()) await approval.getByTestId("approve").click();
      await waitForAnswer(page, skald);
      await ran.waitFor({ timeout: 10_000 });
      assert.equal(readFileSync(join(folder, "draft.md"), "utf8"), "ONE\ntwo\nthree\nfour\nFIVE\n", `the command ran in the worktree: ${skald.stderr().slice(-2000)}`);
      assert.equal(onDisk(), draft, "the person's folder is untouched");

      // The review: one file, two hunks, numbered as in the file.
      await badge.click();
      const review = page.getByTestId("worktree-review");
      await review.waitFor();
      const file = review.locator("[data-testid='review-file'][data-path='draft.md']");
      await file.waitFor({ timeout: 20_000 });
      assert.equal(await file.getAttribute("data-status"), "modified");
      assert.equal((await file.getByTestId("file-stat").textContent()).trim(), "+2 −2");
      const hunks = file.getByTestId("review-hunk");
      assert.equal(await hunks.count(), 2);
      const rows = (i) =>
        hunks
          .nth(i)
          .locator(".diff-row")
          .evaluateAll((els) => els.map((e) => [...e.children].filter((c) => !c.matches(".line-comment-btn")).map((c) => c.textContent).join("|")));
      assert.deepEqual(await rows(0), ["1||-|one", "|1|+|ONE"]);
      assert.deepEqual(await rows(1), ["5||-|five", "|5|+|FIVE"]);
      assert.match(await review.getByTestId("review-help").textContent(), /j\/k/);
      assert.equal((await review.getByTestId("review-count").textContent()).trim(), "1 file · 2 of 2 changes taken");

      // From the keyboard: j and k move between the hunks, Space leaves the first out.
      const focused = () => page.evaluate(() => document.activeElement?.getAttribute("data-choice"));
      await hunks.nth(0).getByTestId("hunk-check").focus();
      await page.keyboard.press("j");
      assert.equal(await focused(), "1");
      await page.keyboard.press("k");
      assert.equal(await focused(), "0");
      await page.keyboard.press("Space");
      assert.equal(await hunks.nth(0).getAttribute("data-taken"), "0");
      assert.equal(await hunks.nth(1).getAttribute("data-taken"), "1");
      assert.equal((await review.getByTestId("review-count").textContent()).trim(), "1 file · 1 of 2 changes taken");

      await review.getByTestId("review-apply").click();
      const report = review.locator("[data-testid='apply-report'][data-result='written']");
      await report.waitFor({ timeout: 20_000 });
      assert.match(await report.getByTestId("apply-written").textContent(), /draft\.md/);
      assert.equal(onDisk(), "one\ntwo\nthree\nfour\nFIVE\n", "only the second hunk is applied");
      await page.screenshot({ path: join(screenshotsDir, "worktree-review.png") });

      await report.getByTestId("apply-undo").click();
      await review.locator("[data-testid='apply-report'][data-undone='1']").waitFor({ timeout: 20_000 });
      assert.equal(onDisk(), draft, "Undo brings the file back");
      assert.equal(await review.getByTestId("apply-undo-error").count(), 0);

      // A comment on the new line 5 (its "+" shows when the pointer is over the line), sent
      // to the agent: it arrives as the chat's next message, which the model is sent.
      const fiveRow = hunks.nth(1).locator(".diff-row.diff-add");
      await fiveRow.hover();
      const plus = fiveRow.getByTestId("line-comment");
      assert.equal(await plus.getAttribute("aria-label"), "Comment on draft.md line 5");
      await plus.click();
      const input = review.getByTestId("line-comment-input");
      await input.waitFor();
      assert.equal(await input.evaluate((el) => el === document.activeElement), true);
      await input.fill("Keep this line in lower case.");
      await input.press("Enter");
      await input.waitFor({ state: "detached" });
      assert.deepEqual(await hunks.nth(1).getByTestId("line-comment-item").allTextContents(), ["Keep this line in lower case."]);
      const sendComments = review.getByTestId("review-send-comments");
      assert.equal((await sendComments.textContent()).trim(), "Send 1 comment to the agent");
      await page.screenshot({ path: join(screenshotsDir, "review-comment.png") });
      await sendComments.click();
      const sent = review.getByTestId("comments-sent");
      await sent.waitFor({ timeout: 20_000 });
      assert.match(await sent.textContent(), /Sent 1 comment to the agent/);
      assert.equal(await review.getByTestId("line-comment-item").count(), 0, "sent comments clear");
      const commentMessage = "Review comments on your changes:\n\n1. `draft.md` line 5:\n   > FIVE\n   Keep this line in lower case.";
      await sent.getByTestId("comments-open-chat").click();
      await page.waitForFunction(
        (text) => [...document.querySelectorAll("[data-testid='message'][data-role='user']")].at(-1)?.querySelector(".bubble")?.textContent === text,
        commentMessage,
        { timeout: 20_000 },
      );
      await page.locator("[data-testid='message'][data-role='assistant']", { hasText: "I will keep the last line as it was." }).waitFor({ timeout: 20_000 });
      await page.getByTestId("stop").waitFor({ state: "detached", timeout: 20_000 });
      assert.equal(model.requests.length, 3);
      const lastUser = model.requests[2].messages.filter((m) => m.role === "user").at(-1);
      assert.equal(typeof lastUser.content === "string" ? lastUser.content : lastUser.content.map((p) => p.text ?? "").join(""), commentMessage);

      // The Worktrees screen lists it, with its chat.
      await page.getByTestId("nav-worktrees").click();
      const row = page.locator("[data-testid='worktree-row'][data-worktree='paper-1']");
      await row.waitFor({ timeout: 10_000 });
      assert.equal((await row.getByTestId("worktree-kind").textContent()).trim(), "copy");
      const rowText = await row.textContent();
      assert.ok(rowText.includes(`Your folder: ${root}`), rowText);
      await row.getByTestId("worktree-chat").click();
      await badge.waitFor({ timeout: 10_000 });

      // Discarded from the review (confirmed): back in the chat, the badge is gone.
      await badge.click();
      await review.getByTestId("review-discard").click();
      const dialog = page.getByTestId("discard-dialog");
      await dialog.waitFor();
      assert.match(await dialog.textContent(), /Your folder is not touched/);
      await dialog.getByTestId("discard-dialog-confirm").click();
      await review.waitFor({ state: "detached", timeout: 20_000 });
      await page.waitForSelector("[data-testid='message-list'][data-loaded='1']");
      await badge.waitFor({ state: "detached", timeout: 10_000 });
      assert.equal(existsSync(folder), false, "the worktree's folder is removed");
      assert.equal(onDisk(), draft);
    },
    { "draft.md": draft },
    {},
    { seenByCommands: true },
  );
});

/** The text a model request's last user message carries. */
const lastUserText = (body) => {
  const m = (body.messages ?? []).filter((x) => x.role === "user").at(-1);
  if (!m) return "";
  return typeof m.content === "string" ? m.content : (m.content ?? []).map((p) => p.text ?? "").join("");
};

/** Approves, from the Inbox, every approval that comes until `done()` holds (a sandbox that runs commands at once needs none). */
async function approveUntil(page, done, timeout = 60_000) {
  const end = Date.now() + timeout;
  while (!(await done())) {
    if (Date.now() > end) throw new Error("timed out approving the agents' calls");
    const badge = await page.evaluate(() => document.querySelector("[data-testid='inbox-badge']")?.textContent?.trim() ?? "");
    if (badge) {
      await page.getByTestId("nav-inbox").click();
      const approve = page.getByTestId("inbox-item").first().getByTestId("approve");
      await approve.waitFor({ timeout: 10_000 });
      await approve.click();
      await page.waitForFunction((n) => (document.querySelector("[data-testid='inbox-badge']")?.textContent?.trim() ?? "") !== n, badge, { timeout: 10_000 });
    } else {
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

// Best of N (docs/worktrees.md, "Best of N"): the dialog sends one prompt to two agents —
// the configured model and another — each in a worktree of its own, whose command writes
// its worktree's name into draft.md. The trial opens side by side: both diffs, each
// agent's model and state; "Apply this one" writes the second's answer into the person's
// file, and "Discard the others" (confirmed) removes the first's worktree.
test("best of 2: two models answer in their own worktrees, side by side; one is applied and the other discarded", async () => {
  const draft = "the draft\n";
  // Each agent runs its command first, then answers once the command's result is back.
  const script = (body, n) =>
    (body.messages ?? []).some((m) => m.role === "tool")
      ? say([`Wrote my answer (${body.model}).`])
      : call(`bo${n}`, "execute_cmd", { command: 'basename "$PWD" > draft.md' });
  await withSkald(
    script,
    async ({ page, root, base, model, skald }) => {
      const onDisk = () => readFileSync(join(root, "draft.md"), "utf8");
      // The dialog, from the sidebar's button: the prompt has the focus; an empty prompt is refused before anything is sent.
      await page.getByTestId("new-best-of").click();
      const dialog = page.getByTestId("best-of-dialog");
      await dialog.waitFor();
      assert.equal(await page.getByTestId("best-of-text").evaluate((el) => el === document.activeElement), true);
      assert.equal(await dialog.getByTestId("best-of-agent").count(), 2);
      await dialog.getByTestId("best-of-start").click();
      assert.equal((await dialog.getByTestId("best-of-text-problem").textContent()).trim(), "Write the prompt the agents are given.");
      await page.getByTestId("best-of-text").fill("Write your answer into draft.md");
      // Agent B on another model, typed in.
      await dialog.getByTestId("best-of-model").nth(1).selectOption("typed");
      await dialog.getByTestId("best-of-typed").fill("openai/other-model");
      assert.equal((await dialog.getByTestId("best-of-start").textContent()).trim(), "Start 2 agents");
      await page.screenshot({ path: join(screenshotsDir, "best-of-dialog.png") });
      await dialog.getByTestId("best-of-start").click();

      // The trial opens side by side: two columns, A on the configured model, B on the other.
      const view = page.getByTestId("trial-view");
      await view.waitFor({ timeout: 30_000 });
      await dialog.waitFor({ state: "detached" });
      assert.equal(await view.getAttribute("data-trial"), "paper-try1");
      const col = (name) => view.locator(`[data-testid='trial-column'][data-worktree='${name}']`);
      await col("paper-try1-a").waitFor({ timeout: 10_000 });
      await col("paper-try1-b").waitFor({ timeout: 10_000 });
      assert.equal((await col("paper-try1-a").getByTestId("trial-model").textContent()).trim(), "openai/scripted-model");
      assert.equal((await col("paper-try1-b").getByTestId("trial-model").textContent()).trim(), "openai/other-model");

      // Their commands ask (the harness makes every command ask): approved from the Inbox.
      const bothDone = async () =>
        (await page.locator("[data-testid='trial-column'][data-state='done']").count()) === 2 ||
        (await page.locator("[data-testid='session-item'] .dot-running, [data-testid='session-item'] [data-testid='session-queued']").count()) === 0 &&
          model.requests.length >= 4;
      await approveUntil(page, bothDone);
      await page.getByTestId("nav-worktrees").click();
      // The Worktrees screen groups the trial, and opens it side by side.
      const group = page.locator("[data-testid='trial-group'][data-trial='paper-try1']");
      await group.waitFor({ timeout: 10_000 });
      assert.equal(await group.getByTestId("worktree-row").count(), 2);
      await group.getByTestId("trial-open").click();
      await view.waitFor();
      await col("paper-try1-a").and(page.locator("[data-state='done']")).waitFor({ timeout: 30_000 });
      await col("paper-try1-b").and(page.locator("[data-state='done']")).waitFor({ timeout: 30_000 });
      assert.equal(readFileSync(join(base, "data-worktrees", "paper-try1-a", "draft.md"), "utf8"), "paper-try1-a\n", skald.stderr().slice(-2000));
      assert.equal(readFileSync(join(base, "data-worktrees", "paper-try1-b", "draft.md"), "utf8"), "paper-try1-b\n");
      assert.equal(onDisk(), draft, "the person's folder is untouched");
      // Each model was asked: the configured one by its name, the other by its own.
      const asked = model.requests.map((r) => r.model).sort();
      assert.deepEqual([...new Set(asked)], ["other-model", "scripted-model"]);
      assert.ok(model.requests.every((r) => lastUserText(r).includes("Write your answer into draft.md") || (r.messages ?? []).some((m) => m.role === "tool")));

      // Both diffs, side by side: one file each, its line replaced by the worktree's name.
      const rowsOf = (name) =>
        col(name)
          .locator("[data-testid='trial-file'][data-path='draft.md'] .diff-row.diff-add, [data-testid='trial-file'][data-path='draft.md'] .diff-row.diff-del")
          .evaluateAll((els) => els.map((e) => e.querySelector(".code").textContent));
      await col("paper-try1-a").locator("[data-testid='trial-file'][data-path='draft.md']").waitFor({ timeout: 10_000 });
      await col("paper-try1-b").locator("[data-testid='trial-file'][data-path='draft.md']").waitFor({ timeout: 10_000 });
      assert.deepEqual(await rowsOf("paper-try1-a"), ["the draft", "paper-try1-a"]);
      assert.deepEqual(await rowsOf("paper-try1-b"), ["the draft", "paper-try1-b"]);
      assert.match(await col("paper-try1-b").getByTestId("trial-answer").textContent(), /Wrote my answer \(other-model\)\./);
      await page.screenshot({ path: join(screenshotsDir, "best-of.png") });

      // B is applied: the person's file gets its answer; A's worktree is discarded, once confirmed.
      await col("paper-try1-b").getByTestId("trial-apply").click();
      await col("paper-try1-b").locator("[data-testid='apply-report'][data-result='written']").waitFor({ timeout: 20_000 });
      assert.equal(onDisk(), "paper-try1-b\n");
      await col("paper-try1-b").getByTestId("trial-discard-others").click();
      const confirm = page.getByTestId("trial-discard-dialog");
      await confirm.waitFor();
      assert.match(await confirm.textContent(), /paper-try1-a/);
      await confirm.getByTestId("trial-discard-dialog-confirm").click();
      await col("paper-try1-a").waitFor({ state: "detached", timeout: 20_000 });
      assert.equal(existsSync(join(base, "data-worktrees", "paper-try1-a")), false, "the other agent's worktree is removed");
      assert.equal(existsSync(join(base, "data-worktrees", "paper-try1-b")), true, "the applied one stays until discarded");
      assert.equal(onDisk(), "paper-try1-b\n");
    },
    { "draft.md": draft },
    {},
    { seenByCommands: true },
  );
});

// A chat's own changes (docs/worktrees.md, "A chat's own changes"): a write in the person's
// folder changes two places of a file; "Review changes" in the chat's header shows them as
// two hunks, none checked; the first is taken back, leaving the second; Undo brings it back.
test("a chat's write is reviewed hunk by hunk; one change is taken back and the undo brings it back", async () => {
  const before = "one\ntwo\nthree\nfour\nfive\n";
  const after = "ONE\ntwo\nthree\nfour\nFIVE\n";
  await withSkald(
    [call("tb1", "write_file", { path: "notes.md", content: after }), say(["Capitalised both."])],
    async ({ page, root, skald }) => {
      const onDisk = () => readFileSync(join(root, "notes.md"), "utf8");
      await newChat(page);
      await send(page, "capitalise the first and the last line");
      const approval = page.getByTestId("approval-card").first();
      await approval.waitFor({ timeout: 20_000 });
      await approval.getByTestId("approve").click();
      await waitForAnswer(page, skald);
      assert.equal(onDisk(), after);

      const open = page.getByTestId("chat-changes-open");
      await open.waitFor({ timeout: 20_000 });
      await open.click();
      const review = page.getByTestId("changes-review");
      await review.waitFor();
      const file = review.locator("[data-testid='review-file'][data-path='notes.md']");
      await file.waitFor({ timeout: 20_000 });
      const hunks = file.getByTestId("review-hunk");
      assert.equal(await hunks.count(), 2);
      // Nothing is taken back unless checked.
      assert.equal((await review.getByTestId("review-count").textContent()).trim(), "1 file · 0 of 2 changes to take back");
      assert.equal(await review.getByTestId("review-revert").getAttribute("aria-disabled"), "true");
      await hunks.nth(0).getByTestId("hunk-check").check();
      assert.equal((await review.getByTestId("review-count").textContent()).trim(), "1 file · 1 of 2 changes to take back");
      await review.getByTestId("review-revert").click();
      const report = review.locator("[data-testid='apply-report'][data-result='written']");
      await report.waitFor({ timeout: 20_000 });
      assert.match(await report.getByTestId("apply-written").textContent(), /Taken back \(1 file\): notes\.md/);
      assert.equal(onDisk(), "one\ntwo\nthree\nfour\nFIVE\n", "only the first change is taken back");
      await page.screenshot({ path: join(screenshotsDir, "take-back.png") });
      // The review reads the chat's changes again: one change left.
      await page.waitForFunction(() => document.querySelectorAll("[data-testid='changes-review'] [data-testid='review-file'][data-path='notes.md'] [data-testid='review-hunk']").length <= 1, null, { timeout: 20_000 }).catch(() => {});

      await report.getByTestId("apply-undo").click();
      await review.locator("[data-testid='apply-report'][data-undone='1']").waitFor({ timeout: 20_000 });
      assert.equal(onDisk(), after, "Undo brings the change back");
      assert.equal(await review.getByTestId("apply-undo-error").count(), 0);

      // Back to the chat.
      await review.getByTestId("review-back").click();
      await page.waitForSelector("[data-testid='message-list'][data-loaded='1']");
      await open.waitFor();
    },
    { "notes.md": before },
  );
});

// Commit and merge (docs/worktrees.md, "Commit and merge (git worktrees)"): a chat in a
// worktree of a git repository changes a file; its review commits the change on
// skald/NAME with a message, and merges the branch into the person's main: a fast-forward,
// the person's file changed, and the undo hint shown.
test("a git worktree's change is committed on its branch and merged into the person's branch", async () => {
  const draft = "one\ntwo\n";
  const command = "sed -i 's/^one$/ONE/' draft.md";
  await withSkald(
    [call("gm1", "execute_cmd", { command }), say(["Capitalised it."])],
    async ({ page, root, base, skald }) => {
      const git = (...args) => execFileSync("git", ["-C", root, "-c", "user.name=Person", "-c", "user.email=person@example.com", ...args], { encoding: "utf8" }).trim();
      git("init", "-q", "-b", "main");
      git("add", "draft.md");
      git("commit", "-q", "-m", "first");
      const start = git("rev-parse", "HEAD");

      const chats = await page.getByTestId("session-item").count();
      await page.getByTestId("new-session-worktree").click();
      await page.getByTestId("worktree-name").fill("caps");
      await page.getByTestId("worktree-create").click();
      await page.waitForFunction((n) => document.querySelectorAll("[data-testid='session-item']").length > n, chats, { timeout: 30_000 });
      const badge = page.getByTestId("worktree-badge");
      await badge.waitFor({ timeout: 10_000 });
      assert.match(await badge.textContent(), /skald\/caps/);
      await send(page, "capitalise the first line");
      const approval = page.getByTestId("approval-card").first();
      const ran = page.locator("[data-testid='tool-card'][data-tool='execute_cmd'][data-status='done']");
      await approval.or(ran).first().waitFor({ timeout: 20_000 });
      if (await approval.isVisible()) await approval.getByTestId("approve").click();
      await waitForAnswer(page, skald);
      await ran.waitFor({ timeout: 10_000 });

      await badge.click();
      const review = page.getByTestId("worktree-review");
      await review.waitFor();
      const gitBox = review.getByTestId("git-actions");
      await gitBox.waitFor();
      // Merging what is not committed is refused by the engine, and said.
      await gitBox.getByTestId("git-merge").click();
      await page.getByTestId("merge-dialog").getByTestId("merge-dialog-confirm").click();
      const outcome = gitBox.getByTestId("git-outcome");
      await outcome.and(page.locator("[data-result='error']")).waitFor({ timeout: 20_000 });
      assert.match(await outcome.textContent(), /Could not merge: .*not committed on skald\/caps/);

      await gitBox.getByTestId("git-commit-open").click();
      assert.equal((await gitBox.getByTestId("git-commit-open").textContent()).trim(), "Commit on skald/caps…");
      await gitBox.getByTestId("git-commit-message").fill("Capitalise the first line");
      await gitBox.getByTestId("git-commit").click();
      await outcome.and(page.locator("[data-result='committed']")).waitFor({ timeout: 20_000 });
      const committed = git("rev-parse", "skald/caps");
      assert.equal(git("log", "-1", "--format=%s", "skald/caps"), "Capitalise the first line");
      assert.match(await outcome.textContent(), new RegExp(`Committed ${committed.slice(0, 7)} on skald/caps`));
      assert.equal(readFileSync(join(root, "draft.md"), "utf8"), draft, "a commit does not touch the person's folder");

      await gitBox.getByTestId("git-merge").click();
      const confirm = page.getByTestId("merge-dialog");
      await confirm.waitFor();
      assert.match(await confirm.textContent(), /git reset --keep ORIG_HEAD/);
      await confirm.getByTestId("merge-dialog-confirm").click();
      await outcome.and(page.locator("[data-result='fast_forward']")).waitFor({ timeout: 20_000 });
      assert.equal((await gitBox.getByTestId("git-merge-text").textContent()).trim(), `main fast-forwarded to ${committed.slice(0, 7)}.`);
      assert.match(await outcome.textContent(), /git reset --keep ORIG_HEAD/);
      assert.equal(git("rev-parse", "main"), committed);
      assert.equal(git("rev-parse", "ORIG_HEAD"), start);
      assert.equal(readFileSync(join(root, "draft.md"), "utf8"), "ONE\ntwo\n", "the merge wrote the person's file");
      await page.screenshot({ path: join(screenshotsDir, "worktree-merge.png") });
      assert.ok(existsSync(join(base, "data-worktrees", "caps")));
    },
    { "draft.md": draft },
    {},
    { seenByCommands: true },
  );
});

/** Waits (polling) until `cond()` holds, at most `timeout` ms; `what` names it in the failure. */
async function until(what, cond, timeout = 20_000) {
  const end = Date.now() + timeout;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** The id of the chat shown (the sidebar's current item). */
const currentChatId = (page) =>
  page.evaluate(() => Number(document.querySelector("[data-testid='session-item'] .session-main[aria-current='page']")?.closest("[data-session-id]")?.getAttribute("data-session-id")));

// Agents at once (docs/board.md): with one allowed (set in Settings), a second chat's turn
// waits for the first's, its chat saying so; the Agents board shows one working and one
// queued, then both done with their last messages; ↓ and Enter on the board open a chat.
test("with one agent at once, a second chat waits in line; the Agents board shows them working, queued, then done", async () => {
  let release;
  const gate = new Promise((r) => (release = r));
  // The first chat's answer waits until the test lets it go; the second's comes at once.
  const script = (body) =>
    JSON.stringify(body.messages ?? []).includes("the slow one") ? gate.then(() => say(["The slow answer."])) : say(["The quick answer."]);
  await withSkald(script, async ({ page, model, skald }) => {
    await page.getByTestId("nav-settings").click();
    const atOnce = page.getByTestId("at-once");
    await atOnce.waitFor({ timeout: 20_000 });
    assert.equal(await atOnce.inputValue(), "4");
    await atOnce.fill("1");
    await atOnce.press("Enter");
    await page.getByTestId("at-once-saved").filter({ hasText: "Saved: 1 at once." }).waitFor({ timeout: 10_000 });
    assert.match(readFileSync(join(skald.data, "config.toml"), "utf8"), /\[agent\]\s*\nat_once = 1\s*\n/);

    // The first chat's turn takes the one place, and holds it while its model answers.
    await page.getByTestId("nav-chat").click();
    await newChat(page);
    const slow = await currentChatId(page);
    await send(page, "Write the slow one");
    await until("the first chat's model call", () => model.requests.length === 1);
    await page.locator("[data-testid='chat-state']", { hasText: "working" }).waitFor({ timeout: 10_000 });

    // The second waits in line, and its chat says so.
    await newChat(page);
    const quick = await currentChatId(page);
    assert.notEqual(quick, slow);
    await send(page, "Write the quick one");
    const notice = page.getByTestId("queue-notice");
    await notice.waitFor({ timeout: 20_000 });
    assert.equal((await page.getByTestId("queue-notice-text").textContent()).trim(), "Waiting for a free place — next in line");
    assert.match(await notice.textContent(), /Settings → Agents sets how many run at once/);
    assert.equal((await page.getByTestId("chat-state").textContent()).trim(), "queued");
    assert.equal(await page.getByTestId("stop").count(), 1, "a queued turn can be stopped");
    assert.equal(model.requests.length, 1, "the second chat's model is not called while it waits");
    await page.screenshot({ path: join(screenshotsDir, "queue.png") });

    // The board, from its shortcut: one working, one queued.
    await page.keyboard.press("Control+Shift+A");
    await page.getByTestId("agents-view").waitFor();
    const rowOf = (id) => page.locator(`[data-testid='agent-row'][data-session-id='${id}']`);
    await rowOf(quick).and(page.locator("[data-state='queued']")).waitFor({ timeout: 10_000 });
    await rowOf(slow).and(page.locator("[data-state='working']")).waitFor({ timeout: 10_000 });
    assert.equal((await rowOf(quick).getByTestId("agent-state").textContent()).trim(), "queued");
    assert.equal((await rowOf(slow).getByTestId("agent-state").textContent()).trim(), "working");
    assert.equal((await page.getByTestId("board-filter-active").textContent()).trim(), "Active 2");
    await page.getByTestId("agents-view").screenshot({ path: join(screenshotsDir, "agents.png") });

    // The first answers; the second starts and answers; the board follows both.
    release();
    await rowOf(slow).and(page.locator("[data-state='done']")).waitFor({ timeout: 20_000 });
    await rowOf(quick).and(page.locator("[data-state='done']")).waitFor({ timeout: 20_000 });
    assert.equal((await rowOf(slow).getByTestId("agent-last").textContent()).trim(), "The slow answer.");
    assert.equal((await rowOf(quick).getByTestId("agent-last").textContent()).trim(), "The quick answer.");
    assert.equal((await rowOf(quick).getByTestId("agent-tokens").textContent()).trim(), "tokens 15");
    assert.equal(model.requests.length, 2);
    assert.match(JSON.stringify(model.requests[1].messages), /the quick one/);

    // From the keyboard: the list has the focus, the most recently active first; ↓ then
    // Enter opens the other chat.
    const order = await page.getByTestId("agent-row").evaluateAll((els) => els.map((e) => Number(e.getAttribute("data-session-id"))));
    assert.deepEqual(order.slice(0, 2), [quick, slow]);
    assert.equal(await page.getByTestId("agent-list").evaluate((el) => el === document.activeElement), true);
    await page.keyboard.press("ArrowDown");
    assert.equal(await rowOf(slow).getAttribute("aria-selected"), "true");
    await page.keyboard.press("Enter");
    await page.waitForSelector("[data-testid='message-list'][data-loaded='1']");
    assert.equal(await currentChatId(page), slow);
    await page.locator("[data-testid='message'][data-role='assistant']", { hasText: "The slow answer." }).waitFor({ timeout: 10_000 });
  });
});
