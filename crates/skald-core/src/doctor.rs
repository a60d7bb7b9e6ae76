//! `skald doctor`: which parts Skald relies on are present, and what to do when one is not.
//! Optional parts that are missing are reported, not treated as failures; only a broken
//! store or config is an error.

use crate::config::Config;
use crate::paths::DataDir;
use serde::Serialize;
use skald_store::Store;
use std::time::Duration;

/// How long one probe of an external program may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckStatus {
    Ok,
    /// An optional part is absent; the features that need it say so when used.
    Missing,
    /// Something is wrong and Skald cannot work properly until it is fixed.
    Error,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    pub name: &'static str,
    pub status: CheckStatus,
    pub detail: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

impl Check {
    fn ok(name: &'static str, detail: impl Into<String>) -> Check {
        Check {
            name,
            status: CheckStatus::Ok,
            detail: detail.into(),
            hint: None,
        }
    }

    fn missing(name: &'static str, detail: impl Into<String>, hint: impl Into<String>) -> Check {
        Check {
            name,
            status: CheckStatus::Missing,
            detail: detail.into(),
            hint: Some(hint.into()),
        }
    }

    fn error(name: &'static str, detail: impl Into<String>, hint: impl Into<String>) -> Check {
        Check {
            name,
            status: CheckStatus::Error,
            detail: detail.into(),
            hint: Some(hint.into()),
        }
    }
}

/// Runs every check.
pub async fn run(data_dir: &DataDir) -> Vec<Check> {
    vec![
        check_data_dir(data_dir),
        check_config(data_dir),
        check_store(data_dir).await,
        check_webkit().await,
        check_node().await,
        check_tex_bundle(data_dir),
        check_sandbox(
            Config::load(&data_dir.config_path())
                .map(|c| c.sandbox)
                .unwrap_or_default(),
        ),
        check_model(
            Config::load(&data_dir.config_path())
                .ok()
                .and_then(|c| c.models.default),
            &crate::models::local_models(&data_dir.models_dir()),
        ),
        check_mcp_logins(data_dir).await,
        check_web_search(data_dir).await,
        check_language_servers(
            &Config::load(&data_dir.config_path())
                .map(|c| c.lsp)
                .unwrap_or_default(),
        ),
    ]
}

/// Which languages have a language server here, and the command Skald would start.
pub fn language_servers(
    lsp: &crate::config::LspConfig,
) -> Vec<skald_api::protocol::LanguageServerInfo> {
    let path = std::env::var_os("PATH");
    skald_lsp::LANGUAGES
        .iter()
        .map(|l| skald_api::protocol::LanguageServerInfo {
            language: l.name.to_string(),
            command: skald_lsp::languages::find_server(
                l,
                lsp.commands.get(l.name).map(Vec::as_slice),
                path.as_deref(),
            )
            .map(|argv| argv.join(" ")),
            install: l.install.to_string(),
        })
        .collect()
}

