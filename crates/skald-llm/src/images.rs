//! Image generation over the OpenAI images API (`POST {base}/images/generations`), which
//! OpenAI and the compatible servers speak. Returns the image's bytes, whether the server
//! sends them inline (`b64_json`) or as a link to fetch.

use crate::LlmError;
use base64::Engine as _;
use serde_json::{Value, json};
use std::time::Duration;

const PROVIDER: &str = "the image provider";

#[derive(Debug, Clone)]
pub struct ImageRequest<'a> {
    /// e.g. `https://api.openai.com/v1`
    pub base_url: &'a str,
    pub api_key: Option<&'a str>,
    pub model: &'a str,
    pub prompt: &'a str,
    pub size: Option<&'a str>,
    /// Passed through as given (quality, style, background, …).
    pub extra: serde_json::Map<String, Value>,
    /// For the whole exchange, download included.
    pub timeout: Duration,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    pub bytes: Vec<u8>,
    /// `png`, `jpg`, `webp` or `gif`, from the bytes themselves.
    pub extension: &'static str,
    pub revised_prompt: Option<String>,
}

fn extension(bytes: &[u8]) -> Option<&'static str> {
    match bytes {
        [0x89, b'P', b'N', b'G', ..] => Some("png"),
        [0xFF, 0xD8, 0xFF, ..] => Some("jpg"),
        [
            b'R',
            b'I',
            b'F',
            b'F',
            _,
            _,
            _,
            _,
            b'W',
            b'E',
            b'B',
            b'P',
            ..,
        ] => Some("webp"),
        [b'G', b'I', b'F', b'8', ..] => Some("gif"),
        _ => None,
    }
}

pub async fn generate_image(req: &ImageRequest<'_>) -> Result<Image, LlmError> {
    let client = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        .timeout(req.timeout)
        .user_agent(concat!("skald/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| LlmError::Config(format!("cannot build the HTTP client: {e}")))?;
    let mut body = json!({"model": req.model, "prompt": req.prompt, "n": 1});
    if let Some(size) = req.size {
        body["size"] = json!(size);
    }
    if let Value::Object(map) = &mut body {
        for (k, v) in &req.extra {
            map.insert(k.clone(), v.clone());
        }
    }
    let url = format!("{}/images/generations", req.base_url.trim_end_matches('/'));
    let mut http = client.post(&url).json(&body);
    if let Some(key) = req.api_key {
        http = http.bearer_auth(key);
    }
    let failed = |e: reqwest::Error| {
        if e.is_timeout() {
            LlmError::Timeout {
                provider: PROVIDER,
                what: "image generation",
                after: req.timeout,
            }
        } else {
            LlmError::Connect {
                provider: PROVIDER,
                message: e.to_string(),
            }
        }
    };
    let resp = http.send().await.map_err(failed)?;
    let status = resp.status();
    let text = resp.text().await.map_err(failed)?;
    if !status.is_success() {
        let message = serde_json::from_str::<Value>(&text)
            .ok()
            .and_then(|v| v["error"]["message"].as_str().map(str::to_string))
            .unwrap_or_else(|| text.chars().take(300).collect());
        return Err(LlmError::Status {
            provider: PROVIDER,
            status: status.as_u16(),
            message,
            retry_after: None,
        });
    }
    let protocol = |message: String| LlmError::Protocol {
        provider: PROVIDER,
        message,
    };
    let v: Value = serde_json::from_str(&text).map_err(|e| protocol(format!("not JSON ({e})")))?;
    let first = &v["data"][0];
    let bytes = if let Some(b64) = first["b64_json"].as_str() {
        base64::engine::general_purpose::STANDARD
            .decode(b64)
            .map_err(|e| protocol(format!("b64_json is not base64 ({e})")))?
    } else if let Some(link) = first["url"].as_str() {
        let resp = client.get(link).send().await.map_err(failed)?;
        if !resp.status().is_success() {
            return Err(protocol(format!(
                "the image link answered HTTP {}",
                resp.status().as_u16()
            )));
        }
        resp.bytes().await.map_err(failed)?.to_vec()
    } else {
        return Err(protocol(
            "no image in data[0] (neither b64_json nor url)".into(),
        ));
    };
    let extension = extension(&bytes)
        .ok_or_else(|| protocol("the data is not a PNG, JPEG, WebP or GIF image".into()))?;
    Ok(Image {
        bytes,
        extension,
        revised_prompt: first["revised_prompt"].as_str().map(str::to_string),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_kinds_come_from_their_bytes() {
        assert_eq!(extension(b"\x89PNG\r\n\x1a\n...."), Some("png"));
        assert_eq!(extension(&[0xFF, 0xD8, 0xFF, 0xE0]), Some("jpg"));
        assert_eq!(extension(b"RIFF\0\0\0\0WEBPVP8 "), Some("webp"));
        assert_eq!(extension(b"GIF89a"), Some("gif"));
        assert_eq!(extension(b"<html>"), None);
    }
}
