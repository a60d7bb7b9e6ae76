// Settings → Web (docs/web.md, "Settings"): whether web search works as set up (the
// `settings` reply's `web`, what `skald doctor` says of it, with what to do when it does
// not), and config.toml's `[web]` edited with `set_web`: which search API, its address,
// whether chats on Anthropic use Anthropic's own search, and how long a page fetch may
// take. Brave's and Tavily's key is the secret WEB_SEARCH_KEY, stored here with
// `set_secret` (as Settings → Secrets does), after which the settings are read again.

import { useEffect, useRef, useState } from "react";
import type { WebSettings } from "../../protocol";
import { useTransport, type Loadable } from "../../app/context";
import { errorText } from "../../lib/format";
import { Load, Section, type SettingsReply } from "./Section";

/** The secret Brave and Tavily read their key from. */
export const WEB_SEARCH_KEY = "WEB_SEARCH_KEY";

/** The searches `[web] search` takes, as the select offers them. */
export const SEARCHES: { value: string; label: string }[] = [
  { value: "", label: "Off" },
  { value: "provider", label: "The provider's own search" },
  { value: "searxng", label: "SearXNG" },
  { value: "brave", label: "Brave Search" },
  { value: "tavily", label: "Tavily" },
];

/** The address each search API is asked at when `search_url` is empty (none: required). */
const DEFAULT_URL: Record<string, string> = {
  brave: "https://api.search.brave.com/res/v1/web/search",
  tavily: "https://api.tavily.com/search",
};

/** A search API Skald asks itself (not off, not the provider's). */
const isApi = (search: string) => search === "searxng" || search === "brave" || search === "tavily";
/** A search API that needs WEB_SEARCH_KEY. */
const needsKey = (search: string) => search === "brave" || search === "tavily";

export const MAX_TIMEOUT = 600;

/** What the timeout field says: a whole number of seconds from 1 to 600, or why it is not one. */
export function parseTimeout(text: string): { secs: number } | { error: string } {
  const t = text.trim();
  if (t === "") return { error: `Write how long a page fetch may take: a whole number of seconds from 1 to ${MAX_TIMEOUT}.` };
  if (!/^\d+$/.test(t)) return { error: `"${t}" is not a whole number of seconds: write one from 1 to ${MAX_TIMEOUT}.` };
  const secs = Number(t);
  if (secs < 1 || secs > MAX_TIMEOUT) return { error: `A fetch's timeout is 1 to ${MAX_TIMEOUT} seconds, not ${secs}.` };
  return { secs };
}

export function Web({ data, reload }: { data: Loadable<SettingsReply>; reload: () => void }) {
  return (
    <Section title="Web" id="s-web">
      <Load data={data} retry={reload}>
        {/* An engine from before the web tools says nothing of them. */}
        {(s) => (s.web ? <WebBody settings={s.web} reload={reload} /> : <div className="muted small">This engine has no web settings.</div>)}
      </Load>
    </Section>
  );
}

/** The form's fields, as typed. */
type Form = { search: string; searchUrl: string; providerSearch: boolean; timeout: string };

const formOf = (w: WebSettings): Form => ({ search: w.search, searchUrl: w.search_url, providerSearch: w.provider_search, timeout: String(w.timeout_secs) });
const sameForm = (a: Form, b: Form) => a.search === b.search && a.searchUrl === b.searchUrl && a.providerSearch === b.providerSearch && a.timeout === b.timeout;

