//! `skald mcp`: register, list, check, log in to, turn on and off, and remove MCP servers.
//! `add`, `list` and `tools` connect to the servers to show how they really are; `login`
//! signs in to an HTTP server with OAuth in the browser.

use clap::Subcommand;
use skald_api::{escape_controls, escape_controls_inline};

use crate::exit;
use crate::fail::{Fail, finish};
use skald_core::mcp::{self, Status};
use skald_core::withheld::Withheld;
use skald_core::{Config, DataDir};
use skald_store::{McpServerRecord, Store, StoreError};
use std::time::Duration;

fn open(data_dir: &DataDir) -> Result<Store, Fail> {
    Store::open(data_dir.db_path()).map_err(Fail::failed)
}

/// A server the user named that is not registered is bad usage; the rest failed.
fn store_fail(e: StoreError) -> Fail {
    match e {
        StoreError::NotFound { .. } => Fail::usage(e),
        _ => Fail::failed(e),
    }
}

/// The user's secrets, for servers that refer to them (`${secret:NAME}`) and OAuth logins.
fn secrets(data_dir: &DataDir) -> Option<std::sync::Arc<skald_secrets::Secrets>> {
    match skald_secrets::Secrets::open(data_dir.root()) {
        Ok(s) => Some(std::sync::Arc::new(s)),
        Err(e) => {
            eprintln!("skald mcp: secrets are not available: {e}");
            None
        }
    }
}

fn connect_timeout(config: &Config) -> Duration {
    Duration::from_secs(config.mcp.connect_timeout_secs)
}

fn describe(rec: &McpServerRecord) -> String {
    match rec.transport.as_str() {
        "http" => rec.url.clone().unwrap_or_default(),
        _ => std::iter::once(rec.command.clone().unwrap_or_default())
            .chain(rec.args.iter().cloned())
            .collect::<Vec<_>>()
            .join(" "),
    }
}

pub struct AddArgs<'a> {
    pub name: &'a str,
    pub url: Option<&'a str>,
    pub token_env: Option<&'a str>,
    pub env: &'a [String],
    pub description: Option<&'a str>,
    pub friendly_name: Option<&'a str>,
    pub command: &'a [String],
    /// Register only, without starting it to check.
    pub no_check: bool,
    /// Run it in the command sandbox, with the network or not.
    pub sandbox: bool,
    pub network: bool,
}

pub async fn add(data_dir: &DataDir, config: &Config, a: AddArgs<'_>) -> Result<u8, Fail> {
    let store = open(data_dir)?;
    let mut env = serde_json::Map::new();
    for pair in a.env {
        let Some((k, v)) = pair.split_once('=') else {
            return Err(Fail::usage(format!("--env takes KEY=VALUE, not `{pair}`")));
        };
        env.insert(k.to_string(), serde_json::Value::from(v));
    }
    let (command, args) = match a.command.split_first() {
        Some((c, rest)) => (Some(c.clone()), rest.to_vec()),
        None => (None, Vec::new()),
    };
    if command.is_some() == a.url.is_some() {
        return Err(Fail::usage(
            "give either --url URL or the command after `--`",
        ));
    }
    let spec = serde_json::json!({
        "name": a.name,
        "command": command,
        "args": args,
        "env": env,
        "url": a.url,
        "api_key": a.token_env.map(|v| format!("${{env:{v}}}")),
        "description": a.description,
        "friendly_name": a.friendly_name,
    });
    let mut rec = mcp::record_from_args(&spec).map_err(Fail::usage)?;
    if a.sandbox && rec.transport != "stdio" {
        return Err(Fail::usage(
            "--sandbox is for stdio servers (a command after `--`); an http server runs elsewhere",
        ));
    }
    rec.sandbox = a.sandbox;
    rec.sandbox_network = a.network;
    let rec = store.upsert_mcp_server(&rec).map_err(Fail::failed)?;
    println!(
        "registered `{}`: {}{}",
        rec.name,
        describe(&rec),
        match (rec.sandbox, rec.sandbox_network) {
            (false, _) => "",
            (true, false) => " (sandboxed, no network)",
            (true, true) => " (sandboxed, with network)",
        }
    );
    if a.no_check {
        return Ok(exit::OK);
    }
    let (status, tools) = probe_one(data_dir, config, &rec).await;
    report(&rec.name, &status, tools.len());
    Ok(exit::OK)
}

