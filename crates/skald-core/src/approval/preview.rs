//! What a write would change, shown in its approval request.

use serde_json::Value;
use skald_api::inbox::WritePreview;
use std::path::Path;

/// Bytes of a file shown in an approval's before/after preview.
const PREVIEW_BYTES: usize = 200 * 1024;

/// What a write would change, for the approval request: the path, the file's content now
/// and after (a unified diff is derivable from the two). None for calls that are not
/// writes; only the path when the new content cannot be worked out cheaply.
pub fn write_preview(tool: &str, args: &Value, working_dir: &Path) -> Option<WritePreview> {
    let tool = skald_tools::tool_named(tool)?;
    let access = tool.file_access().filter(|a| a.is_write())?;
    let raw = args.get(access.path_arg).and_then(Value::as_str)?;
    let path = skald_base::path::resolve_in(raw, working_dir);
    let cut = |s: String| -> String {
        match s.char_indices().nth(PREVIEW_BYTES) {
            Some((i, _)) => s[..i].to_string(),
            None => s,
        }
    };
    let old = std::fs::metadata(&path)
        .ok()
        .filter(|m| m.is_file() && m.len() <= 8 * PREVIEW_BYTES as u64)
        .and_then(|_| std::fs::read_to_string(&path).ok());
    let new = tool.content_after(args, old.as_deref(), 8 * PREVIEW_BYTES);
    Some(WritePreview {
        path: path.display().to_string(),
        old: old.map(cut),
        new: new.map(cut),
    })
}
