//! `skald`: the Skald engine without a window — list and run tools, check the install.
//! Everything here is a thin carrier over `skald-core`; no behaviour lives in the CLI.

mod cmd_cron;
mod cmd_doctor;
mod cmd_exec;
mod cmd_inbox;
mod cmd_latex;
mod cmd_mcp;
mod cmd_models;
mod cmd_plugins;
mod cmd_rules;
mod cmd_secrets;
mod cmd_serve;
mod cmd_sessions;
mod cmd_tasks;
mod cmd_tool;
mod cmd_tools;
mod cmd_view;
mod exit;
mod session_events;
mod shown;

use clap::{Parser, Subcommand};
use skald_core::{Config, DataDir};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Parser)]
#[command(
    name = "skald",
    version,
    about = "Skald: a local-first workbench for LLM agents (command line)",
    long_about = "Skald runs agents that read and edit your files, grep, outline code and run \
                  commands with your approval. This command line runs the same engine as the \
                  desktop app, headless."
)]
struct Cli {
    /// Where Skald keeps its database, config.toml and logs
    /// [default: the OS per-user data directory, e.g. ~/.local/share/skald]
    #[arg(long, global = true, env = "SKALD_DATA_DIR", value_name = "DIR")]
    data_dir: Option<PathBuf>,

