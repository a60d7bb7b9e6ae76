//! What a write would change, shown in its approval request.

use super::FS_WRITE;
use serde_json::Value;
use skald_api::inbox::WritePreview;
use skald_api::tool_names as tn;
use std::path::Path;

/// Bytes of a file shown in an approval's before/after preview.
const PREVIEW_BYTES: usize = 200 * 1024;

/// What a write would change, for the approval request: the path, the file's content now
/// and after (a unified diff is derivable from the two). None for calls that are not
/// writes; only the path when the new content cannot be worked out cheaply.
pub fn write_preview(tool: &str, args: &Value, working_dir: &Path) -> Option<WritePreview> {
    if !FS_WRITE.contains(&tool) {
        return None;
    }
    let raw = args.get("path").and_then(Value::as_str)?;
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
    let text = |k: &str| args.get(k).and_then(Value::as_str).unwrap_or("");
    let num = |k: &str| {
        args.get(k)
            .and_then(Value::as_u64)
            .and_then(|n| usize::try_from(n).ok())
    };
    let file = old.as_ref().map(|o| skald_tools::text::TextFile {
        crlf: o.contains("\r\n"),
        text: o.clone(),
    });
    let new = match tool {
        tn::WRITE_FILE => Some(text("content").to_string()),
        tn::INSERT_AT_LINE => match (file.as_ref(), num("line")) {
            (Some(f), Some(line)) if line >= 1 => {
                Some(f.splice_lines(line - 1, 0, text("content")))
            }
            _ => None,
        },
        tn::REPLACE_LINES => match (file.as_ref(), num("start_line"), num("end_line")) {
            (Some(f), Some(a), Some(b)) if a >= 1 && b >= a => {
                Some(f.splice_lines(a - 1, b - a + 1, text("content")))
            }
            _ => None,
        },
        // Only when the result stays small: `old` of "" or " " with replace_all could
        // otherwise build gigabytes before anyone saw the call.
        tn::EDIT_FILE => old.as_ref().and_then(|o| {
            let (from, to) = (text("old"), text("new"));
            if from.is_empty() {
                return None;
            }
            let all = args.get("replace_all").and_then(Value::as_bool) == Some(true);
            let hits = if all { o.matches(from).count() } else { 1 };
            let size = o.len() + hits.saturating_mul(to.len());
            (size <= 8 * PREVIEW_BYTES).then(|| {
                if all {
                    o.replace(from, to)
                } else {
                    o.replacen(from, to, 1)
                }
            })
        }),
        _ => None,
    };
    Some(WritePreview {
        path: path.display().to_string(),
        old: old.map(cut),
        new: new.map(cut),
    })
}
