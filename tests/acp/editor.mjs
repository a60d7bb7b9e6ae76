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
// and answers a third prompt.

import * as acp from "@agentclientprotocol/sdk";
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";

const [bin, data, work] = process.argv.slice(2);
const deadline = setTimeout(() => {
  console.error("editor: the scenario took over 60 s");
  process.exit(3);
}, 60_000);

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
      const once = params.options.find((o) => o.kind === "allow_once");
      return { outcome: { outcome: "selected", optionId: once.optionId } };
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

const initialize = (agent) =>
  agent.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
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
    prompt: [{ type: "text", text: "are you back?" }],
  });
  const answer = seen.updates
    .slice(replayed.length)
    .filter((u) => u.sessionUpdate === "agent_message_chunk")
    .map(text)
    .join("");
  return { replayed, p3: p3.stopReason, answer };
});

clearTimeout(deadline);
console.log(JSON.stringify({ first, second }));
