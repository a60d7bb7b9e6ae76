#!/usr/bin/env python3
"""An MCP server behind OAuth 2.1, on 127.0.0.1, for Skald's login tests.

One process plays both parts over real HTTP: the protected MCP server (streamable HTTP,
JSON responses) and its authorization server (RFC 9728 and RFC 8414 metadata, dynamic
registration, authorization code with PKCE S256, refresh tokens that rotate). Access
tokens live LIFE seconds (argv[1], default 2), so a test sees Skald refresh them.

Tools: `whoami` says which access token it was called with and how many refreshes the
server has granted; `revoke` makes the server refuse the token it was called with (and,
with {"everything": true}, every refresh token too), as a provider revoking access does.

With "enterprise" as argv[2] the authorization server takes only cross-app access
(SEP-990): an identity provider at /idp exchanges a user's ID token (any unexpired JWT with
a `sub`) for an identity assertion grant (RFC 8693), which /token redeems (RFC 7523 JWT
bearer, client `skald-xaa` with secret `xaa-secret` over HTTP Basic) for an access token
without a refresh token. `whoami` then also says how many exchanges the identity provider
has made.

Prints its port on the first line of stdout, then serves until killed.
"""

import base64
import hashlib
import json
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LIFE = int(sys.argv[1]) if len(sys.argv) > 1 else 2
ENTERPRISE = len(sys.argv) > 2 and sys.argv[2] == "enterprise"
# Seconds a refresh takes after the old refresh token is spent (argv[3]), so that two
# clients refreshing at once overlap.
REFRESH_DELAY = float(sys.argv[3]) if len(sys.argv) > 3 else 0.0
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"

lock = threading.Lock()
state = {
    "codes": {},  # code -> (code_challenge, client_id, redirect_uri)
    "access": set(),
    "refresh": set(),
    "issued": 0,
    "refreshes": 0,
    "clients": 0,
    "known": set(),
    "presented": [],  # every bearer token any request carried, issued here or not
    "exchanges": 0,  # ID tokens the identity provider exchanged
}


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def claims(jwt):
    """A JWT's payload, unverified (this test server trusts its callers), or None."""
    parts = jwt.split(".")
    if len(parts) != 3:
        return None
    try:
        return json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except ValueError:
        return None