    /// Also print log lines on stderr (-v info, -vv debug, -vvv trace)
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    verbose: u8,

    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// List every tool an agent can be offered
    Tools {
        /// Print a JSON array of {name, description, category, parameters, source}
        #[arg(long)]
        json: bool,
    },
    /// Run one tool directly, as an agent would
    #[command(
        after_help = "Exit codes: 0 completed, 1 the tool failed (message on stderr), \
                            2 bad usage, unknown tool or invalid arguments, 3 denied by a rule \
                            or needing approval without --approve, \
                            130 cancelled (Ctrl-C).\n\n\
                            Example: skald tool read_file --args '{\"path\": \"README.md\"}'"
    )]
    Tool {
        /// The tool's name (see `skald tools`)
        name: String,
        /// The arguments as a JSON object, or `-` to read them from stdin
        #[arg(long, default_value = "{}", value_name = "JSON")]
        args: String,
        /// The working directory relative paths resolve against [default: the current one]
        #[arg(long, value_name = "DIR")]
        cwd: Option<PathBuf>,
        /// Run it even if the approval rules say it needs approval (never overrides a deny)
        #[arg(long)]
        approve: bool,
    },
    /// Run one agent turn headless and print its answer (or, with --json, every event)
    #[command(
        after_help = "The model comes from --model or SKALD_MODEL (`provider/model` or a bare \
                            name) with OPENAI_API_KEY + OPENAI_BASE_URL, ANTHROPIC_API_KEY or \
                            OLLAMA_HOST.\n\nExit codes: 0 final answer, 1 failed or round limit \
                            reached, 2 bad usage or no model configured, 130 stopped (Ctrl-C)."
    )]
    Exec {
        /// Continue this session instead of starting a new one
        #[arg(long, value_name = "ID")]
        session: Option<i64>,
        /// The agent to run (see agents/) [default: main, or the session's agent]
        #[arg(long, value_name = "ID")]
        agent: Option<String>,
        /// The model, as `provider/model` or a bare name [default: SKALD_MODEL]
        #[arg(long, value_name = "MODEL")]
        model: Option<String>,
        /// The working directory the agent's tools act in [default: the current one]
        #[arg(long, value_name = "DIR")]
        cwd: Option<PathBuf>,
        /// What to do with tool calls that need approval (shell commands, writes)
        #[arg(long, value_enum, default_value = "never")]
        approve: Approve,
        /// Print every event as one JSON object a line
        #[arg(long)]
        json: bool,
        /// A new session's permission group (whose rules come before `default`'s)
        #[arg(long, value_name = "GROUP")]
        group: Option<String>,
        /// A folder a new session may read without asking (repeatable)
        #[arg(long, value_name = "DIR")]
        allow_read: Vec<PathBuf>,
        /// A folder a new session may write without asking (repeatable; a deny still wins)
        #[arg(long, value_name = "DIR")]
        allow_write: Vec<PathBuf>,
        /// Extra lines for the new session's system prompt
        #[arg(long, value_name = "TEXT")]
        extra_prompt: Option<String>,
        /// Most model rounds before the turn gives up [default: agent.max_rounds, 20]
        #[arg(long, value_name = "N")]
        max_rounds: Option<usize>,
        /// `required`: the first answer must be a tool call (small local models rarely
        /// call one on their own); later rounds are the model's choice
        #[arg(long, value_enum, default_value = "auto")]
        tool_choice: ToolChoiceArg,
        /// What to ask
        prompt: String,
    },
    /// What agents are waiting on you for, and your answers
    Inbox {
        #[command(subcommand)]
        command: InboxCommand,
    },
    /// List, add or remove approval rules
    Rules {
        #[command(subcommand)]
        command: RulesCommand,
    },
    /// Scheduled jobs: list, add, remove, enable, disable, their runs, and the scheduler
    Cron {
        #[command(subcommand)]
        command: CronCommand,
    },
    /// MCP servers: add, list (with their status), tools, enable, disable, rm
    Mcp {
        #[command(subcommand)]
        command: McpCommand,
    },
    /// Plugins Skald ships (image generation): list, configure, turn on or off
    Plugins {
        #[command(subcommand)]
        command: PluginsCommand,
    },
    /// Local models run in-process (GGUF files): list, add, pull, rm
    Models {
        #[command(subcommand)]
        command: ModelsCommand,
    },
    /// Secrets for MCP servers and plugins: set, list (names only), rm
    Secrets {
        #[command(subcommand)]
        command: SecretsCommand,
    },
    /// Background tasks started from chats
    Tasks {
        #[command(subcommand)]
        command: TasksCommand,
    },
    /// List or show stored sessions
    Sessions {
        #[command(subcommand)]
        command: SessionsCommand,
    },
    /// LaTeX to PDF in-process (tectonic), cached by its inputs
    Latex {
        #[command(subcommand)]
        command: LatexCommand,
    },
    /// What the file viewer makes of a file: its kind, and for Markdown the safe HTML
    View {
        path: PathBuf,
        /// Print the kind and the view as JSON
        #[arg(long)]
        json: bool,
    },
    /// Serve the UI to a browser on 127.0.0.1, protected by a token in the printed URL
    Serve {
        /// The port (0 picks a free one)
        #[arg(long, default_value_t = 7878)]
        port: u16,
        /// The folder new chats work in [default: the current directory]
        #[arg(long)]
        root: Option<PathBuf>,
        /// The built UI (ui/dist) [default: SKALD_UI_DIR, beside the binary, the source tree]
        #[arg(long)]
        ui_dir: Option<PathBuf>,
        /// The model, as `provider/model` or a bare name [default: SKALD_MODEL]
        #[arg(long)]
        model: Option<String>,
    },
    /// Print the version
    Version,
    /// Check which parts Skald relies on are present
    Doctor {
        /// Print the checks as JSON
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
enum CronCommand {
    /// Every job with its schedule, next run and last run
    List {
        #[arg(long)]
        json: bool,
    },
    /// Schedule a task agent
    #[command(
        after_help = "The expression has 5 fields (minute hour day month weekday) or 6 with \
                      seconds first, in --tz (default: the local zone).\n\nExamples:\n  \
                      skald cron add --agent researcher --cron \"0 9 * * MON-FRI\" --prompt \"Summarise yesterday's notes\"\n  \
                      skald cron add --agent software-engineer --cron \"0 */15 * * * *\" --tz UTC --missed skip --prompt \"Run the tests\""
    )]
    Add {
        /// The task agent that runs it
        #[arg(long)]
        agent: String,
        /// What the agent is asked at each run
        #[arg(long)]
        prompt: String,
        /// Cron expression (seconds optional)
        #[arg(long)]
        cron: String,
        /// A short name [default: the prompt's start]
        #[arg(long)]
        name: Option<String>,
        /// IANA time zone, e.g. Europe/Paris [default: local]
        #[arg(long)]
        tz: Option<String>,
        /// After a downtime: `once` runs one run for all missed occurrences, `skip` drops them
        #[arg(long, default_value = "once")]
        missed: String,
        /// The folder the agent works in [default: the current one]
        #[arg(long, value_name = "DIR")]
        cwd: Option<PathBuf>,
        /// The chat its notifications go to [default: the home chat]
        #[arg(long, value_name = "SESSION")]
        home: Option<i64>,
        #[arg(long)]
        json: bool,
    },
    /// Remove a job and its runs' records
    Rm { id: i64 },
    /// Turn a job on (from its next occurrence)
    Enable { id: i64 },
    /// Turn a job off
    Disable { id: i64 },
    /// A job's runs, newest first, with their results
    Runs {
        id: i64,
        #[arg(long)]
        json: bool,
    },
    /// Run the scheduler in the foreground until Ctrl-C
    #[command(
        after_help = "Several schedulers (processes) may share one data directory: each \
                      occurrence runs once. Runs stopped by Ctrl-C resume at the next start."
    )]
    Run {
        /// Run what is due now (missed and interrupted runs too), wait for it, and exit
        #[arg(long)]
        once: bool,
        /// The model [default: SKALD_MODEL]
        #[arg(long, value_name = "MODEL")]
        model: Option<String>,
        /// Calls needing approval: wait in the Inbox (default), or run them all
        #[arg(long, value_enum, default_value = "inbox")]
        approve: Approve,
        /// Print every event as one JSON object a line
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
enum McpCommand {
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
    /// Turn a server on
    Enable { name: String },
    /// Turn a server off
    Disable { name: String },
    /// Unregister a server
    Rm { name: String },
}

#[derive(Debug, Subcommand)]
enum LatexCommand {
    /// Build a .tex file to PDF (from the cache when none of its inputs changed)
    #[command(
        after_help = "The TeX support files come from --bundle (a zip bundle, also \
                      SKALD_TEX_BUNDLE) or tectonic's default online bundle, cached after its \
                      first use.\n\nExample: skald latex build paper.tex --watch"
    )]
    Build {
        path: PathBuf,
        /// A local zip bundle (offline)
        #[arg(long, value_name = "ZIP")]
        bundle: Option<PathBuf>,
        /// Rebuild on every change of any input of the last build, until Ctrl-C
        #[arg(long)]
        watch: bool,
        /// One JSON object per build
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
enum PluginsCommand {
    /// Every plugin, on or off, with its configuration
    List {
        #[arg(long)]
        json: bool,
    },
    /// Set a plugin's configuration (checked against its schema) and turn it on or off
    #[command(
        after_help = "Example:\n  printf %s \"$OPENAI_API_KEY\" | skald secrets set OPENAI_IMAGES\n  \
                      skald plugins configure image-generation --enable \\\n    \
                      --config '{\"api_key\": \"${secret:OPENAI_IMAGES}\", \"model\": \"gpt-image-1\"}'"
    )]
    Configure {
        id: String,
        /// The configuration, a JSON object (kept as it is when omitted)
        #[arg(long, value_name = "JSON")]
        config: Option<String>,
        #[arg(long, conflicts_with = "disable")]
        enable: bool,
        #[arg(long)]
        disable: bool,
    },
}

