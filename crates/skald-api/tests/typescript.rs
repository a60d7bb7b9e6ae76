//! The UI's TypeScript types are generated from the protocol's Rust types. This test fails
//! when `ui/src/protocol.ts` is not what the Rust types generate now; run it with
//! `SKALD_BLESS=1` to write the file after changing the protocol.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers may panic

use skald_api::ToolCallStatus;
use skald_api::ToolCategory;
use skald_api::events::{Event, TurnOutcome};
use skald_api::protocol::*;
use skald_api::records::{
    InboxKind, InboxStatus, McpStatus, MessageStatus, MissedPolicy, Role, RuleAction, SessionKind,
    TaskStatus, TodoItem, TodoStatus, WriteTodosArgs,
};
use skald_api::view::{Kind, LatexStage, Page, TexError, View};
use std::path::PathBuf;
use ts_rs::TS;

fn decl<T: TS>() -> String {
    let docs = T::docs().unwrap_or_default();
    format!("{docs}export {}\n", T::decl())
}

fn generate() -> String {
    let parts = [
        decl::<serde_json::Value>(),
        decl::<TurnOutcome>(),
        decl::<SessionKind>(),
        decl::<Role>(),
        decl::<MessageStatus>(),
        decl::<ToolCallStatus>(),
        decl::<ToolCategory>(),
        decl::<TaskStatus>(),
        decl::<InboxKind>(),
        decl::<InboxStatus>(),
        decl::<RuleAction>(),
        decl::<MissedPolicy>(),
        decl::<McpStatus>(),
        decl::<TodoStatus>(),
        decl::<TodoItem>(),
        decl::<WriteTodosArgs>(),
        decl::<Event>(),
        decl::<Kind>(),
        decl::<Page>(),
        decl::<TexError>(),
        decl::<LatexStage>(),
        decl::<View>(),
        decl::<Request>(),
        decl::<skald_api::SandboxMode>(),
        decl::<skald_api::SandboxInfo>(),
        decl::<skald_api::checkpoint::ChangeStatus>(),
        decl::<skald_api::checkpoint::FileChange>(),
        decl::<skald_api::checkpoint::FileChanges>(),
        decl::<skald_api::checkpoint::CheckpointKind>(),
        decl::<skald_api::checkpoint::CheckpointInfo>(),
        decl::<skald_api::hook::HookOutcome>(),
        decl::<skald_api::hook::HookRun>(),
        decl::<skald_api::hook::ProjectHooks>(),
        decl::<skald_api::context::ContextSource>(),
        decl::<skald_api::context::InstructionFile>(),
        decl::<skald_api::context::ContextSkill>(),
        decl::<skald_api::context::TurnContext>(),
        decl::<Command>(),
        decl::<InboxAnswer>(),
        decl::<BypassSpec>(),
        decl::<RuleDraft>(),
        decl::<ServerMessage>(),
        decl::<Reply>(),
        decl::<SessionInfo>(),
        decl::<ChatMessage>(),
        decl::<ToolCallInfo>(),
        decl::<InboxEntry>(),
        decl::<InboxRequest>(),
        decl::<ApprovalRequest>(),
        decl::<WritePreview>(),
        decl::<QuestionRequest>(),
        decl::<ElicitationRequest>(),
        decl::<RuleInfo>(),
        decl::<TaskInfo>(),
        decl::<skald_api::processes::ProcessInfo>(),
        decl::<skald_api::processes::ProcessStatus>(),
        decl::<CronJobInfo>(),
        decl::<PluginInfo>(),
        decl::<OpenTarget>(),
        decl::<LocalModelInfo>(),
        decl::<RecommendedModel>(),
        decl::<TexStatus>(),
        decl::<WebSettings>(),
        decl::<LanguageServerInfo>(),
        decl::<AgentInfo>(),
        decl::<McpServerInfo>(),
        decl::<McpPromptInfo>(),
        decl::<McpPromptArgumentInfo>(),
        decl::<McpResourceInfo>(),
        decl::<skald_api::ChatImage>(),
        decl::<ModelOption>(),
        decl::<ContextPart>(),
        decl::<SummaryInfo>(),
        decl::<RateLimitInfo>(),
        decl::<LimitInfo>(),
        decl::<skald_api::worktree::WorktreeInfo>(),
        decl::<skald_api::board::BoardAgent>(),
        decl::<skald_api::worktree::MergeReport>(),
        decl::<skald_api::worktree::MergeOutcome>(),
        decl::<skald_api::board::AgentState>(),
        decl::<skald_api::board::ChangeTally>(),
        decl::<skald_api::worktree::WorktreeKind>(),
        decl::<skald_api::worktree::WorktreeStatus>(),
        decl::<skald_api::worktree::FileReview>(),
        decl::<skald_api::worktree::HunkInfo>(),
        decl::<skald_api::worktree::ApplyReport>(),
        decl::<skald_api::worktree::ConflictInfo>(),
        decl::<skald_api::worktree::FileChoice>(),
        decl::<skald_api::records::ChatMode>(),
    ];
    // Ids, sizes and millisecond timestamps are far below 2^53 and travel as JSON
    // numbers, so they are `number` on the TypeScript side, not `bigint`.
    let body = parts.join("\n").replace("bigint", "number");
    format!(
        "// Generated from crates/skald-api (protocol.rs, events.rs, view.rs, inbox.rs, listings.rs,\n\
         // records.rs) by `SKALD_BLESS=1 cargo test -p skald-api --test typescript`. Do not edit.\n\n{body}"
    )
}

#[test]
fn ui_protocol_types_match_the_rust_ones() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../ui/src/protocol.ts");
    let now = generate();
    if std::env::var_os("SKALD_BLESS").is_some() {
        std::fs::write(&path, &now).unwrap();
        return;
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        on_disk == now,
        "ui/src/protocol.ts is out of date with the Rust protocol; run \
         `SKALD_BLESS=1 cargo test -p skald-api --test typescript` and commit it"
    );
}