/// The language servers found, for doctor.
fn check_language_servers(lsp: &crate::config::LspConfig) -> Check {
    const NAME: &str = "language servers";
    if !lsp.enabled {
        return Check::ok(NAME, "turned off ([lsp] enabled = false)");
    }
    let all = language_servers(lsp);
    let found: Vec<String> = all
        .iter()
        .filter_map(|s| {
            let program = s.command.as_deref()?.split_whitespace().next()?;
            let name = std::path::Path::new(program)
                .file_name()
                .map_or(program.to_string(), |n| n.to_string_lossy().into_owned());
            Some(format!("{} ({name})", s.language))
        })
        .collect();
    let missing: Vec<String> = all
        .iter()
        .filter(|s| s.command.is_none())
        .map(|s| format!("{}: {}", s.language, s.install))
        .collect();
    match (found.is_empty(), missing.is_empty()) {
        (_, true) => Check::ok(NAME, found.join(", ")),
        (true, false) => Check::missing(NAME, "none found on PATH", missing.join("; ")),
        (false, false) => Check::ok(
            NAME,
            format!(
                "{}; none for {}",
                found.join(", "),
                all.iter()
                    .filter(|s| s.command.is_none())
                    .map(|s| s.language.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ),
    }
}

/// How web_search searches, read from config.toml and whether the key is stored.
async fn check_web_search(data_dir: &DataDir) -> Check {
    let web = Config::load(&data_dir.config_path())
        .map(|c| c.web)
        .unwrap_or_default();
    let root = data_dir.root().to_path_buf();
    let key_stored = tokio::task::spawn_blocking(move || {
        skald_secrets::Secrets::open(&root)
            .ok()
            .and_then(|s| s.get(crate::config::WEB_SEARCH_KEY).ok().flatten())
            .is_some()
    })
    .await
    .unwrap_or(false);
    web_search_status(&web, key_stored)
}

/// Whether web search is set up and how (docs/web.md, "Search"): doctor's line and
/// Settings' words.
pub fn web_search_status(web: &crate::config::WebConfig, key_stored: bool) -> Check {
    const NAME: &str = "web search";
    let provider = "chats on Anthropic use Anthropic's own search";
    match web.search_api() {
        Err(e) => Check::error(NAME, e, "fix [web] in config.toml (docs/web.md)"),
        Ok(None) if web.search.trim() == "provider" => Check::ok(
            NAME,
            format!("{provider}; on other providers there is none (set a search API for them)"),
        ),
        Ok(None) => Check::missing(
            NAME,
            "off",
            skald_tools::web_search::HOW_TO_SET_UP.trim_start_matches("web search is not set up. "),
        ),
        Ok(Some((backend, _))) if backend.needs_key() && !key_stored => Check::missing(
            NAME,
            format!("{} is set but its key is not stored", backend.name()),
            format!("skald secrets set {}", crate::config::WEB_SEARCH_KEY),
        ),
        Ok(Some((backend, endpoint))) => Check::ok(
            NAME,
            format!(
                "{} at {endpoint}{}",
                backend.name(),
                if web.provider_search {
                    format!("; {provider}")
                } else {
                    String::new()
                }
            ),
        ),
    }
}

/// The OAuth logins of the registered HTTP servers, read from the secrets store without
/// connecting: which are signed in, and which wait for `skald mcp login`.
async fn check_mcp_logins(data_dir: &DataDir) -> Check {
    const NAME: &str = "MCP logins";
    let path = data_dir.db_path();
    let records = tokio::task::spawn_blocking(move || Store::open(&path)?.list_mcp_servers())
        .await
        .ok()
        .and_then(Result::ok)
        .unwrap_or_default();
    let http: Vec<_> = records
        .into_iter()
        .filter(|r| r.enabled && r.transport == "http" && r.api_key.is_none())
        .collect();
    if http.is_empty() {
        return Check::ok(NAME, "no HTTP server that logs in is registered");
    }
    let root = data_dir.root().to_path_buf();
    let secrets =
        match tokio::task::spawn_blocking(move || skald_secrets::Secrets::open(&root)).await {
            Ok(Ok(s)) => std::sync::Arc::new(s),
            Ok(Err(e)) => {
                return Check::missing(
                    NAME,
                    format!("the secrets store cannot be read: {e}"),
                    "see the secrets check; logins are kept there",
                );
            }
            Err(e) => return Check::error(NAME, e.to_string(), "report this as a bug"),
        };
    let mut lines = Vec::new();
    let mut waiting = Vec::new();
    for rec in &http {
        let spec = crate::mcp::spec_for(
            rec,
            PROBE_TIMEOUT,
            PROBE_TIMEOUT,
            None,
            Some(&secrets),
            &crate::mcp::Logins::default(),
            &Default::default(),
        );
        let state = match spec {
            Ok(spec) => skald_mcp::login_state(&spec).await,
            Err(e) => Err(e),
        };
        lines.push(match state {
            Ok(Some(skald_mcp::LoginState::SignedIn { .. })) => format!("{} signed in", rec.name),
            Ok(Some(skald_mcp::LoginState::Needs(status))) => {
                waiting.push(rec.name.clone());
                format!("{} {}", rec.name, status.describe())
            }
            Ok(Some(skald_mcp::LoginState::NotSignedIn) | None) => {
                format!("{} not signed in (it may need no login)", rec.name)
            }
            Err(e) => format!("{} cannot be read ({e})", rec.name),
        });
    }
    let detail = lines.join("; ");
    match waiting.first() {
        None => Check::ok(NAME, detail),
        Some(first) => Check::missing(
            NAME,
            detail,
            format!("skald mcp login {first} (or Sign in in Settings → MCP servers)"),
        ),
    }
}

/// Whether agents' commands can run in the sandbox here (docs/sandbox.md), and in which
/// mode they do.
fn check_sandbox(config: crate::config::SandboxConfig) -> Check {
    let settings = config.settings();
    match (skald_sandbox::probe(), settings.mode) {
        (skald_sandbox::Availability::Ready { detail, .. }, mode) => Check::ok(
            "command sandbox",
            format!(
                "{mode}, network {} ({detail}){}",
                if settings.network { "on" } else { "off" },
                if mode == skald_api::SandboxMode::Off {
                    "; it is turned off in config.toml, so every command asks"
                } else {
                    ""
                }
            ),
        ),
        (skald_sandbox::Availability::Unavailable { why }, skald_api::SandboxMode::Off) => {
            Check::ok(
                "command sandbox",
                format!("off (and not available here: {why})"),
            )
        }
        (skald_sandbox::Availability::Unavailable { why }, mode) => Check::missing(
            "command sandbox",
            format!("{mode} is set but not available: {why}; every command asks for approval"),
            "on Linux: a kernel with Landlock (5.13+) and unprivileged user namespaces, and \
             skald-sandbox installed next to skald",
        ),
    }
}

fn check_data_dir(data_dir: &DataDir) -> Check {
    match data_dir.ensure() {
        Ok(()) => Check::ok("data directory", data_dir.root().display().to_string()),
        Err(e) => Check::error(
            "data directory",
            e.to_string(),
            "pass --data-dir or set SKALD_DATA_DIR to a writable folder",
        ),
    }
}

fn check_config(data_dir: &DataDir) -> Check {
    let path = data_dir.config_path();
    match Config::load_or_create(&path) {
        Ok(_) => Check::ok("config", path.display().to_string()),
        Err(e) => Check::error("config", e.to_string(), "fix or delete the file"),
    }
}

async fn check_store(data_dir: &DataDir) -> Check {
    let path = data_dir.db_path();
    let opened = tokio::task::spawn_blocking(move || {
        let store = Store::open(&path)?;
        store.integrity_check()?;
        store.schema_version()
    })
    .await;
    match opened {
        Ok(Ok(version)) => Check::ok(
            "database",
            format!(
                "{} (schema v{version}, integrity ok)",
                data_dir.db_path().display()
            ),
        ),
        Ok(Err(e)) => Check::error(
            "database",
            e.to_string(),
            "restore the file from a backup or move it aside to start fresh",
        ),
        Err(e) => Check::error("database", e.to_string(), "report this as a bug"),
    }
}

/// Runs `program args…` and returns its standard output, or why it could not.
async fn probe(program: &str, args: &[&str]) -> Result<String, String> {
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(args)
        .kill_on_drop(true)
        .stdin(std::process::Stdio::null());
    match tokio::time::timeout(PROBE_TIMEOUT, cmd.output()).await {
        Err(_) => Err(format!(
            "`{program}` did not answer within {PROBE_TIMEOUT:?}"
        )),
        Ok(Err(e)) => Err(format!("`{program}`: {e}")),
        Ok(Ok(out)) if out.status.success() => {
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        }
        Ok(Ok(out)) => Err(format!("`{program}` exited with {}", out.status)),
    }
}

async fn check_webkit() -> Check {
    const NAME: &str = "webview (desktop app)";
    if !cfg!(target_os = "linux") {
        return Check::ok(NAME, "provided by the operating system");
    }
    match probe("ldconfig", &["-p"]).await {
        Err(e) => Check::missing(NAME, e, "cannot tell whether WebKitGTK is installed"),
        Ok(libs) if libs.contains("libwebkit2gtk-4.1.so") => Check::ok(NAME, "WebKitGTK 4.1 found"),
        Ok(_) => Check::missing(
            NAME,
            "WebKitGTK 4.1 not found",
            "the desktop app needs it: apt install libwebkit2gtk-4.1-0 \
             (the command line works without it)",
        ),
    }
}

async fn check_node() -> Check {
    const NAME: &str = "node (MCP servers)";
    match probe("node", &["--version"]).await {
        Ok(version) => Check::ok(NAME, format!("node {}", version.trim())),
        Err(e) => Check::missing(
            NAME,
            e,
            "MCP servers started with npx need Node.js: apt install nodejs npm",
        ),
    }
}

/// Which TeX bundle LaTeX previews use, in the order compiles choose it (docs/viewer.md,
/// "Bundles"), as doctor and the Settings page say it.
pub fn tex_status(data_dir: &DataDir) -> skald_api::protocol::TexStatus {
    let system_tex =
        skald_base::tex::system_tex(skald_base::tex::SYSTEM_TREES).map(|t| t.display().to_string());
    let (bundle, offline) = match skald_base::tex::named_bundle() {
        Some(named) if named.is_file() => (format!("{} (SKALD_TEX_BUNDLE)", named.display()), true),
        Some(named) => (
            format!(
                "SKALD_TEX_BUNDLE names {}, which is not a file",
                named.display()
            ),
            false,
        ),
        None if data_dir.tex_bundle_path().is_file() => (
            format!("offline bundle at {}", data_dir.tex_bundle_path().display()),
            true,
        ),
        None => match skald_base::tex::online_cache() {
            Some(cache) => (
                format!(
                    "tectonic's online bundle, cached in {} (offline, what was fetched keeps \
                     working)",
                    cache.display()
                ),
                false,
            ),
            None => (
                "tectonic's online bundle, fetched and cached on the first build, which needs \
                 the network"
                    .to_string(),
                false,
            ),
        },
    };
    skald_api::protocol::TexStatus {
        bundle,
        offline,
        system_tex,
    }
}

fn check_tex_bundle(data_dir: &DataDir) -> Check {
    const NAME: &str = "TeX bundle (LaTeX preview)";
    let status = tex_status(data_dir);
    if skald_base::tex::named_bundle().is_some() && !status.offline {
        return Check::error(NAME, status.bundle, "unset it, or point it at a zip bundle");
    }
    if status.offline {
        return Check::ok(NAME, status.bundle);
    }
    let hint = match &status.system_tex {
        Some(tree) => format!(
            "to work offline, run `skald latex bundle --from-system` (TeX Live found in {tree})"
        ),
        None => "to work offline, apt install texlive-latex-base texlive-xetex lmodern, then \
                 run `skald latex bundle --from-system`"
            .to_string(),
    };
    match skald_base::tex::online_cache() {
        Some(_) => Check::ok(NAME, format!("{}; {hint}", status.bundle)),
        None => Check::missing(NAME, status.bundle, hint),
    }
}

/// Provider environment variables that configure a model. Only their presence is read:
/// a key's value is never printed or logged.
const MODEL_ENV: &[&str] = &[
    "SKALD_MODEL",
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "OLLAMA_HOST",
];

fn check_model(config_default: Option<String>, local: &[String]) -> Check {
    const NAME: &str = "model";
    let set: Vec<&str> = MODEL_ENV
        .iter()
        .copied()
        .filter(|k| std::env::var_os(k).is_some_and(|v| !v.is_empty()))
        .collect();
    if let Some(model) = config_default.filter(|_| set.is_empty()) {
        return Check::ok(NAME, format!("config.toml models.default = {model}"));
    }
    if set.is_empty() {
        match local.first() {
            Some(name) if skald_llm::local::AVAILABLE => Check::ok(
                NAME,
                format!("no provider configured; the local model local/{name} is used"),
            ),
            _ => Check::missing(
                NAME,
                "no model provider configured",
                "set OPENAI_API_KEY (+ OPENAI_BASE_URL), ANTHROPIC_API_KEY or OLLAMA_HOST, \
                 or get a local model: skald models pull smollm2-135m",
            ),
        }
    } else {
        Check::ok(NAME, format!("from the environment: {}", set.join(", ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_fresh_data_dir_passes_its_own_checks() {
        let tmp = tempfile::tempdir().unwrap();
        let dd = DataDir::at(tmp.path().join("data"));
        let checks = run(&dd).await;
        for name in ["data directory", "config", "database"] {
            let c = checks.iter().find(|c| c.name == name).unwrap();
            assert_eq!(c.status, CheckStatus::Ok, "{c:?}");
        }
        assert!(dd.db_path().is_file());
        assert!(dd.config_path().is_file());
    }

    #[tokio::test]
    async fn a_broken_config_is_an_error_with_the_reason() {
        let tmp = tempfile::tempdir().unwrap();
        let dd = DataDir::at(tmp.path());
        std::fs::write(dd.config_path(), "[log\n").unwrap();
        let c = check_config(&dd);
        assert_eq!(c.status, CheckStatus::Error);
        assert!(c.detail.contains("config.toml"), "{}", c.detail);
    }

    #[tokio::test]
    async fn a_missing_program_is_reported_not_fatal() {
        let err = probe("skald-no-such-program", &[]).await.unwrap_err();
        assert!(err.contains("skald-no-such-program"));
    }
}
