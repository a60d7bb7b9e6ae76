#!/usr/bin/env bash
# The "browser" of the OAuth conformance scenarios ($BROWSER for `skald mcp login`): it
# opens the authorization page and follows its redirects, as a person who clicks Allow
# would — the suite's authorization server sends it straight back to Skald's loopback
# redirect, which is the page it ends on.
exec curl --silent --show-error --location --max-redirs 5 --max-time 30 --output /dev/null "$1"