function WebBody({ settings, reload }: { settings: WebSettings; reload: () => void }) {
  const t = useTransport();
  /** What applies: the last settings read or `set_web` reply. */
  const [web, setWeb] = useState(settings);
  const [form, setForm] = useState(() => formOf(settings));
  /** The form as last filled from the engine, to tell the person's edits from it. */
  const filled = useRef(formOf(settings));
  useEffect(() => {
    setWeb(settings);
    // Settings read again (after the key was stored) keep what the person is editing.
    const before = filled.current;
    const next = formOf(settings);
    filled.current = next;
    setForm((f) => (sameForm(f, before) ? next : f));
  }, [settings]);
  const [error, setError] = useState<{ text: string; field: "url" | "timeout" | null } | null>(null);
  const [busy, setBusy] = useState(false);
  const [done, setDone] = useState(false);
  const saving = useRef(false);

  const edit = (change: Partial<Form>) => {
    setForm((f) => ({ ...f, ...change }));
    setDone(false);
  };

  const save = async () => {
    if (saving.current) return;
    const timeout = parseTimeout(form.timeout);
    if ("error" in timeout) {
      setError({ text: timeout.error, field: "timeout" });
      setDone(false);
      return;
    }
    // The address is only shown for a search API; otherwise the one in config.toml stays.
    const searchUrl = isApi(form.search) ? form.searchUrl.trim() : web.search_url;
    if (form.search === "searxng" && searchUrl === "") {
      setError({ text: "SearXNG needs its address: your instance's URL, like http://127.0.0.1:8888 (with its JSON format on).", field: "url" });
      setDone(false);
      return;
    }
    saving.current = true;
    setBusy(true);
    setError(null);
    setDone(false);
    try {
      const r = await t.call({ cmd: "set_web", search: form.search, search_url: searchUrl, provider_search: form.providerSearch, timeout_secs: timeout.secs });
      setWeb(r.web);
      const next = formOf(r.web);
      filled.current = next;
      setForm(next);
      setDone(true);
    } catch (e) {
      // Refused: what was typed stays, to be corrected.
      setError({ text: errorText(e), field: null });
    } finally {
      saving.current = false;
      setBusy(false);
    }
  };

  const known = SEARCHES.some((s) => s.value === form.search);
  const api = isApi(form.search);
  const note =
    form.search === "provider"
      ? "Chats on Anthropic use Anthropic's own search; chats on other providers have none."
      : form.search === ""
        ? "Agents cannot search the web. They can still read a page (web_fetch), each host asking first."
        : null;
  return (
    <>
      <div className="row wrap">
        <span className="small">
          <span className="muted">Web search: </span>
          <span data-testid="web-status">{web.status}</span>
        </span>
        {web.search !== "" &&
          (web.ready ? (
            <span className="chip chip-done" data-testid="web-ready">
              Ready
            </span>
          ) : (
            <span className="chip chip-waiting" data-testid="web-ready">
              Not ready
            </span>
          ))}
      </div>
      {!web.ready && web.hint && (
        <div className="small muted" data-testid="web-hint">
          {web.hint}
        </div>
      )}
      <form
        className="web-form"
        aria-label="Web settings"
        // Its own messages say what is wrong, not the browser's bubble.
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          void save();
        }}
        onKeyDown={(e) => {
          // Enter saves from the select and the checkbox too, not only from text fields.
          const el = e.target as HTMLElement;
          if (e.key === "Enter" && (el instanceof HTMLSelectElement || (el instanceof HTMLInputElement && el.type === "checkbox"))) {
            e.preventDefault();
            void save();
          }
        }}
      >
        <label className="field">
          <span>Search</span>
          <select data-testid="web-search" value={form.search} onChange={(e) => edit({ search: e.target.value })}>
            {SEARCHES.map((s) => (
              <option key={s.value} value={s.value}>
                {s.label}
              </option>
            ))}
            {/* A search config.toml names that this list lacks (it is refused on saving). */}
            {!known && <option value={form.search}>{form.search}</option>}
          </select>
        </label>
        {api && (
          <label className="field">
            <span>Search URL{form.search === "searxng" ? " (required)" : ""}</span>
            <input
              data-testid="web-search-url"
              type="url"
              inputMode="url"
              autoComplete="off"
              spellCheck={false}
              required={form.search === "searxng"}
              aria-invalid={error?.field === "url"}
              aria-describedby="web-search-url-hint"
              placeholder={DEFAULT_URL[form.search] ?? "http://127.0.0.1:8888"}
              value={form.searchUrl}
              onChange={(e) => edit({ searchUrl: e.target.value })}
            />
          </label>
        )}
        {api && (
          <div className="small muted" id="web-search-url-hint">
            {form.search === "searxng"
              ? "Your SearXNG instance's address, with its JSON format on."
              : "Empty: the API's own address (above). Set it to ask another endpoint; the key goes only there."}
          </div>
        )}
        {api ? (
          <label className="row small">
            <input type="checkbox" data-testid="web-provider-search" checked={form.providerSearch} onChange={(e) => edit({ providerSearch: e.target.checked })} />
            Chats on Anthropic use Anthropic's own search
          </label>
        ) : (
          note && (
            <div className="small muted" data-testid="web-search-note">
              {note}
            </div>
          )
        )}
        <label className="field inline">
          <span>Fetch timeout</span>
          <input
            data-testid="web-timeout"
            className="web-timeout-input"
            type="number"
            inputMode="numeric"
            min={1}
            max={MAX_TIMEOUT}
            step={1}
            aria-invalid={error?.field === "timeout"}
            aria-describedby="web-timeout-hint"
            value={form.timeout}
            onChange={(e) => edit({ timeout: e.target.value })}
          />
          <span>seconds</span>
        </label>
        <div className="small muted" id="web-timeout-hint">
          How long reading one page may take, redirects included: 1 to {MAX_TIMEOUT} seconds.
        </div>
        <div className="row">
          <button type="submit" className="btn" data-testid="web-save" disabled={busy}>
            {busy ? "Saving…" : "Save"}
          </button>
          {done && (
            <span className="small ok-text" role="status" data-testid="web-saved">
              Saved.
            </span>
          )}
        </div>
      </form>
      {error && (
        <div className="error-text small" role="alert" data-testid="web-error">
          {error.text}
        </div>
      )}
      {needsKey(form.search) && <SearchKey stored={web.key_stored} search={form.search} onStored={reload} />}
    </>
  );
}