#[derive(Debug, Subcommand)]
enum SecretsCommand {
    /// Store a secret (the value is read from stdin unless --value is given)
    #[command(
        after_help = "Stored in the OS keyring, or an encrypted file in the data directory where \
                      there is none. Refer to it as ${secret:NAME} in an MCP server's env or \
                      token.\n\nExample: printf %s \"$TOKEN\" | skald secrets set GITHUB_TOKEN"
    )]
    Set {
        name: String,
        /// The value (visible in your shell history; stdin is safer)
        #[arg(long)]
        value: Option<String>,
    },
    /// Secret names (never values)
    List {
        /// A substring, or a `prefix*`
        pattern: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Remove a secret
    Rm { name: String },
}

#[derive(Debug, Subcommand)]
enum ModelsCommand {
    /// The local models here, and the recommended ones to pull
    List {
        #[arg(long)]
        json: bool,
    },
    /// Copy a GGUF file into the models folder
    Add {
        file: PathBuf,
        /// The name to use it by (`--model local/NAME`) [default: the file's name]
        #[arg(long)]
        name: Option<String>,
    },
    /// Download a recommended model (resumable, checksum verified)
    Pull { name: String },
    /// Remove a local model
    Rm { name: String },
}

#[derive(Debug, Subcommand)]
enum TasksCommand {
    /// Background tasks, newest first
    List {
        /// Only those started from this session
        #[arg(long, value_name = "ID")]
        session: Option<i64>,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
enum SessionsCommand {
    /// Every session, most recent first
    List {
        #[arg(long)]
        json: bool,
    },
    /// One session's messages and tool calls
    Show {
        id: i64,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
enum InboxCommand {
    /// Everything waiting, oldest first
    List {
        #[arg(long)]
        json: bool,
    },
    /// Answer an item: the waiting call goes on, in whichever Skald process waits for it
    #[command(after_help = "Examples:\n  skald inbox answer 7 approve\n  \
                            skald inbox answer 8 reject --note \"not on Fridays\"\n  \
                            skald inbox answer 9 --text \"Use the staging database\"")]
    Answer {
        id: i64,
        /// approve or reject (for an approval)
        #[arg(value_parser = ["approve", "reject"], required_unless_present = "text")]
        decision: Option<String>,
        /// The answer to a question
        #[arg(long, conflicts_with = "decision")]
        text: Option<String>,
        /// Why, for a rejection: the agent reads it
        #[arg(long)]
        note: Option<String>,
        /// With approve: also store the rule such calls would need, generalised (a
        /// command's leading words, a write's folder) and scoped to the session's folder
        #[arg(long)]
        always: bool,
    },
}

#[derive(Debug, Subcommand)]
enum RulesCommand {
    /// Every rule, by group, priority and id (the order the gate tries them in)
    List {
        #[arg(long)]
        json: bool,
    },
    /// Add a rule
    #[command(
        after_help = "Examples:\n  skald rules add --tool execute_cmd --command \"cargo test\" --action allow\n  \
                            skald rules add --tool @fs_write --path \"notes/*\" --action allow\n  \
                            skald rules add --tool execute_cmd --action deny --agent researcher"
    )]
    Add {
        /// Tool pattern: a name, `prefix*`, `*`, `@fs_read`, `@fs_write`, `@fs_any`, `mcp__server__*`
        #[arg(long)]
        tool: String,
        /// allow, require or deny
        #[arg(long)]
        action: String,
        /// A path, or `dir/*` for a subtree (relative to the session's working directory)
        #[arg(long)]
        path: Option<String>,
        /// For execute_cmd: the leading words every part of the command must start with
        #[arg(long)]
        command: Option<String>,
        /// Only for this agent
        #[arg(long)]
        agent: Option<String>,
        /// Only in this working directory and below
        #[arg(long)]
        working_dir: Option<String>,
        /// The permission group
        #[arg(long, default_value = "default")]
        group: String,
        /// Lower numbers are tried first. The default (15) comes before the seeded rules
        /// that ask (20) and the catch-all (1000), so an allow takes effect as written; a
        /// deny anywhere still wins over any allow
        #[arg(long, default_value_t = skald_core::approval::ALWAYS_PRIORITY)]
        priority: i64,
        /// Why the rule exists
        #[arg(long, default_value = "")]
        note: String,
    },
    /// Remove a rule
    Rm { id: i64 },
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum ToolChoiceArg {
    /// The model decides
    Auto,
    /// The first answer is a tool call
    Required,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum Approve {
    /// Reject them; the model is told and goes on
    Never,
    /// Run them
    All,
    /// Ask on the terminal for each one (as never when stdin is not a terminal)
    Ask,
    /// Wait in the Agent Inbox for each one; answer with `skald inbox answer`
    Inbox,
}

impl Approve {
    fn mode(self) -> skald_core::turn::ApprovalMode {
        use skald_core::turn::ApprovalMode;
        match self {
            Approve::Never => ApprovalMode::Never,
            Approve::All => ApprovalMode::All,
            Approve::Ask => ApprovalMode::Ask,
            Approve::Inbox => ApprovalMode::Inbox,
        }
    }
}

/// What every command needs: the data directory, its config, and logging.
pub struct Env {
    pub data_dir: DataDir,
    pub config: Config,
    _log: Option<skald_core::logging::LogGuard>,
}

impl Env {
    fn init(cli: &Cli) -> anyhow::Result<Env> {
        let data_dir = DataDir::resolve(cli.data_dir.as_deref())?;
        data_dir.ensure()?;
        let config = Config::load_or_create(&data_dir.config_path())?;
        let stderr_level = match cli.verbose {
            0 => None,
            1 => Some("info"),
            2 => Some("debug"),
            _ => Some("trace"),
        };
        let log = skald_core::logging::init(&data_dir.logs_dir(), &config.log, stderr_level)?;
        Ok(Env {
            data_dir,
            config,
            _log: Some(log),
        })
    }
}

fn main() -> ExitCode {
    // Commands the agents run must not read provider keys or the restart token out of
    // /proc/PID/environ or /proc/PID/mem.
    if let Err(e) = skald_core::process::keep_memory_private() {
        eprintln!("skald: {e}");
    }
    // Started as a LaTeX worker (by `LatexEngine`, with its environment variable): run
    // that one build and nothing else (a worker is kept private as well).
    if let Some(code) = skald_viewer::latex::worker::run_worker_if_asked() {
        return ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
    let cli = Cli::parse();
    if let Command::Version = cli.command {
        println!(
            "skald {} (database schema v{})",
            env!("CARGO_PKG_VERSION"),
            skald_store::LATEST_VERSION
        );
        return ExitCode::SUCCESS;
    }
    let env = match Env::init(&cli) {
        Ok(env) => env,
        Err(e) => {
            eprintln!("skald: {e:#}");
            return ExitCode::from(exit::FAILED);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("skald: cannot start the async runtime: {e}");
            return ExitCode::from(exit::FAILED);
        }
    };
    let mut relaunch = None;
    let code = runtime.block_on(async {
        match cli.command {
            Command::Tools { json } => cmd_tools::run(&env.data_dir, json),
            Command::Tool {
                name,
                args,
                cwd,
                approve,
            } => cmd_tool::run(&env.data_dir, &name, &args, cwd.as_deref(), approve).await,
            Command::Doctor { json } => cmd_doctor::run(&env, json).await,
            Command::Exec {
                session,
                agent,
                model,
                cwd,
                approve,
                json,
                group,
                allow_read,
                allow_write,
                extra_prompt,
                max_rounds,
                tool_choice,
                prompt,
            } => {
                let args = cmd_exec::ExecArgs {
                    session,
                    agent: agent.as_deref(),
                    model: model.as_deref(),
                    cwd: cwd.as_deref(),
                    approve: approve.mode(),
                    json,
                    max_rounds,
                    tool_choice: match tool_choice {
                        ToolChoiceArg::Auto => skald_llm::ToolChoice::Auto,
                        ToolChoiceArg::Required => skald_llm::ToolChoice::Required,
                    },
                    group: group.as_deref(),
                    allow_read: &allow_read,
                    allow_write: &allow_write,
                    extra_prompt: extra_prompt.as_deref(),
                    prompt: &prompt,
                };
                cmd_exec::run(&env.data_dir, &env.config, args).await
            }
            Command::Inbox { command } => match command {
                InboxCommand::List { json } => cmd_inbox::list(&env.data_dir, json),
                InboxCommand::Answer {
                    id,
                    decision,
                    text,
                    note,
                    always,
                } => match text {
                    Some(text) => cmd_inbox::answer_text(&env.data_dir, id, &text),
                    None => cmd_inbox::answer(
                        &env.data_dir,
                        id,
                        decision.as_deref() == Some("approve"),
                        note.as_deref(),
                        always,
                    ),
                },
            },
            Command::Rules { command } => match command {
                RulesCommand::List { json } => cmd_rules::list(&env.data_dir, json),
                RulesCommand::Add {
                    tool,
                    action,
                    path,
                    command,
                    agent,
                    working_dir,
                    group,
                    priority,
                    note,
                } => cmd_rules::add(
                    &env.data_dir,
                    cmd_rules::AddArgs {
                        group,
                        tool,
                        action,
                        path,
                        command,
                        agent,
                        working_dir,
                        priority,
                        note,
                    },
                ),
                RulesCommand::Rm { id } => cmd_rules::rm(&env.data_dir, id),
            },
            Command::Cron { command } => match command {
                CronCommand::List { json } => cmd_cron::list(&env.data_dir, json),
                CronCommand::Add {
                    agent,
                    prompt,
                    cron,
                    name,
                    tz,
                    missed,
                    cwd,
                    home,
                    json,
                } => cmd_cron::add(
                    &env.data_dir,
                    cmd_cron::AddArgs {
                        name: name.as_deref(),
                        agent: &agent,
                        prompt: &prompt,
                        cron: &cron,
                        tz: tz.as_deref(),
                        missed: &missed,
                        cwd: cwd.as_deref(),
                        home,
                        json,
                    },
                ),
                CronCommand::Rm { id } => cmd_cron::rm(&env.data_dir, id),
                CronCommand::Enable { id } => cmd_cron::enable(&env.data_dir, id, true),
                CronCommand::Disable { id } => cmd_cron::enable(&env.data_dir, id, false),
                CronCommand::Runs { id, json } => cmd_cron::runs(&env.data_dir, id, json),
                CronCommand::Run {
                    once,
                    model,
                    approve,
                    json,
                } => {
                    cmd_cron::run(
                        &env.data_dir,
                        &env.config,
                        model.as_deref(),
                        approve.mode(),
                        once,
                        json,
                    )
                    .await
                }
            },
            Command::Mcp { command } => match command {
                McpCommand::Add {
                    name,
                    url,
                    token_env,
                    env: vars,
                    description,
                    friendly_name,
                    command,
                    no_check,
                } => {
                    cmd_mcp::add(
                        &env.data_dir,
                        &env.config,
                        cmd_mcp::AddArgs {
                            name: &name,
                            url: url.as_deref(),
                            token_env: token_env.as_deref(),
                            env: &vars,
                            description: description.as_deref(),
                            friendly_name: friendly_name.as_deref(),
                            command: &command,
                            no_check,
                        },
                    )
                    .await
                }
                McpCommand::List { json } => cmd_mcp::list(&env.data_dir, &env.config, json).await,
                McpCommand::Tools { name, json } => {
                    cmd_mcp::tools(&env.data_dir, &env.config, &name, json).await
                }
                McpCommand::Enable { name } => cmd_mcp::enable(&env.data_dir, &name, true),
                McpCommand::Disable { name } => cmd_mcp::enable(&env.data_dir, &name, false),
                McpCommand::Rm { name } => cmd_mcp::rm(&env.data_dir, &name),
            },
            Command::Plugins { command } => match command {
                PluginsCommand::List { json } => cmd_plugins::list(&env.data_dir, json),
                PluginsCommand::Configure {
                    id,
                    config,
                    enable,
                    disable,
                } => cmd_plugins::configure(
                    &env.data_dir,
                    &id,
                    config.as_deref(),
                    if enable {
                        Some(true)
                    } else if disable {
                        Some(false)
                    } else {
                        None
                    },
                ),
            },
            Command::Models { command } => match command {
                ModelsCommand::List { json } => cmd_models::list(&env.data_dir, json),
                ModelsCommand::Add { file, name } => {
                    cmd_models::add(&env.data_dir, &file, name.as_deref())
                }
                ModelsCommand::Pull { name } => cmd_models::pull(&env.data_dir, &name).await,
                ModelsCommand::Rm { name } => cmd_models::rm(&env.data_dir, &name),
            },
            Command::Secrets { command } => match command {
                SecretsCommand::Set { name, value } => {
                    cmd_secrets::set(&env.data_dir, &name, value.as_deref())
                }
                SecretsCommand::List { pattern, json } => {
                    cmd_secrets::list(&env.data_dir, pattern.as_deref(), json)
                }
                SecretsCommand::Rm { name } => cmd_secrets::rm(&env.data_dir, &name),
            },
            Command::Tasks { command } => match command {
                TasksCommand::List { session, json } => {
                    cmd_tasks::list(&env.data_dir, session, json)
                }
            },
            Command::Sessions { command } => match command {
                SessionsCommand::List { json } => cmd_sessions::list(&env.data_dir, json),
                SessionsCommand::Show { id, json } => cmd_sessions::show(&env.data_dir, id, json),
            },
            Command::View { path, json } => cmd_view::run(&path, json),
            Command::Latex { command } => match command {
                LatexCommand::Build {
                    path,
                    bundle,
                    watch,
                    json,
                } => cmd_latex::build(&env.data_dir, &path, bundle.as_deref(), watch, json).await,
            },
            Command::Serve {
                port,
                root,
                ui_dir,
                model,
            } => match cmd_serve::run(
                &env.data_dir,
                &env.config,
                cmd_serve::ServeArgs {
                    port,
                    root: root.as_deref(),
                    ui_dir: ui_dir.as_deref(),
                    model: model.as_deref(),
                },
            )
            .await
            {
                cmd_serve::Ended::Exit(code) => code,
                cmd_serve::Ended::Restart(r) => {
                    relaunch = Some(r);
                    exit::OK
                }
            },
            Command::Version => exit::OK,
        }
    });
    // Tools may leave blocking work (a walk of a huge tree) behind after a Ctrl-C; do not
    // wait for it on the way out.
    runtime.shutdown_background();
    // A local model still generating (a Ctrl-C mid-answer) is stopped before exit tears
    // llama.cpp down under it.
    skald_llm::local::shutdown(std::time::Duration::from_secs(5));
    if let Some(r) = relaunch {
        // The log is flushed before the process image is replaced.
        drop(env);
        return ExitCode::from(r.exec());
    }
    ExitCode::from(code)
}
