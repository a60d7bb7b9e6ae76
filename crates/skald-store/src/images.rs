//! Images shown to a model (docs/images.md): kept once by their SHA-256, and placed on a
//! person's message or a tool call's result.

use crate::{Store, StoreError, now_ms};
use rusqlite::{OptionalExtension, params};
use std::collections::HashMap;

/// An image's bytes and what they are. The caller has checked them (`skald_llm::vision`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageBlob {
    pub sha256: String,
    pub media_type: String,
    pub width: u32,
    pub height: u32,
    pub data: Vec<u8>,
}

/// An image as a message or call shows it, without its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShownImage {
    pub sha256: String,
    pub media_type: String,
    pub width: u32,
    pub height: u32,
    pub bytes: i64,
    /// The file name it was attached as, when it had one.
    pub name: Option<String>,
}

/// An image to place: which one, and the name it came with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageRef {
    pub sha256: String,
    pub name: Option<String>,
}

/// What shows a placed image.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ImageOwner {
    Message(i64),
    ToolCall(String),
}

/// How long an image no chat shows is kept: one pasted into the composer is stored before
/// its message is sent.
const UNPLACED_KEPT_MS: i64 = 24 * 60 * 60 * 1000;

impl Store {
    /// Keeps an image (once: the same bytes again change nothing but its time, so an image
    /// attached again is not swept as unplaced).
    pub fn put_image(&self, image: &ImageBlob) -> Result<(), StoreError> {
        self.conn().execute(
            "INSERT INTO images (sha256, media_type, width, height, data, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)
             ON CONFLICT (sha256) DO UPDATE SET created_at = excluded.created_at",
            params![
                image.sha256,
                image.media_type,
                image.width,
                image.height,
                image.data,
                now_ms()
            ],
        )?;
        Ok(())
    }

    /// A kept image, bytes and all.
    pub fn image(&self, sha256: &str) -> Result<Option<ImageBlob>, StoreError> {
        Ok(self
            .conn()
            .query_row(
                "SELECT sha256, media_type, width, height, data FROM images WHERE sha256 = ?1",
                [sha256],
                |r| {
                    Ok(ImageBlob {
                        sha256: r.get(0)?,
                        media_type: r.get(1)?,
                        width: r.get(2)?,
                        height: r.get(3)?,
                        data: r.get(4)?,
                    })
                },
            )
            .optional()?)
    }

    /// Places kept images on a message or a tool call of a session, in order. An image that
    /// is not kept is refused and nothing is placed.
    pub fn place_images(
        &self,
        session_id: i64,
        owner: &ImageOwner,
        images: &[ImageRef],
    ) -> Result<(), StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        place(&tx, session_id, owner, images)?;
        tx.commit()?;
        Ok(())
    }

    /// Every placed image of a session, by what shows it, each list in order.
    pub fn session_images(
        &self,
        session_id: i64,
    ) -> Result<HashMap<ImageOwner, Vec<ShownImage>>, StoreError> {
        self.placed("c.session_id = ?1", params![session_id])
    }

    /// The images one message or tool call of a session shows, in order.
    pub fn images_shown_by(
        &self,
        session_id: i64,
        owner: &ImageOwner,
    ) -> Result<Vec<ShownImage>, StoreError> {
        let mut placed = match owner {
            ImageOwner::Message(id) => self.placed(
                "c.session_id = ?1 AND c.message_id = ?2",
                params![session_id, id],
            )?,
            ImageOwner::ToolCall(id) => self.placed(
                "c.session_id = ?1 AND c.tool_call_id = ?2",
                params![session_id, id],
            )?,
        };
        Ok(placed.remove(owner).unwrap_or_default())
    }

    fn placed(
        &self,
        condition: &str,
        params: impl rusqlite::Params,
    ) -> Result<HashMap<ImageOwner, Vec<ShownImage>>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(&format!(
            "SELECT c.message_id, c.tool_call_id, c.sha256, i.media_type, i.width, i.height,
                    length(i.data), c.name
             FROM chat_images c JOIN images i ON i.sha256 = c.sha256
             WHERE {condition} ORDER BY c.id"
        ))?;
        let rows = stmt.query_map(params, |r| {
            let owner = match r.get::<_, Option<i64>>(0)? {
                Some(id) => ImageOwner::Message(id),
                None => ImageOwner::ToolCall(r.get(1)?),
            };
            Ok((
                owner,
                ShownImage {
                    sha256: r.get(2)?,
                    media_type: r.get(3)?,
                    width: r.get(4)?,
                    height: r.get(5)?,
                    bytes: r.get(6)?,
                    name: r.get(7)?,
                },
            ))
        })?;
        let mut out: HashMap<ImageOwner, Vec<ShownImage>> = HashMap::new();
        for row in rows {
            let (owner, image) = row?;
            out.entry(owner).or_default().push(image);
        }
        Ok(out)
    }

    /// Removes the images no chat shows any more (and that were not just pasted).
    pub fn forget_unplaced_images(&self) -> Result<usize, StoreError> {
        Ok(self.conn().execute(
            "DELETE FROM images
             WHERE created_at < ?1 AND NOT EXISTS
                   (SELECT 1 FROM chat_images c WHERE c.sha256 = images.sha256)",
            [now_ms() - UNPLACED_KEPT_MS],
        )?)
    }
}

