//! `skald`: the Skald engine without a window — list and run tools, check the install.
//! Everything here is a thin carrier over `skald-core`; no behaviour lives in the CLI.

mod acp;
mod approval_prompt;
mod cmd_acp;
mod cmd_agents;
mod cmd_checkpoints;
mod cmd_cron;
mod cmd_doctor;
mod cmd_exec;
mod cmd_hooks;
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
mod cmd_worktrees;
mod exit;
mod fail;
mod progress;
mod session_events;
mod stop_signal;

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
        /// Run a command (execute_cmd) in the sandbox [default: off, it is your own run]
        #[arg(long, value_enum, value_name = "MODE")]
        sandbox: Option<SandboxArg>,
        /// Let a sandboxed command use the network
        #[arg(long)]
        network: bool,
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
        /// How the agent's commands are confined [default: config.toml's [sandbox] mode,
        /// workspace-write]
        #[arg(long, value_enum, value_name = "MODE")]
        sandbox: Option<SandboxArg>,
        /// Let sandboxed commands use the network [default: config.toml's [sandbox] network]
        #[arg(long)]
        network: bool,
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
        /// An image to show the model with the prompt: PNG, JPEG, WebP or GIF (repeatable)
        #[arg(long, value_name = "FILE")]
        image: Vec<PathBuf>,
        /// How hard a model that reasons thinks: OpenAI's reasoning effort, Anthropic's
        /// thinking budget, Ollama's think [default: the chat's, else the model's own]
        #[arg(long, value_enum, value_name = "LEVEL")]
        effort: Option<EffortArg>,
        /// Plan mode: the agent reads, searches and asks, changes nothing (commands in the
        /// read-only sandbox), and presents a plan to approve (with --approve all or inbox)
        #[arg(long)]
        plan: bool,
        /// Work in a worktree of its own: a git worktree on a new branch `skald/NAME` for
        /// a git folder, a copy for any other; the agent writes only there (a new chat;
        /// NAME defaults to the folder's name and a number)
        #[arg(long, value_name = "NAME", num_args = 0..=1, default_missing_value = "")]
        worktree: Option<String>,
        /// What to ask
        prompt: String,
    },
    /// What agents are waiting on you for, and your answers
    Inbox {
        #[command(subcommand)]
        command: cmd_inbox::InboxCommand,
    },
    /// List, add or remove approval rules
    Rules {
        #[command(subcommand)]
        command: cmd_rules::RulesCommand,
    },
    /// Scheduled jobs: list, add, remove, enable, disable, their runs, and the scheduler
    Cron {
        #[command(subcommand)]
        command: cmd_cron::CronCommand,
    },
    /// MCP servers: add, list (with their status), tools, enable, disable, rm
    Mcp {
        #[command(subcommand)]
        command: cmd_mcp::McpCommand,
    },
    /// Plugins Skald ships (image generation): list, configure, turn on or off
    Plugins {
        #[command(subcommand)]
        command: cmd_plugins::PluginsCommand,
    },
    /// Local models run in-process (GGUF files): list, add, pull, rm
    Models {
        #[command(subcommand)]
        command: cmd_models::ModelsCommand,
    },
    /// Secrets for MCP servers and plugins: set, list (names only), rm
    Secrets {
        #[command(subcommand)]
        command: cmd_secrets::SecretsCommand,
    },
    /// Background tasks started from chats
    Tasks {
        #[command(subcommand)]
        command: cmd_tasks::TasksCommand,
    },
    /// What a session's agents changed in its folder, and restoring to before any of it
    Checkpoints {
        #[command(subcommand)]
        command: cmd_checkpoints::CheckpointsCommand,
    },
    /// The board of agents: every chat and background run, what it does, used and changed
    Agents {
        #[command(subcommand)]
        command: cmd_agents::AgentsCommand,
    },
    /// Agents' worktrees: list them, discard one
    Worktrees {
        #[command(subcommand)]
        command: cmd_worktrees::WorktreesCommand,
    },
    /// The hooks that run in a folder (yours and the project's), and approving a project's
    Hooks {
        #[command(subcommand)]
        command: cmd_hooks::HooksCommand,
    },
    /// List or show stored sessions
    Sessions {
        #[command(subcommand)]
        command: cmd_sessions::SessionsCommand,
    },
    /// LaTeX to PDF in-process (tectonic), cached by its inputs
    Latex {
        #[command(subcommand)]
        command: cmd_latex::LatexCommand,
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
    /// Serve the Agent Client Protocol on stdin/stdout, for an editor that runs Skald as
    /// its agent (Zed, JetBrains, Neovim)
    Acp {
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

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum ToolChoiceArg {
    /// The model decides
    Auto,
    /// The first answer is a tool call
    Required,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum EffortArg {
    Low,
    Medium,
    High,
}

impl EffortArg {
    fn effort(self) -> skald_llm::effort::Effort {
        match self {
            EffortArg::Low => skald_llm::effort::Effort::Low,
            EffortArg::Medium => skald_llm::effort::Effort::Medium,
            EffortArg::High => skald_llm::effort::Effort::High,
        }
    }
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum SandboxArg {
    /// No sandbox: commands run as you, each after approval
    Off,
    /// Commands read (all but secrets) and write only their temporary folder
    ReadOnly,
    /// Commands also write the chat's folder and its write grants
    WorkspaceWrite,
}

impl SandboxArg {
    fn mode(self) -> skald_api::SandboxMode {
        match self {
            SandboxArg::Off => skald_api::SandboxMode::Off,
            SandboxArg::ReadOnly => skald_api::SandboxMode::ReadOnly,
            SandboxArg::WorkspaceWrite => skald_api::SandboxMode::WorkspaceWrite,
        }
    }
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
            "skald {} (database schema v{}, events schema v{})",
            env!("CARGO_PKG_VERSION"),
            skald_store::LATEST_VERSION,
            skald_api::events::SCHEMA_VERSION
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
    let code = runtime.block_on(run(cli.command, &env, &mut relaunch));
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

/// Runs one command; its exit code. A `serve` that asked to restart leaves how in `relaunch`.
async fn run(command: Command, env: &Env, relaunch: &mut Option<cmd_serve::Relaunch>) -> u8 {
    match command {
        Command::Tools { json } => cmd_tools::run(&env.data_dir, &env.config, json).await,
        Command::Tool {
            name,
            args,
            cwd,
            approve,
            sandbox,
            network,
        } => {
            let sandbox = skald_core::sandbox::SandboxSettings {
                mode: sandbox.map_or(skald_api::SandboxMode::Off, SandboxArg::mode),
                network,
                always_ask: false,
            };
            cmd_tool::run(
                &env.data_dir,
                &env.config,
                &name,
                &args,
                cwd.as_deref(),
                approve,
                sandbox,
            )
            .await
        }
        Command::Doctor { json } => cmd_doctor::run(env, json).await,
        Command::Exec {
            session,
            agent,
            model,
            cwd,
            approve,
            sandbox,
            network,
            json,
            group,
            allow_read,
            allow_write,
            extra_prompt,
            max_rounds,
            tool_choice,
            image,
            effort,
            plan,
            worktree,
            prompt,
        } => {
            let args = cmd_exec::ExecArgs {
                session,
                agent: agent.as_deref(),
                model: model.as_deref(),
                cwd: cwd.as_deref(),
                approve: approve.mode(),
                sandbox: sandbox.map(SandboxArg::mode),
                network,
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
                images: &image,
                effort: effort.map(EffortArg::effort),
                plan,
                worktree: worktree.as_deref(),
                prompt: &prompt,
            };
            cmd_exec::run(&env.data_dir, &env.config, args).await
        }
        Command::Inbox { command } => cmd_inbox::dispatch(env, command).await,
        Command::Rules { command } => cmd_rules::dispatch(env, command).await,
        Command::Cron { command } => cmd_cron::dispatch(env, command).await,
        Command::Mcp { command } => cmd_mcp::dispatch(env, command).await,
        Command::Plugins { command } => cmd_plugins::dispatch(env, command).await,
        Command::Models { command } => cmd_models::dispatch(env, command).await,
        Command::Secrets { command } => cmd_secrets::dispatch(env, command).await,
        Command::Tasks { command } => cmd_tasks::dispatch(env, command).await,
        Command::Sessions { command } => cmd_sessions::dispatch(env, command).await,
        Command::Checkpoints { command } => cmd_checkpoints::dispatch(env, command).await,
        Command::Agents { command } => cmd_agents::dispatch(env, command).await,
        Command::Worktrees { command } => cmd_worktrees::dispatch(env, command),
        Command::Hooks { command } => cmd_hooks::dispatch(env, command).await,
        Command::View { path, json } => cmd_view::run(&path, json),
        Command::Latex { command } => cmd_latex::dispatch(env, command).await,
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
                *relaunch = Some(r);
                exit::OK
            }
        },
        Command::Acp { model } => cmd_acp::run(&env.data_dir, &env.config, model.as_deref()).await,
        Command::Version => exit::OK,
    }
}
