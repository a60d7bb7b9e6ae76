//! Images shown to a model (docs/images.md): a person's, pasted or attached with a
//! message, and a tool's (`read_file` of an image). Each is checked when it arrives, kept
//! once in the store by its SHA-256, and read back into the conversation for a model that
//! can see images; a model that cannot is told one was there.

use skald_llm::ModelChoice;
use skald_llm::vision::{self, ImagePart};
use skald_store::{ImageBlob, ImageOwner, ImageRef, ShownImage, Store, StoreError};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// Why an image was not kept.
#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    #[error("{0}")]
    Image(#[from] vision::ImageError),
    #[error("{0}")]
    Store(#[from] StoreError),
}

/// Checks `data` and keeps it; what it is, for the message that will show it. Decodes the
/// image: off the async threads, `check` then `keep_checked`.
pub fn keep(store: &Store, data: Vec<u8>, name: Option<String>) -> Result<ShownImage, ImageError> {
    keep_checked(store, check(data)?, name)
}

/// An image checked (decoded whole, within `skald_llm::vision`'s limits), ready to keep.
pub fn check(data: Vec<u8>) -> Result<ImageBlob, vision::ImageError> {
    let info = vision::inspect(&data)?;
    Ok(ImageBlob {
        sha256: vision::sha256_hex(&data),
        media_type: info.format.media_type().to_string(),
        width: info.width,
        height: info.height,
        data,
    })
}

/// Keeps a checked image.
pub fn keep_checked(
    store: &Store,
    blob: ImageBlob,
    name: Option<String>,
) -> Result<ShownImage, ImageError> {
    store.put_image(&blob)?;
    Ok(ShownImage {
        bytes: blob.data.len() as i64,
        sha256: blob.sha256,
        media_type: blob.media_type,
        width: blob.width,
        height: blob.height,
        name: name.map(|n| clean_name(&n)),
    })
}

/// A file name as a label: its last component, without control characters or the
/// invisible ones that reorder or hide text (`photo\u{202E}gnp.exe`), at most 200
/// characters (it is shown in the chat and may come from a file an attacker named).
pub fn clean_name(name: &str) -> String {
    let last = name.rsplit(['/', '\\']).next().unwrap_or(name);
    last.chars()
        .filter(|c| {
            !c.is_control()
                && !matches!(
                    c,
                    '\u{200B}'..='\u{200F}'
                        | '\u{202A}'..='\u{202E}'
                        | '\u{2066}'..='\u{2069}'
                        | '\u{FEFF}'
                        | '\u{061C}'
                )
        })
        .take(200)
        .collect()
}

/// An image a tool showed, with its name, checked.
pub type CheckedImage = (Option<String>, Result<ImageBlob, vision::ImageError>);

/// A tool's images checked off the async threads, one after another (each is decoded
/// whole).
pub async fn check_all(images: Vec<skald_api::ToolImage>) -> Vec<CheckedImage> {
    let mut out = Vec::with_capacity(images.len());
    for image in images {
        let checked = tokio::task::spawn_blocking(move || check(image.data))
            .await
            .unwrap_or_else(|e| {
                Err(vision::ImageError::Unreadable(format!(
                    "its check stopped: {e}"
                )))
            });
        out.push((image.name, checked));
    }
    out
}

/// The images of one call, kept and placed on it; a line for the result about each one
/// that could not be.
pub fn keep_call_images(
    store: &Store,
    session_id: i64,
    call_id: &str,
    images: Vec<CheckedImage>,
) -> Result<String, StoreError> {
    let mut refs = Vec::new();
    let mut notes = String::new();
    for (name, checked) in images {
        let kept = checked
            .map_err(ImageError::Image)
            .and_then(|blob| keep_checked(store, blob, name.clone()));
        match kept {
            Ok(kept) => refs.push(ImageRef {
                sha256: kept.sha256,
                name: kept.name,
            }),
            Err(ImageError::Store(e)) => return Err(e),
            Err(ImageError::Image(e)) => notes.push_str(&format!(
                "\n[{} could not be shown: {e}]",
                name.as_deref()
                    .map(clean_name)
                    .as_deref()
                    .unwrap_or("an image")
            )),
        }
    }
    if !refs.is_empty() {
        store.place_images(
            session_id,
            &ImageOwner::ToolCall(call_id.to_string()),
            &refs,
        )?;
    }
    Ok(notes)
}

/// An image as the protocol shows it.
pub fn chat_image(shown: &ShownImage) -> skald_api::ChatImage {
    skald_api::ChatImage {
        sha256: shown.sha256.clone(),
        media_type: shown.media_type.clone(),
        width: shown.width,
        height: shown.height,
        bytes: shown.bytes.max(0) as u64,
        name: shown.name.clone(),
    }
}

/// The images a message or tool call of a session shows, as the protocol shows them.
pub fn shown_by(
    store: &Store,
    session_id: i64,
    owner: &ImageOwner,
) -> Result<Vec<skald_api::ChatImage>, StoreError> {
    Ok(store
        .images_shown_by(session_id, owner)?
        .iter()
        .map(chat_image)
        .collect())
}

/// A session's images as the conversation shows them, read once per conversation; an
/// image shown many times is read, and held, once.
pub struct SessionImages {
    shown: HashMap<ImageOwner, Vec<ShownImage>>,
    read: HashMap<String, Arc<[u8]>>,
}

impl SessionImages {
    pub fn read(store: &Store, session_id: i64) -> Result<SessionImages, StoreError> {
        Ok(SessionImages {
            shown: store.session_images(session_id)?,
            read: HashMap::new(),
        })
    }

    /// The images `owner` shows, bytes and all; one no longer kept is left out.
    pub fn parts(
        &mut self,
        store: &Store,
        owner: &ImageOwner,
    ) -> Result<Vec<ImagePart>, StoreError> {
        let Some(list) = self.shown.get(owner) else {
            return Ok(Vec::new());
        };
        let mut parts = Vec::with_capacity(list.len());
        for shown in list {
            let data = match self.read.get(&shown.sha256) {
                Some(data) => data.clone(),
                None => match store.image(&shown.sha256)? {
                    Some(blob) => {
                        let data: Arc<[u8]> = Arc::from(blob.data);
                        self.read.insert(shown.sha256.clone(), data.clone());
                        data
                    }
                    None => continue,
                },
            };
            parts.push(ImagePart {
                sha256: shown.sha256.clone(),
                data,
            });
        }
        Ok(parts)
    }
}

/// Whether `model` can see images: what the user says in `[models.vision]` (by
/// `provider/model` or model name, a trailing `*` matching any rest), else what is known
/// of the model (`skald_llm::vision::known_to_see`).
pub fn sees_images(model: &ModelChoice, said: &BTreeMap<String, bool>) -> bool {
    crate::models::user_says(model, said)
        .copied()
        .unwrap_or_else(|| vision::known_to_see(model.provider.kind, &model.model))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn choice(kind: skald_llm::ProviderKind, name: &str, model: &str) -> ModelChoice {
        ModelChoice {
            provider: skald_llm::Provider::new(
                name,
                kind,
                "http://127.0.0.1:1",
                None,
                skald_llm::Timeouts::default(),
            )
            .unwrap(),
            model: model.into(),
        }
    }

    #[test]
    fn what_the_user_says_wins_most_specific_first() {
        use skald_llm::ProviderKind::*;
        let llava = choice(Ollama, "ollama", "my-llava:7b");
        let gpt = choice(OpenAi, "openai", "gpt-4.1-mini");
        let none = BTreeMap::new();
        assert!(!sees_images(&llava, &none));
        assert!(sees_images(&gpt, &none));
        let said: BTreeMap<String, bool> = [
            ("ollama/my-llava*".to_string(), true),
            ("gpt-4.1*".to_string(), false),
            ("openai/gpt-4.1-mini".to_string(), true),
        ]
        .into();
        assert!(sees_images(&llava, &said));
        assert!(sees_images(&gpt, &said));
        assert!(!sees_images(&choice(OpenAi, "openai", "gpt-4.1"), &said));
    }

    #[test]
    fn names_are_labels() {
        assert_eq!(clean_name("/home/u/Pictures/shot.png"), "shot.png");
        assert_eq!(clean_name("C:\\x\\a\u{7}b.png"), "ab.png");
        assert_eq!(clean_name("photo\u{202E}gnp.exe"), "photognp.exe");
        assert_eq!(clean_name("a\u{200B}b\u{2066}c\u{FEFF}.png"), "abc.png");
        assert_eq!(clean_name(&"x".repeat(1000)).len(), 200);
    }
}
