//! Images shown to a model, as the chat and the events name them (docs/images.md). The
//! bytes are fetched by `sha256` (`Command::GetImage`).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// An image a message or a tool call shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ChatImage {
    /// Hex SHA-256 of the bytes, which name the image.
    pub sha256: String,
    /// image/png, image/jpeg, image/webp or image/gif.
    pub media_type: String,
    pub width: u32,
    pub height: u32,
    /// Size of the file in bytes.
    #[ts(type = "number")]
    pub bytes: u64,
    /// The file name it was attached as, when it had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub name: Option<String>,
}
