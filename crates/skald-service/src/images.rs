//! Images a person attaches in the composer, and their bytes for the chat to show
//! (docs/images.md).

use crate::{Service, ServiceError, invalid};
use base64::Engine as _;
use skald_api::protocol::Reply;

impl Service {
    /// Keeps an image from the composer; it is shown once a message names it.
    pub(crate) async fn attach_image(
        &self,
        data: String,
        name: Option<String>,
        session_id: Option<i64>,
    ) -> Result<Reply, ServiceError> {
        // Measured before decoding: base64 is 4 characters for 3 bytes.
        let max = skald_llm::vision::MAX_INPUT_BYTES;
        if data.len() / 4 * 3 > max + 3 {
            return Err(invalid(format!(
                "the image is larger than the {} MB an image may be",
                max / (1024 * 1024)
            )));
        }
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(data.trim())
            .map_err(|e| invalid(format!("the image is not valid base64: {e}")))?;
        // Decoded whole to check it: off the async threads.
        let checked = crate::blocking(move || skald_core::images::check(bytes))
            .await
            .map_err(|e| invalid(e.to_string()))?;
        let shown =
            skald_core::images::keep_checked(&self.store, checked, name).map_err(|e| match e {
                skald_core::images::ImageError::Image(e) => invalid(format!("{e}")),
                skald_core::images::ImageError::Store(e) => ServiceError::from(e),
            })?;
        let engine = self.sessions.engine();
        // The chat's own model when it has one, else the configured one.
        let chat_models = match session_id {
            Some(id) => engine
                .models_for(&self.store.get_session(id)?)
                .ok()
                .flatten()
                .map(|list| list.current()),
            None => None,
        };
        let models = chat_models.unwrap_or_else(|| engine.models());
        let warning = models.first().and_then(|model| {
            (!engine.sees_images(model)).then(|| {
                format!(
                    "{} cannot see images: it will be told an image was attached, not what \
                     it shows. Choose a model that can see, or say in config.toml \
                     ([models.vision]) that this one can.",
                    model.label()
                )
            })
        });
        Ok(Reply::AttachImage {
            image: skald_core::images::chat_image(&shown),
            warning,
        })
    }

    pub(crate) fn get_image(&self, sha256: &str) -> Result<Reply, ServiceError> {
        if sha256.len() != 64 || !sha256.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(invalid(
                "an image is named by the 64 hex digits of its SHA-256",
            ));
        }
        let blob = self
            .store
            .image(&sha256.to_ascii_lowercase())?
            .ok_or_else(|| invalid(format!("no image {sha256} is kept")))?;
        Ok(Reply::GetImage {
            media_type: blob.media_type,
            data: base64::engine::general_purpose::STANDARD.encode(&blob.data),
        })
    }
}