def issue(refreshable=True):
    state["issued"] += 1
    n = state["issued"]
    access, refresh = f"at-{n}-secretvalue", f"rt-{n}-secretvalue"
    state["access"].add(access)
    out = {
        "access_token": access,
        "token_type": "Bearer",
        "expires_in": LIFE,
        "scope": "notes:read",
    }
    if refreshable:
        state["refresh"].add(refresh)
        out["refresh_token"] = refresh
    return out


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def base(self):
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def send(self, status, body=None, headers=None, content_type="application/json"):
        data = b"" if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        if body is not None:
            self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def do_GET(self):
        url = urllib.parse.urlparse(self.path)
        if url.path == "/.well-known/oauth-protected-resource/mcp":
            return self.send(200, {
                "resource": self.base() + "/mcp",
                "authorization_servers": [self.base()],
                "scopes_supported": ["notes:read"],
            })
        if url.path == "/.well-known/oauth-authorization-server" and ENTERPRISE:
            b = self.base()
            return self.send(200, {
                "issuer": b,
                "authorization_endpoint": b + "/authorize",
                "token_endpoint": b + "/token",
                "grant_types_supported": [JWT_BEARER],
                "token_endpoint_auth_methods_supported": ["client_secret_basic"],
                "scopes_supported": ["notes:read"],
            })
        if url.path == "/idp/.well-known/openid-configuration" and ENTERPRISE:
            b = self.base() + "/idp"
            return self.send(200, {
                "issuer": b,
                "authorization_endpoint": b + "/authorize",
                "token_endpoint": b + "/token",
                "jwks_uri": b + "/jwks",
                "grant_types_supported": [TOKEN_EXCHANGE],
            })
        if url.path == "/.well-known/oauth-authorization-server":
            b = self.base()
            return self.send(200, {
                "issuer": b,
                "authorization_endpoint": b + "/authorize",
                "token_endpoint": b + "/token",
                "registration_endpoint": b + "/register",
                "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code", "refresh_token"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["none"],
                "scopes_supported": ["notes:read"],
            })
        if url.path == "/authorize":
            q = dict(urllib.parse.parse_qsl(url.query))
            if q.get("code_challenge_method") != "S256" or not q.get("code_challenge"):
                return self.send(400, {"error": "invalid_request", "error_description": "PKCE S256 is required"})
            with lock:
                known = q.get("client_id") in state["known"]
            if not known:
                target = q["redirect_uri"] + "?" + urllib.parse.urlencode(
                    {"error": "unauthorized_client", "error_description": "unknown client", "state": q.get("state", "")})
                return self.send(302, None, {"Location": target})
            with lock:
                code = f"code-{len(state['codes']) + 1}"
                state["codes"][code] = (q["code_challenge"], q.get("client_id"), q.get("redirect_uri"))
            target = q["redirect_uri"] + "?" + urllib.parse.urlencode({"code": code, "state": q.get("state", "")})
            return self.send(302, None, {"Location": target})
        if url.path == "/mcp":
            return self.send(405, None, {"Allow": "POST"})
        if url.path == "/presented":
            with lock:
                return self.send(200, state["presented"])
        return self.send(404, {"error": "not_found"})

    def do_DELETE(self):
        self.send(405, None, {"Allow": "POST"})

    def do_POST(self):
        url = urllib.parse.urlparse(self.path)
        raw = self.body()
        auth = self.headers.get("Authorization", "")
        if auth.startswith("Bearer "):
            with lock:
                state["presented"].append(auth[len("Bearer "):])
        if url.path == "/register":
            meta = json.loads(raw or b"{}")
            with lock:
                state["clients"] += 1
                client = f"client-{state['clients']}"
                state["known"].add(client)
            return self.send(201, {
                "client_id": client,
                "redirect_uris": meta.get("redirect_uris", []),
                "token_endpoint_auth_method": "none",
                "grant_types": ["authorization_code", "refresh_token"],
            })
        if url.path == "/idp/token" and ENTERPRISE:
            form = dict(urllib.parse.parse_qsl(raw.decode()))
            user = claims(form.get("subject_token", "")) or {}
            if (form.get("grant_type") != TOKEN_EXCHANGE
                    or form.get("subject_token_type") != "urn:ietf:params:oauth:token-type:id_token"
                    or form.get("requested_token_type") != "urn:ietf:params:oauth:token-type:id-jag"
                    or form.get("audience") != self.base()
                    or form.get("resource") != self.base() + "/mcp"):
                return self.send(400, {"error": "invalid_request"})
            if not user.get("sub") or user.get("exp", 0) <= time.time():
                return self.send(400, {"error": "invalid_grant"})
            with lock:
                state["exchanges"] += 1
                n = state["exchanges"]
            now = int(time.time())
            grant = {
                "iss": self.base() + "/idp", "sub": user["sub"], "aud": self.base(),
                "client_id": "skald-xaa", "jti": f"jag-{n}", "iat": now, "exp": now + 300,
                "resource": form["resource"], "scope": form.get("scope", "notes:read"),
            }
            header = {"alg": "ES256", "typ": "oauth-id-jag+jwt"}
            jag = ".".join([b64(json.dumps(header).encode()), b64(json.dumps(grant).encode()), b64(b"sig")])
            return self.send(200, {
                "access_token": jag,
                "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag",
                "token_type": "N_A",
                "scope": grant["scope"],
            })
        if url.path == "/token" and ENTERPRISE:
            form = dict(urllib.parse.parse_qsl(raw.decode()))
            basic = "Basic " + base64.b64encode(b"skald-xaa:xaa-secret").decode()
            if self.headers.get("Authorization") != basic:
                return self.send(401, {"error": "invalid_client"})
            grant = claims(form.get("assertion", "")) or {}
            if (form.get("grant_type") != JWT_BEARER or grant.get("aud") != self.base()
                    or grant.get("client_id") != "skald-xaa"):
                return self.send(400, {"error": "invalid_grant"})
            with lock:
                return self.send(200, issue(refreshable=False))
        if url.path == "/token":
            form = dict(urllib.parse.parse_qsl(raw.decode()))
            with lock:
                if form.get("grant_type") == "authorization_code":
                    saved = state["codes"].pop(form.get("code", ""), None)
                    verifier = form.get("code_verifier", "")
                    digest = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
                    if saved is None or saved[0] != digest:
                        return self.send(400, {"error": "invalid_grant"})
                    return self.send(200, issue())
                if form.get("grant_type") == "refresh_token":
                    token = form.get("refresh_token", "")
                    if token not in state["refresh"]:
                        return self.send(400, {"error": "invalid_grant", "error_description": "refresh token revoked"})
                    state["refresh"].discard(token)
                    state["refreshes"] += 1
                    issued = issue()
            if form.get("grant_type") == "refresh_token":
                time.sleep(REFRESH_DELAY)
                return self.send(200, issued)
            return self.send(400, {"error": "unsupported_grant_type"})
        if url.path != "/mcp":
            return self.send(404, {"error": "not_found"})

        auth = self.headers.get("Authorization", "")
        token = auth[len("Bearer "):] if auth.startswith("Bearer ") else ""
        with lock:
            valid = token in state["access"]
        if not valid:
            challenge = f'Bearer resource_metadata="{self.base()}/.well-known/oauth-protected-resource/mcp"'
            if token:
                challenge += ', error="invalid_token"'
            return self.send(401, {"error": "invalid_token"}, {"WWW-Authenticate": challenge})

        msg = json.loads(raw or b"{}")
        method, mid = msg.get("method"), msg.get("id")
        if mid is None:
            return self.send(202)
        if method == "initialize":
            result = {
                "protocolVersion": msg["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "oauth-test", "version": "1"},
            }
        elif method == "tools/list":
            result = {"tools": [
                {"name": "whoami", "description": "Which token called", "inputSchema": {"type": "object"}},
                {"name": "revoke", "description": "Refuse this token from now on",
                 "inputSchema": {"type": "object", "properties": {"everything": {"type": "boolean"}}}},
            ]}
        elif method == "tools/call":
            name = msg["params"]["name"]
            args = msg["params"].get("arguments") or {}
            with lock:
                if name == "whoami":
                    text = f"called with {token.split('-secret')[0]}; refreshes granted: {state['refreshes']}"
                    if ENTERPRISE:
                        text += f"; exchanges: {state['exchanges']}"
                elif name == "revoke":
                    state["access"].discard(token)
                    if args.get("everything"):
                        state["refresh"].clear()
                    text = "revoked"
                else:
                    text = None
            if text is None:
                return self.send(200, {"jsonrpc": "2.0", "id": mid, "error": {"code": -32602, "message": "unknown tool"}})
            result = {"content": [{"type": "text", "text": text}]}
        else:
            return self.send(200, {"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "no such method"}})
        return self.send(200, {"jsonrpc": "2.0", "id": mid, "result": result})


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