/// `Store::place_images` inside a transaction the caller holds.
pub(crate) fn place(
    tx: &rusqlite::Transaction<'_>,
    session_id: i64,
    owner: &ImageOwner,
    images: &[ImageRef],
) -> Result<(), StoreError> {
    let (message_id, tool_call_id) = match owner {
        ImageOwner::Message(id) => (Some(*id), None),
        ImageOwner::ToolCall(id) => (None, Some(id.as_str())),
    };
    for (position, image) in images.iter().enumerate() {
        let kept: bool = tx.query_row(
            "SELECT EXISTS (SELECT 1 FROM images WHERE sha256 = ?1)",
            [&image.sha256],
            |r| r.get(0),
        )?;
        if !kept {
            return Err(StoreError::NotFound {
                what: "image",
                id: image.sha256.clone(),
            });
        }
        tx.execute(
            "INSERT INTO chat_images (session_id, message_id, tool_call_id, position, sha256, name)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                session_id,
                message_id,
                tool_call_id,
                position as i64,
                image.sha256,
                image.name
            ],
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{NewMessage, NewSession, Role};

    fn blob(byte: u8) -> ImageBlob {
        ImageBlob {
            sha256: format!("{byte:02x}").repeat(32),
            media_type: "image/png".into(),
            width: 2,
            height: 3,
            data: vec![byte; 10],
        }
    }

    #[test]
    fn images_are_kept_once_and_placed_in_order() {
        let store = Store::open_in_memory().unwrap();
        let s = store.create_session(&NewSession::default()).unwrap();
        let (a, b) = (blob(1), blob(2));
        store.put_image(&a).unwrap();
        store.put_image(&a).unwrap();
        store.put_image(&b).unwrap();
        assert_eq!(store.image(&a.sha256).unwrap(), Some(a.clone()));
        let m = store
            .append_message_showing(
                &NewMessage::new(s.id, Role::User, "look"),
                &[
                    ImageRef {
                        sha256: b.sha256.clone(),
                        name: Some("shot.png".into()),
                    },
                    ImageRef {
                        sha256: a.sha256.clone(),
                        name: None,
                    },
                ],
            )
            .unwrap();
        store
            .place_images(
                s.id,
                &ImageOwner::ToolCall("call_1".into()),
                &[ImageRef {
                    sha256: a.sha256.clone(),
                    name: None,
                }],
            )
            .unwrap();
        let all = store.session_images(s.id).unwrap();
        let shown: Vec<(&str, Option<&str>)> = all[&ImageOwner::Message(m.id)]
            .iter()
            .map(|i| (i.sha256.as_str(), i.name.as_deref()))
            .collect();
        assert_eq!(
            shown,
            [
                (b.sha256.as_str(), Some("shot.png")),
                (a.sha256.as_str(), None)
            ]
        );
        assert_eq!(all[&ImageOwner::ToolCall("call_1".into())][0].bytes, 10);
    }

    #[test]
    fn a_fork_shows_the_images_of_what_it_copied() {
        let store = Store::open_in_memory().unwrap();
        let s = store.create_session(&NewSession::default()).unwrap();
        let (a, b) = (blob(1), blob(2));
        store.put_image(&a).unwrap();
        store.put_image(&b).unwrap();
        let r = |i: &ImageBlob| ImageRef {
            sha256: i.sha256.clone(),
            name: None,
        };
        let first = store
            .append_message_showing(&NewMessage::new(s.id, Role::User, "one"), &[r(&a)])
            .unwrap();
        let answer = store
            .append_message(&NewMessage::new(s.id, Role::Assistant, ""))
            .unwrap();
        store
            .insert_tool_call(&crate::NewToolCall {
                tool_call_id: "c1".into(),
                session_id: s.id,
                stack_id: None,
                message_id: Some(answer.id),
                name: "read_file".into(),
                args: serde_json::json!({}),
                status: skald_api::ToolCallStatus::Done,
            })
            .unwrap();
        store
            .place_images(s.id, &ImageOwner::ToolCall("c1".into()), &[r(&a)])
            .unwrap();
        let second = store
            .append_message_showing(&NewMessage::new(s.id, Role::User, "two"), &[r(&b)])
            .unwrap();
        let fork = store.fork_session(s.id, second.id, "fork").unwrap();
        let copied = store.session_images(fork.id).unwrap();
        let first_copy = store.list_messages(fork.id).unwrap()[0].id;
        assert_ne!(first_copy, first.id);
        assert_eq!(copied.len(), 2, "{copied:?}");
        assert_eq!(copied[&ImageOwner::Message(first_copy)][0].sha256, a.sha256);
        assert_eq!(
            copied[&ImageOwner::ToolCall("c1".into())][0].sha256,
            a.sha256
        );
        // The original is unchanged.
        assert_eq!(store.session_images(s.id).unwrap().len(), 3);
    }

    #[test]
    fn an_image_not_kept_is_refused_and_the_message_is_not_written() {
        let store = Store::open_in_memory().unwrap();
        let s = store.create_session(&NewSession::default()).unwrap();
        let err = store
            .append_message_showing(
                &NewMessage::new(s.id, Role::User, "look"),
                &[ImageRef {
                    sha256: "ab".repeat(32),
                    name: None,
                }],
            )
            .unwrap_err();
        assert!(
            matches!(err, StoreError::NotFound { what: "image", .. }),
            "{err}"
        );
        assert!(store.list_messages(s.id).unwrap().is_empty());
    }

    #[test]
    fn only_images_no_chat_shows_are_forgotten() {
        let store = Store::open_in_memory().unwrap();
        let s = store.create_session(&NewSession::default()).unwrap();
        let (shown, loose, fresh) = (blob(1), blob(2), blob(3));
        for i in [&shown, &loose, &fresh] {
            store.put_image(i).unwrap();
        }
        store
            .append_message_showing(
                &NewMessage::new(s.id, Role::User, "look"),
                &[ImageRef {
                    sha256: shown.sha256.clone(),
                    name: None,
                }],
            )
            .unwrap();
        // Pasted a day and more ago, never sent.
        store
            .conn()
            .execute(
                "UPDATE images SET created_at = 0 WHERE sha256 IN (?1, ?2)",
                [&shown.sha256, &loose.sha256],
            )
            .unwrap();
        assert_eq!(store.forget_unplaced_images().unwrap(), 1);
        assert!(store.image(&loose.sha256).unwrap().is_none());
        assert!(store.image(&shown.sha256).unwrap().is_some());
        assert!(store.image(&fresh.sha256).unwrap().is_some());
        // Once its chat is deleted, its images go too, unless another chat shows them.
        let other = store.create_session(&NewSession::default()).unwrap();
        store
            .append_message_showing(
                &NewMessage::new(other.id, Role::User, "again"),
                &[ImageRef {
                    sha256: fresh.sha256.clone(),
                    name: None,
                }],
            )
            .unwrap();
        store
            .place_images(
                s.id,
                &ImageOwner::ToolCall("c".into()),
                &[ImageRef {
                    sha256: fresh.sha256.clone(),
                    name: None,
                }],
            )
            .unwrap();
        store.delete_session(s.id).unwrap();
        assert!(store.image(&shown.sha256).unwrap().is_none());
        assert!(store.image(&fresh.sha256).unwrap().is_some());
        store.delete_session(other.id).unwrap();
        // Attached within the day: it may be about to be sent from a composer or a queue.
        assert!(store.image(&fresh.sha256).unwrap().is_some());
        store
            .conn()
            .execute("UPDATE images SET created_at = 0", [])
            .unwrap();
        assert_eq!(store.forget_unplaced_images().unwrap(), 1);
        assert!(store.image(&fresh.sha256).unwrap().is_none());
    }
}