/** Brave's or Tavily's key: whether it is stored, and storing it (`set_secret WEB_SEARCH_KEY`). */
function SearchKey({ stored, search, onStored }: { stored: boolean; search: string; onStored: () => void }) {
  const t = useTransport();
  const [key, setKey] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const store = async () => {
    if (busy || key === "") return;
    setBusy(true);
    setError(null);
    try {
      await t.call({ cmd: "set_secret", name: WEB_SEARCH_KEY, value: key });
      setKey("");
      // The settings say, again, whether the key is stored and the search ready.
      onStored();
    } catch (e) {
      setError(errorText(e));
    } finally {
      setBusy(false);
    }
  };
  const name = search === "brave" ? "Brave Search" : "Tavily";
  return (
    <>
      <form
        className="row wrap web-key-form"
        aria-label="Web search key"
        onSubmit={(e) => {
          e.preventDefault();
          void store();
        }}
      >
        <span className="small" data-testid="web-key-stored" data-stored={stored ? "1" : "0"}>
          {stored ? (
            <>
              A key is stored (<code>{WEB_SEARCH_KEY}</code>).
            </>
          ) : (
            <>
              No key stored: {name} needs one (<code>{WEB_SEARCH_KEY}</code>).
            </>
          )}
        </span>
        <input
          data-testid="web-key"
          type="password"
          aria-label={`${name} API key`}
          placeholder={stored ? "a new key replaces it" : "API key"}
          autoComplete="new-password"
          value={key}
          onChange={(e) => setKey(e.target.value)}
        />
        <button type="submit" className="btn" data-testid="web-key-save" disabled={busy || key === ""}>
          {busy ? "Storing…" : stored ? "Replace key" : "Store key"}
        </button>
      </form>
      {error && (
        <div className="error-text small" role="alert" data-testid="web-key-error">
          {error}
        </div>
      )}
    </>
  );
}
