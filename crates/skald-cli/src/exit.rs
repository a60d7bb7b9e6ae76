//! Exit codes shared by every command, so scripts can rely on them.

pub const OK: u8 = 0;
/// The tool or command ran and failed; the reason is on stderr.
pub const FAILED: u8 = 1;
/// Bad usage: unknown tool, arguments that are not JSON or do not match the schema.
pub const USAGE: u8 = 2;
/// Denied by the approval rules, or needing approval that was not given.
pub const REJECTED: u8 = 3;
/// Stopped by Ctrl-C (128 + SIGINT, as shells report it).
pub const CANCELLED: u8 = 130;