/// Connects once to one registered server: its status and tools.
async fn probe_one(
    data_dir: &DataDir,
    config: &Config,
    rec: &McpServerRecord,
) -> (Status, Vec<mcp::McpTool>) {
    mcp::probe(
        rec,
        connect_timeout(config),
        Some(&data_dir.logs_dir()),
        secrets(data_dir).as_ref(),
        &Withheld::for_data_dir(data_dir, config),
    )
    .await
}

fn report(name: &str, status: &Status, tools: usize) {
    match status {
        Status::Ready { .. } => println!("`{name}` is ready with {tools} tools"),
        // The error and the output are the server's words: no terminal controls.
        Status::Failed { error, log_tail } => {
            println!("`{name}` failed: {}", escape_controls(error));
            if !log_tail.is_empty() {
                println!("its last output:");
                for line in log_tail.lines() {
                    println!("  {}", escape_controls_inline(line));
                }
            }
        }
        other => println!("`{name}`: {}", escape_controls(&other.describe())),
    }
}

/// Connects once to each of `records`, all at once: the slowest server bounds the wait,
/// not their sum. Each one's status and tools, in order.
pub async fn probe_all(
    data_dir: &DataDir,
    config: &Config,
    records: &[McpServerRecord],
) -> Vec<(Status, Vec<mcp::McpTool>)> {
    let logs = data_dir.logs_dir();
    let secrets = secrets(data_dir);
    let withheld = Withheld::for_data_dir(data_dir, config);
    futures::future::join_all(records.iter().map(|r| {
        mcp::probe(
            r,
            connect_timeout(config),
            Some(&logs),
            secrets.as_ref(),
            &withheld,
        )
    }))
    .await
}

pub async fn list(data_dir: &DataDir, config: &Config, json: bool) -> Result<u8, Fail> {
    let store = open(data_dir)?;
    let records = store.list_mcp_servers().map_err(Fail::failed)?;
    let probes = probe_all(data_dir, config, &records).await;
    if json {
        let out: Vec<serde_json::Value> = records
            .iter()
            .zip(&probes)
            .map(|(r, (status, tools))| {
                let mut v = serde_json::to_value(r).unwrap_or_default();
                v["status"] = serde_json::to_value(status).unwrap_or_default();
                v["tools"] = serde_json::json!(tools.len());
                v
            })
            .collect();
        println!("{}", serde_json::Value::Array(out));
        return Ok(exit::OK);
    }
    if records.is_empty() {
        println!(
            "No MCP servers. Add one with `skald mcp add NAME -- COMMAND ARGS...` or `skald mcp add NAME --url URL`."
        );
    }
    for (r, (status, _)) in records.iter().zip(&probes) {
        println!(
            "{:<20} {:<5} {:<40} {}",
            r.name,
            r.transport,
            escape_controls_inline(&status.describe()),
            escape_controls_inline(&describe(r))
        );
        if let Status::Failed { log_tail, .. } = status
            && let Some(last) = log_tail.lines().last()
        {
            println!("{:<20} last output: {}", "", escape_controls_inline(last));
        }
    }
    Ok(exit::OK)
}

pub async fn tools(
    data_dir: &DataDir,
    config: &Config,
    name: &str,
    json: bool,
) -> Result<u8, Fail> {
    let store = open(data_dir)?;
    let rec = store.get_mcp_server(name).map_err(store_fail)?;
    let (status, tools) = probe_one(data_dir, config, &rec).await;
    // The status report (on stdout) says why; there is no error to print.
    if !matches!(status, Status::Ready { .. }) {
        report(name, &status, 0);
        return Ok(exit::FAILED);
    }
    if json {
        println!("{}", serde_json::to_value(&tools).unwrap_or_default());
        return Ok(exit::OK);
    }
    for t in tools {
        // The names and descriptions are the server's.
        println!(
            "{}  {}",
            escape_controls_inline(&mcp::tool_name(name, &t.name)),
            escape_controls_inline(t.description.lines().next().unwrap_or(""))
        );
    }
    Ok(exit::OK)
}

