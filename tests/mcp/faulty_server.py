#!/usr/bin/env python3
"""An MCP server over stdio that misbehaves on request, for Skald's fault tests.

It speaks the real protocol (JSON-RPC 2.0, one message per line) and offers five tools:
  echo     answers {"text": ...} with the text: the healthy case;
  garbage  writes lines that are not JSON-RPC to stdout, then answers properly;
  huge     answers with a result of `bytes` bytes (default 20 MB);
  hang     never answers this call (the server stays alive and serves other calls);
  crash    exits with status 3 without answering.
Each start appends a line to the file named by FAULTY_STARTS, if set, so a test can
count restarts. With FAULTY_HOSTILE set, every tool's description, every error and the
server's stderr carry terminal controls (a title change, a screen clear): what Skald
prints of them must show them escaped.
"""

import json
import os
import sys


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def result(id_, text):
    send({"jsonrpc": "2.0", "id": id_,
          "result": {"content": [{"type": "text", "text": text}], "isError": False}})


TOOLS = [
    {"name": name, "description": desc,
     "inputSchema": {"type": "object", "properties": props}}
    for name, desc, props in [
        ("echo", "Answers with the text.", {"text": {"type": "string"}}),
        ("garbage", "Writes non-protocol lines, then answers.", {}),
        ("huge", "Answers with a very large result.", {"bytes": {"type": "integer"}}),
        ("hang", "Never answers.", {}),
        ("crash", "Exits without answering.", {}),
    ]
]


HOSTILE = "\x1b]0;owned\x07\x1b[2J\x1b[31m" if os.environ.get("FAULTY_HOSTILE") else ""
if HOSTILE:
    for tool in TOOLS:
        tool["description"] = HOSTILE + tool["description"]


def main():
    if HOSTILE:
        sys.stderr.write(HOSTILE + "starting\n")
        sys.stderr.flush()
    starts = os.environ.get("FAULTY_STARTS")
    if starts:
        with open(starts, "a") as f:
            f.write(f"{os.getpid()}\n")
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        method, id_ = msg.get("method"), msg.get("id")
        if id_ is None:
            continue  # a notification
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": id_, "result": {
                "protocolVersion": msg["params"].get("protocolVersion", "2025-06-18"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "faulty", "version": "1.0.0"}}})
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": id_, "result": {"tools": TOOLS}})
        elif method == "ping":
            send({"jsonrpc": "2.0", "id": id_, "result": {}})
        elif method == "tools/call":
            name = msg["params"]["name"]
            args = msg["params"].get("arguments") or {}
            if name == "echo":
                result(id_, str(args.get("text", "")))
            elif name == "garbage":
                sys.stdout.write("this is not JSON\n{\"broken\": \n\x00\x01\x02 binary noise\n")
                sys.stdout.write(json.dumps({"jsonrpc": "2.0", "method": "no/such/notification"}) + "\n")
                sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": 987654, "result": {}}) + "\n")
                sys.stdout.flush()
                result(id_, "answered after the noise")
            elif name == "huge":
                result(id_, "x" * int(args.get("bytes", 20_000_000)))
            elif name == "hang":
                pass
            elif name == "crash":
                os._exit(3)
            else:
                send({"jsonrpc": "2.0", "id": id_,
                      "error": {"code": -32602, "message": f"{HOSTILE}unknown tool {name}"}})
        else:
            send({"jsonrpc": "2.0", "id": id_,
                  "error": {"code": -32601, "message": f"unknown method {method}"}})


if __name__ == "__main__":
    main()
