//! The CLI's end-to-end tests: `skald` run as a real process against scripted model
//! servers, the MCP reference servers and real TeX, in one test binary (one link of the
//! whole engine instead of one per file). Every command starts from `common::SkaldCmd`
//! (or its shorthands `bare` and `skald`), which keeps the developer's own providers, data
//! directory and keyring out of the tests and sets the scripted model with `against`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers may panic

mod common;

mod acp;
mod board;
mod checkpoints;
mod cli;
mod conformance;
mod cost;
mod crash;
mod cron;
mod effort;
mod exec;
mod faults;
mod hooks;
mod images;
mod instructions;
mod latex;
mod local;
mod lsp;
mod mcp;
mod oauth;
mod plan;
mod sandbox;
mod sandbox_edges;
mod serve;
mod web;
mod worktree_edges;
mod worktrees;