pub fn rm(data_dir: &DataDir, name: &str) -> Result<u8, Fail> {
    let store = open(data_dir)?;
    store.delete_mcp_server(name).map_err(store_fail)?;
    // Its OAuth login goes with it: a later server of the same name starts signed out.
    if let Some(s) = secrets(data_dir)
        && let Err(e) = s.delete(&mcp::login_secret(name))
    {
        eprintln!("skald mcp: the login of `{name}` could not be removed: {e}");
    }
    println!("removed `{name}`");
    Ok(exit::OK)
}

/// The client view of a registered HTTP server, for logging in or out.
fn http_spec(data_dir: &DataDir, config: &Config, name: &str) -> Result<mcp::ServerSpec, Fail> {
    let store = open(data_dir)?;
    let rec = store.get_mcp_server(name).map_err(store_fail)?;
    if rec.transport != "http" {
        return Err(Fail::usage(format!(
            "`{name}` is a stdio server: only HTTP servers log in (OAuth)"
        )));
    }
    if rec.api_key.is_some() {
        return Err(Fail::usage(format!(
            "`{name}` is registered with a bearer token; it does not log in with OAuth (re-register it without --token-env to use OAuth)"
        )));
    }
    let secrets = secrets(data_dir).ok_or_else(|| {
        Fail::failed("the secrets store is not available, and a login is kept there")
    })?;
    mcp::spec_for(
        &rec,
        connect_timeout(config),
        connect_timeout(config),
        Some(&data_dir.logs_dir()),
        Some(&secrets),
        &mcp::Logins {
            client_metadata_url: config.mcp.client_metadata_url.clone(),
            redactor: None,
        },
        &Withheld::for_data_dir(data_dir, config),
    )
    .map_err(Fail::failed)
}

pub struct LoginArgs<'a> {
    pub name: &'a str,
    pub client_id: Option<&'a str>,
    pub client_secret_env: Option<&'a str>,
    pub private_key_file: Option<&'a std::path::Path>,
    pub signing_algorithm: Option<&'a str>,
    pub idp: Option<&'a str>,
    pub idp_client_id: Option<&'a str>,
    pub idp_client_secret_env: Option<&'a str>,
    pub id_token_env: Option<&'a str>,
    pub no_browser: bool,
}

/// The value of the environment variable `var`, which the user named for a secret.
fn from_env(var: &str) -> Result<String, Fail> {
    std::env::var(var)
        .map_err(|_| Fail::usage(format!("the environment variable {var} is not set")))
}

pub async fn login(data_dir: &DataDir, config: &Config, a: LoginArgs<'_>) -> Result<u8, Fail> {
    let name = a.name;
    let spec = http_spec(data_dir, config, name)?;
    let client = match a.client_id {
        None => None,
        Some(id) => {
            let secret = a.client_secret_env.map(from_env).transpose()?;
            let key = match a.private_key_file {
                None => None,
                Some(path) => Some(std::fs::read_to_string(path).map_err(|e| {
                    Fail::usage(format!(
                        "cannot read the private key {}: {e}",
                        path.display()
                    ))
                })?),
            };
            Some(mcp::ClientIdentity {
                client_id: id.to_string(),
                client_secret: secret,
                private_key_pem: key,
                signing_algorithm: a.signing_algorithm.map(str::to_string),
                identity_provider: match (a.idp, a.idp_client_id, a.id_token_env) {
                    (Some(issuer), Some(idp_client), Some(token)) => Some(mcp::IdentityProvider {
                        issuer: issuer.to_string(),
                        client_id: idp_client.to_string(),
                        client_secret: a.idp_client_secret_env.map(from_env).transpose()?,
                        id_token: from_env(token)?,
                    }),
                    (None, _, _) => None,
                    _ => {
                        return Err(Fail::usage(
                            "--idp needs --idp-client-id and --id-token-env".to_string(),
                        ));
                    }
                },
            })
        }
    };
    let no_browser = a.no_browser;
    let show = move |url: &str| {
        // The address comes from the server's authorization metadata.
        eprintln!(
            "Sign in to `{name}` in your browser. If it does not open, visit:\n  {}",
            escape_controls_inline(url)
        );
        if !no_browser {
            mcp::open_in_browser(url);
        }
    };
    let done = mcp::login(&spec, client, &show, mcp::LOGIN_WAIT)
        .await
        .map_err(|e| Fail::failed(format!("logging in to `{name}` failed: {e}")))?;
    println!(
        "signed in to `{name}` ({} client{})",
        done.client,
        if done.scopes.is_empty() {
            String::new()
        } else {
            format!("; access: {}", done.scopes.join(" "))
        }
    );
    let store = open(data_dir)?;
    let rec = store.get_mcp_server(name).map_err(store_fail)?;
    let (status, tools) = probe_one(data_dir, config, &rec).await;
    report(name, &status, tools.len());
    Ok(exit::OK)
}

