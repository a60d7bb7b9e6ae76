// The editor in Skald's ACP tests: the official TypeScript SDK's client drives
// `skald acp` over stdio as Zed or JetBrains would, against the scripted model the Rust
// test started (its address is in the environment this process passes on). It prints
// one JSON report on stdout; crates/skald-cli/tests/it/acp.rs checks it.
//
//   node editor.mjs SKALD_BIN DATA_DIR WORK_DIR
//
// The scenario: a new session; a prompt whose turn writes a plan, runs a command the
// editor is asked to allow (allow once) and answers; a prompt cancelled while it streams;
// then a second `skald acp` process (Skald restarted) that loads the session, replays it
// and answers a third prompt. These two editors lend nothing. A third one lends its file
// system and terminals: it holds an unsaved buffer of notes.txt, and a turn reads and
// edits that file and runs a command, which must all come to the editor.

import * as acp from "@agentclientprotocol/sdk";
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";

const [bin, data, work] = process.argv.slice(2);
const deadline = setTimeout(() => {
  console.error("editor: the scenario took over 60 s");
  process.exit(3);
}, 60_000);

/** What the editors were asked for of their file systems and terminals. */
const lent = { reads: [], writes: [], terminals: [], released: [] };
/** The editor's unsaved buffers: path -> text. */
const buffers = new Map();

/** A terminal as an editor runs one: the command spawned, its output kept. */
function createTerminal(params) {
  const id = `term-${lent.terminals.length + 1}`;
  const env = { ...process.env };
  for (const v of params.env ?? []) env[v.name] = v.value;
  const child = spawn(params.command, params.args ?? [], { cwd: params.cwd, env });
  const t = { id, params, output: "", exit: null, waiters: [], child };
  child.stdout.on("data", (d) => (t.output += d));
  child.stderr.on("data", (d) => (t.output += d));
  child.on("exit", (code, signal) => {
    t.exit = { exitCode: code, signal };
    for (const w of t.waiters) w(t.exit);
  });
  child.on("error", (e) => {
    t.output += String(e);
    t.exit = { exitCode: 127, signal: null };
    for (const w of t.waiters) w(t.exit);
  });
  lent.terminals.push(t);
  return { terminalId: id };
}

const terminal = (id) => lent.terminals.find((t) => t.id === id);

/** How this editor answers permission requests. */
let permissionKind = "allow_once";

/** Runs `body` against a fresh `skald acp`; resolves with its result when the agent exits. */
async function withAgent(body) {
  const child = spawn(bin, ["--data-dir", data, "acp"], {
    cwd: work,
    stdio: ["pipe", "pipe", "inherit"],
  });
  const exited = new Promise((resolve) => child.on("exit", (code) => resolve(code)));
  const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  const updates = [];
  const permissions = [];
  let onUpdate = () => {};
  const app = acp
    .client({ name: "skald-acp-test" })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      updates.push(params.update);
      onUpdate(params.update);
    })
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
      permissions.push(params);
      const chosen = params.options.find((o) => o.kind === permissionKind);
      return { outcome: { outcome: "selected", optionId: chosen.optionId } };
    })
    .onRequest(acp.methods.client.fs.readTextFile, ({ params }) => {
      lent.reads.push(params.path);
      return { content: buffers.get(params.path) ?? readFileSync(params.path, "utf8") };
    })
    .onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => {
      lent.writes.push(params);
      // As Zed does: the buffer takes the text and is saved.
      buffers.delete(params.path);
      writeFileSync(params.path, params.content);
      return {};
    })
    .onRequest(acp.methods.client.terminal.create, ({ params }) => createTerminal(params))
    .onRequest(acp.methods.client.terminal.waitForExit, ({ params }) => {
      const t = terminal(params.terminalId);
      return t.exit ?? new Promise((resolve) => t.waiters.push(resolve));
    })
    .onRequest(acp.methods.client.terminal.output, ({ params }) => {
      const t = terminal(params.terminalId);
      return { output: t.output, truncated: false, exitStatus: t.exit };
    })
    .onRequest(acp.methods.client.terminal.kill, ({ params }) => {
      terminal(params.terminalId).child.kill("SIGKILL");
      return {};
    })
    .onRequest(acp.methods.client.terminal.release, ({ params }) => {
      lent.released.push(params.terminalId);
      return {};
    });
  const result = await app.connectWith(stream, (agent) =>
    body(agent, {
      updates,
      permissions,
      waitFor: (pred) =>
        new Promise((resolve) => {
          const seen = updates.find(pred);
          if (seen) return resolve(seen);
          onUpdate = (u) => pred(u) && resolve(u);
        }),
    }),
  );
  child.stdin.end();
  const code = await exited;
  return { ...result, exit: code };
}

