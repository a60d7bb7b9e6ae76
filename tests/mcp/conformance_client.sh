#!/usr/bin/env bash
# The client side of the MCP conformance suite (`@modelcontextprotocol/conformance`): the
# suite starts a scenario's server and runs this with its URL as the last argument and the
# scenario's name in MCP_CONFORMANCE_SCENARIO. Everything goes through the real `skald`
# ($SKALD_BIN, its data and its model set by crates/skald-cli/tests/it/conformance.rs) as a
# user would work: register the server; log in when it asks (OAuth in $BROWSER, which
# follows the authorization server's redirect); then a chat (`skald exec`, its model the
# test's scripted server) activates the server and calls its tool. A user told to log in
# again does — up to 4 times, more than any scenario needs: Skald has to stop asking
# on its own when logging in again cannot help.
set -u
url="${*: -1}"
scenario="${MCP_CONFORMANCE_SCENARIO:-}"
skald() { "$SKALD_BIN" "$@"; }

skald mcp add conformance --url "$url" --no-check >&2 || exit 1

context() {
  python3 -c 'import json, os, sys
print(json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}").get(sys.argv[1], ""))' "$1"
}

login() {
  local args=()
  # A client registered by hand, when the scenario has one (pre-registration, client
  # credentials, cross-app access): its secret through the environment, its private key through a file.
  local id secret key alg
  id=$(context client_id)
  secret=$(context client_secret)
  key=$(context private_key_pem)
  alg=$(context signing_algorithm)
  if [ -n "$id" ]; then
    args+=(--client-id "$id")
    if [ -n "$key" ]; then
      local pem
      pem=$(mktemp)
      printf '%s\n' "$key" >"$pem"
      args+=(--private-key-file "$pem")
      [ -n "$alg" ] && args+=(--signing-algorithm "$alg")
    elif [ -n "$secret" ]; then
      export CONFORMANCE_CLIENT_SECRET="$secret"
      args+=(--client-secret-env CONFORMANCE_CLIENT_SECRET)
    fi
  fi
  # Cross-app access: the user's ID token from their identity provider, which Skald
  # exchanges for the server's tokens; it comes through the environment as a secret does.
  local idp
  idp=$(context idp_issuer)
  if [ -n "$idp" ]; then
    CONFORMANCE_ID_TOKEN=$(context idp_id_token)
    export CONFORMANCE_ID_TOKEN
    args+=(--idp "$idp" --idp-client-id "$(context idp_client_id)" --id-token-env CONFORMANCE_ID_TOKEN)
  fi
  skald mcp login conformance "${args[@]}" >&2
}

case "$scenario" in
  initialize)
    # Connecting and listing its tools is the whole scenario.
    skald mcp tools conformance >&2
    exit $?
    ;;
  auth/*)
    login || exit 1
    ;;
esac

chat() {
  skald exec --json --approve all "use the conformance server"
}

# Whether a chat's events (stdin) show the server's tool answering.
called() {
  python3 -c 'import json, sys
events = [json.loads(l) for l in sys.stdin if l.startswith("{")]
sys.exit(0 if any(e.get("type") == "tool_done" and e.get("tool_call_id") == "call" for e in events) else 1)'
}

if [ "$scenario" = "elicitation-sep1034-client-defaults" ]; then
  # The server's form waits in the Agent Inbox; the user accepts it as it is (its
  # defaults), from another process, as they would from the app.
  out=$(mktemp)
  chat >"$out" &
  pid=$!
  answered=0
  for _ in $(seq 1 300); do
    if ! kill -0 "$pid" 2>/dev/null; then break; fi
    id=$(skald inbox list --json 2>/dev/null | python3 -c 'import json,sys
items = [i for i in json.load(sys.stdin) if i.get("kind") == "elicitation"]
print(items[0]["id"] if items else "")')
    if [ -n "$id" ] && [ "$answered" = 0 ]; then
      skald inbox answer "$id" --text '{}' >&2 && answered=1
    fi
    sleep 0.1
  done
  wait "$pid"
  status=$?
  cat "$out" >&2
  [ "$answered" = 1 ] && [ "$status" = 0 ] && called <"$out"
  exit $?
fi

for attempt in 1 2 3 4; do
  out=$(chat)
  status=$?
  printf '%s\n' "$out" >&2
  [ "$status" = 0 ] || exit 1
  if grep -q 'skald mcp login conformance' <<<"$out"; then
    # Told to log in (again): the user does, and asks once more; a login Skald refuses
    # ends it.
    login || exit 0
    continue
  fi
  called <<<"$out"
  exit $?
done
exit 0