pub async fn logout(data_dir: &DataDir, config: &Config, name: &str) -> Result<u8, Fail> {
    let spec = http_spec(data_dir, config, name)?;
    let had = mcp::logout(&spec).await.map_err(Fail::failed)?;
    if had {
        println!("signed out of `{name}`: its tokens and registration are forgotten");
    } else {
        println!("`{name}` had no login");
    }
    Ok(exit::OK)
}

pub fn enable(data_dir: &DataDir, name: &str, on: bool) -> Result<u8, Fail> {
    let store = open(data_dir)?;
    store.set_mcp_enabled(name, on).map_err(store_fail)?;
    println!("`{name}` is {}", if on { "on" } else { "off" });
    Ok(exit::OK)
}

#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// Register a server and check that it starts
    #[command(after_help = "Examples:\n  \
                      skald mcp add everything -- npx -y @modelcontextprotocol/server-everything\n  \
                      skald mcp add github --url https://api.githubcopilot.com/mcp/ --token-env GITHUB_TOKEN\n\n\
                      Agents see a server's tools after activate_tools {\"groups\": [\"NAME\"]}.")]
    Add {
        /// Short id: letters, digits, - and _ (tools are named mcp__NAME__TOOL)
        name: String,
        /// A streamable HTTP server's endpoint
        #[arg(long)]
        url: Option<String>,
        /// The environment variable holding its bearer token (the token itself is never stored)
        #[arg(long, value_name = "VAR")]
        token_env: Option<String>,
        /// Extra environment for a stdio server, KEY=VALUE (VALUE may be ${env:NAME}; repeatable)
        #[arg(long, value_name = "KEY=VALUE")]
        env: Vec<String>,
        /// What it is for, shown to agents
        #[arg(long)]
        description: Option<String>,
        /// A display name
        #[arg(long)]
        friendly_name: Option<String>,
        /// Register only; do not start the server to check it
        #[arg(long)]
        no_check: bool,
        /// Run the (stdio) server in the command sandbox: it writes only a temporary folder
        /// of its own, sees no secrets or keys, and has no network unless --network
        #[arg(long)]
        sandbox: bool,
        /// With --sandbox: the server may use the network
        #[arg(long, requires = "sandbox")]
        network: bool,
        /// A stdio server's command and arguments, after `--`
        #[arg(last = true, value_name = "COMMAND")]
        command: Vec<String>,
    },
    /// Every server with its status (each is started to check)
    List {
        #[arg(long)]
        json: bool,
    },
    /// A server's tools
    Tools {
        name: String,
        #[arg(long)]
        json: bool,
    },
    /// Sign in to an HTTP server with OAuth, in the browser
    #[command(
        after_help = "The server's authorization server is found from its answer \
                      (OAuth 2.1 with PKCE); Skald registers itself there unless a client ID is \
                      given. The tokens are kept in Skald's secrets and refreshed before they \
                      expire. Run it again when a server asks for more access."
    )]
    Login {
        name: String,
        /// A client registered with the authorization server by hand, for servers that
        /// take no registrations (redirect URI http://127.0.0.1, any port)
        #[arg(long)]
        client_id: Option<String>,
        /// The environment variable holding that client's secret
        #[arg(long, value_name = "VAR", requires = "client_id")]
        client_secret_env: Option<String>,
        /// That client's private key (PEM, RSA or EC), for the client credentials grant
        /// with a signed assertion (machine-to-machine; kept in Skald's secrets)
        #[arg(
            long,
            value_name = "PEM",
            requires = "client_id",
            conflicts_with = "client_secret_env"
        )]
        private_key_file: Option<std::path::PathBuf>,
        /// The key's algorithm: RS256 (default), RS384, RS512, ES256 or ES384
        #[arg(long, value_name = "ALG", requires = "private_key_file")]
        signing_algorithm: Option<String>,
        /// Sign in through this enterprise identity provider (its issuer URL) instead of
        /// at the server: the user's ID token from it is exchanged for the server's
        /// tokens (cross-app access); needs --client-id at the server
        #[arg(long, value_name = "ISSUER", requires_all = ["client_id", "idp_client_id", "id_token_env"])]
        idp: Option<String>,
        /// Skald's client ID at the identity provider
        #[arg(long, value_name = "ID", requires = "idp")]
        idp_client_id: Option<String>,
        /// The environment variable holding that client's secret, if it has one
        #[arg(long, value_name = "VAR", requires = "idp")]
        idp_client_secret_env: Option<String>,
        /// The environment variable holding the user's ID token from the identity provider
        #[arg(long, value_name = "VAR", requires = "idp")]
        id_token_env: Option<String>,
        /// Print the sign-in address instead of opening the browser
        #[arg(long)]
        no_browser: bool,
    },
    /// Forget an HTTP server's OAuth login
    Logout { name: String },
    /// Turn a server on
    Enable { name: String },
    /// Turn a server off
    Disable { name: String },
    /// Unregister a server
    Rm { name: String },
}