const initialize = (agent, lends = false) =>
  agent.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: lends, writeTextFile: lends }, terminal: lends },
    clientInfo: { name: "skald-acp-test", version: "0.0.0" },
  });

const text = (u) => (u.content && u.content.type === "text" ? u.content.text : "");

const first = await withAgent(async (agent, seen) => {
  const init = await initialize(agent);
  const { sessionId } = await agent.request(acp.methods.agent.session.new, {
    cwd: work,
    mcpServers: [],
  });
  const p1 = await agent.request(acp.methods.agent.session.prompt, {
    sessionId,
    prompt: [{ type: "text", text: "plan it and run the command" }],
  });
  const afterFirst = seen.updates.length;
  // The second prompt streams slowly: cancelled once its first words arrive.
  const p2 = agent.request(acp.methods.agent.session.prompt, {
    sessionId,
    prompt: [{ type: "text", text: "tell me a long story" }],
  });
  await seen.waitFor((u, i) => u.sessionUpdate === "agent_message_chunk" && seen.updates.indexOf(u) >= afterFirst);
  await agent.notify(acp.methods.agent.session.cancel, { sessionId });
  const stopped = await p2;
  return {
    init,
    sessionId,
    p1: p1.stopReason,
    p2: stopped.stopReason,
    updates: seen.updates.slice(0, afterFirst),
    permissions: seen.permissions,
  };
});

const second = await withAgent(async (agent, seen) => {
  await initialize(agent);
  await agent.request(acp.methods.agent.session.load, {
    sessionId: first.sessionId,
    cwd: work,
    mcpServers: [],
  });
  const replayed = seen.updates.slice();
  const p3 = await agent.request(acp.methods.agent.session.prompt, {
    sessionId: first.sessionId,
    // With an image (a 1×1 PNG), which the model is shown.
    prompt: [
      { type: "text", text: "are you back?" },
      {
        type: "image",
        mimeType: "image/png",
        uri: "file:///tmp/dot.png",
        data: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
      },
    ],
  });
  const answer = seen.updates
    .slice(replayed.length)
    .filter((u) => u.sessionUpdate === "agent_message_chunk")
    .map(text)
    .join("");
  return { replayed, p3: p3.stopReason, answer };
});

const lentBefore = { reads: lent.reads.length, writes: lent.writes.length, terminals: lent.terminals.length };

const notes = join(work, "notes.txt");
writeFileSync(notes, "disk text\n");
buffers.set(notes, "unsaved text\n");
// This editor's person allows the command for good.
permissionKind = "allow_always";
const third = await withAgent(async (agent, seen) => {
  await initialize(agent, true);
  const { sessionId } = await agent.request(acp.methods.agent.session.new, {
    cwd: work,
    mcpServers: [],
  });
  const p = await agent.request(acp.methods.agent.session.prompt, {
    sessionId,
    prompt: [{ type: "text", text: "edit the notes in my editor" }],
  });
  return { p: p.stopReason, updates: seen.updates, permissions: seen.permissions };
});

clearTimeout(deadline);
const terminals = lent.terminals.map((t) => ({ id: t.id, params: t.params, output: t.output, exit: t.exit }));
console.log(
  JSON.stringify({
    first,
    second,
    third,
    lentBefore,
    lent: { ...lent, terminals },
    onDisk: readFileSync(notes, "utf8"),
  }),
);
