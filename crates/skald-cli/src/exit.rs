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

/// The code for a failed data-folder operation: what the user named wrongly (no such item,
/// an answer already given, a value that does not fit) is bad usage; the rest failed.
pub fn of(e: &skald_service::ServiceError) -> u8 {
    use skald_service::ServiceError;
    use skald_store::StoreError;
    match e {
        ServiceError::Store(
            StoreError::NotFound { .. } | StoreError::AlreadyFinal { .. } | StoreError::Invalid(_),
        )
        | ServiceError::Invalid(_) => USAGE,
        _ => FAILED,
    }
}