/// Runs one `mcp` subcommand; its exit code.
pub async fn dispatch(env: &crate::Env, command: McpCommand) -> u8 {
    let result = match command {
        McpCommand::Add {
            name,
            url,
            token_env,
            env: vars,
            description,
            friendly_name,
            command,
            no_check,
            sandbox,
            network,
        } => {
            add(
                &env.data_dir,
                &env.config,
                AddArgs {
                    name: &name,
                    url: url.as_deref(),
                    token_env: token_env.as_deref(),
                    env: &vars,
                    description: description.as_deref(),
                    friendly_name: friendly_name.as_deref(),
                    command: &command,
                    no_check,
                    sandbox,
                    network,
                },
            )
            .await
        }
        McpCommand::List { json } => list(&env.data_dir, &env.config, json).await,
        McpCommand::Tools { name, json } => tools(&env.data_dir, &env.config, &name, json).await,
        McpCommand::Login {
            name,
            client_id,
            client_secret_env,
            private_key_file,
            signing_algorithm,
            idp,
            idp_client_id,
            idp_client_secret_env,
            id_token_env,
            no_browser,
        } => {
            login(
                &env.data_dir,
                &env.config,
                LoginArgs {
                    name: &name,
                    client_id: client_id.as_deref(),
                    client_secret_env: client_secret_env.as_deref(),
                    private_key_file: private_key_file.as_deref(),
                    signing_algorithm: signing_algorithm.as_deref(),
                    idp: idp.as_deref(),
                    idp_client_id: idp_client_id.as_deref(),
                    idp_client_secret_env: idp_client_secret_env.as_deref(),
                    id_token_env: id_token_env.as_deref(),
                    no_browser,
                },
            )
            .await
        }
        McpCommand::Logout { name } => logout(&env.data_dir, &env.config, &name).await,
        McpCommand::Enable { name } => enable(&env.data_dir, &name, true),
        McpCommand::Disable { name } => enable(&env.data_dir, &name, false),
        McpCommand::Rm { name } => rm(&env.data_dir, &name),
    };
    finish("skald mcp", result)
}
