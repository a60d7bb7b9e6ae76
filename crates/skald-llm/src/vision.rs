//! Images a model is shown — a pasted screenshot, an image `read_file` read: checked when
//! they are attached, and fitted to a provider's limits when a request is written. The one
//! module of Skald that uses the `image` crate.

use crate::Message;
use base64::Engine as _;
use sha2::{Digest, Sha256};
use std::io::Cursor;
use std::sync::{Arc, Mutex};

/// The formats every provider Skald speaks takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ImageFormat {
    Png,
    Jpeg,
    Webp,
    Gif,
}

impl ImageFormat {
    /// The format `bytes` say they are in, from their first bytes.
    pub fn sniff(bytes: &[u8]) -> Option<ImageFormat> {
        match skald_base::image_kind::image_media_type(bytes)? {
            "image/png" => Some(ImageFormat::Png),
            "image/jpeg" => Some(ImageFormat::Jpeg),
            "image/webp" => Some(ImageFormat::Webp),
            "image/gif" => Some(ImageFormat::Gif),
            _ => None,
        }
    }

    pub fn media_type(self) -> &'static str {
        match self {
            ImageFormat::Png => "image/png",
            ImageFormat::Jpeg => "image/jpeg",
            ImageFormat::Webp => "image/webp",
            ImageFormat::Gif => "image/gif",
        }
    }

    pub fn extension(self) -> &'static str {
        match self {
            ImageFormat::Png => "png",
            ImageFormat::Jpeg => "jpg",
            ImageFormat::Webp => "webp",
            ImageFormat::Gif => "gif",
        }
    }

    fn decoder(self) -> image::ImageFormat {
        match self {
            ImageFormat::Png => image::ImageFormat::Png,
            ImageFormat::Jpeg => image::ImageFormat::Jpeg,
            ImageFormat::Webp => image::ImageFormat::WebP,
            ImageFormat::Gif => image::ImageFormat::Gif,
        }
    }
}

/// Why an image cannot be shown to a model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImageError {
    #[error("not a PNG, JPEG, WebP or GIF image")]
    Unsupported,
    #[error("the image is {0} bytes; at most {MAX_INPUT_BYTES} are taken")]
    TooLarge(usize),
    #[error("the image cannot be read: {0}")]
    Unreadable(String),
    #[error(
        "the image is {width}×{height} pixels; at most {MAX_PIXELS} pixels are taken (about \
         6000×6000)"
    )]
    TooManyPixels { width: u32, height: u32 },
}

/// The largest image file taken (a 30 MB screenshot is already far beyond what any
/// provider is sent; it is downscaled).
pub const MAX_INPUT_BYTES: usize = 30 * 1024 * 1024;
/// The widest or tallest image decoded: a small file may claim a huge canvas.
const MAX_SIDE_IN: u32 = 16_384;
/// The most pixels an image may have, checked from its header before it is decoded: the
/// decoders' own working memory is not counted by `max_alloc` (a progressive JPEG needs
/// about 11 bytes a pixel besides its output), so a few megabytes of file could otherwise
/// claim gigabytes. 36 megapixels takes an 8K screenshot and a phone's photo.
pub const MAX_PIXELS: u64 = 36_000_000;
/// What decoding one image may allocate for its output.
const MAX_DECODE_ALLOC: u64 = 512 * 1024 * 1024;
/// One image is decoded at a time, process-wide: with `MAX_PIXELS`, what decoding can take
/// at once stays a few hundred megabytes, however many chats, sub-agents or composers
/// bring images together.
static DECODING: Mutex<()> = Mutex::new(());

/// Whether a model is known to see images, from its name: the well-known models that do
/// and do not, then the provider's usual case (an OpenAI-compatible or Anthropic model
/// does; an Ollama model does only if it is a known vision model; a model run in this
/// process never does). `[models.vision]` in config.toml overrides it.
pub fn known_to_see(kind: crate::ProviderKind, model: &str) -> bool {
    // A router's `vendor/model` (openrouter's `openai/gpt-4o`) is judged by the model.
    let name = model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .to_ascii_lowercase();
    let starts = |list: &[&str]| list.iter().any(|p| name.starts_with(p));
    const BLIND: &[&str] = &[
        "gpt-3.5",
        "o1-mini",
        "o3-mini",
        "gpt-4-0",
        "claude-2",
        "claude-instant",
        "deepseek",
        "gemma3:1b",
        "gemma3:270m",
        "codestral",
        "qwq",
    ];
    const SEEING: &[&str] = &[
        "gpt-4o",
        "chatgpt-4o",
        "gpt-4.1",
        "gpt-4.5",
        "gpt-4-turbo",
        "gpt-5",
        "o1",
        "o3",
        "o4-mini",
        "claude",
        "gemini",
        "grok-4",
        "grok-2-vision",
        "grok-vision",
        "pixtral",
        "llama-4",
        "llama4",
        "llava",
        "bakllava",
        "llama3.2-vision",
        "qwen2.5vl",
        "qwen2.5-vl",
        "qwen-vl",
        "qwen3-vl",
        "gemma3",
        "minicpm-v",
        "moondream",
        "granite3.2-vision",
        "mistral-small3.1",
        "mistral-small3.2",
        "mistral-medium-3",
    ];
    if kind == crate::ProviderKind::Local || name == "gpt-4" || starts(BLIND) {
        return false;
    }
    if starts(SEEING) {
        return true;
    }
    matches!(
        kind,
        crate::ProviderKind::OpenAi | crate::ProviderKind::Anthropic
    )
}

/// An image a message shows the model, as it was attached. Its SHA-256 names it in the
/// data directory and keys the fitted copies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImagePart {
    /// Hex SHA-256 of `data`.
    pub sha256: String,
    pub data: Arc<[u8]>,
}

impl ImagePart {
    pub fn new(data: impl Into<Arc<[u8]>>) -> ImagePart {
        let data = data.into();
        ImagePart {
            sha256: sha256_hex(&data),
            data,
        }
    }
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// What an attached image is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageInfo {
    pub format: ImageFormat,
    pub width: u32,
    pub height: u32,
}

/// Checks that `bytes` are an image a model can be shown, decoding it whole: an image whose
/// header is fine but whose data is not is refused when it is attached, not when a request
/// is written.
pub fn inspect(bytes: &[u8]) -> Result<ImageInfo, ImageError> {
    if bytes.len() > MAX_INPUT_BYTES {
        return Err(ImageError::TooLarge(bytes.len()));
    }
    let format = ImageFormat::sniff(bytes).ok_or(ImageError::Unsupported)?;
    let decoded = decode(bytes, format)?;
    Ok(ImageInfo {
        format,
        width: decoded.width(),
        height: decoded.height(),
    })
}

/// The image, upright (a phone's photo carries its turn in its EXIF orientation), after
/// its size is checked from its header; one at a time (`DECODING`).
fn decode(bytes: &[u8], format: ImageFormat) -> Result<image::DynamicImage, ImageError> {
    use image::ImageDecoder as _;
    let unreadable = |e: image::ImageError| ImageError::Unreadable(e.to_string());
    let (width, height) = dimensions(bytes, format)?;
    let _one_at_a_time = DECODING.lock().unwrap_or_else(|e| e.into_inner());
    let mut reader = image::ImageReader::with_format(Cursor::new(bytes), format.decoder());
    let mut limits = image::Limits::default();
    limits.max_image_width = Some(MAX_SIDE_IN);
    limits.max_image_height = Some(MAX_SIDE_IN);
    limits.max_alloc = Some(MAX_DECODE_ALLOC);
    reader.limits(limits);
    let mut decoder = reader.into_decoder().map_err(unreadable)?;
    let orientation = decoder
        .orientation()
        .unwrap_or(image::metadata::Orientation::NoTransforms);
    let mut img = image::DynamicImage::from_decoder(decoder).map_err(unreadable)?;
    img.apply_orientation(orientation);
    // What the header said is what was decoded (a turn swaps the sides).
    if u64::from(img.width()) * u64::from(img.height()) != u64::from(width) * u64::from(height) {
        return Err(ImageError::Unreadable(
            "its size is not the one its header gives".to_string(),
        ));
    }
    Ok(img)
}

/// Width and height from the header alone, refused when there are none or too many.
fn dimensions(bytes: &[u8], format: ImageFormat) -> Result<(u32, u32), ImageError> {
    let (width, height) = image::ImageReader::with_format(Cursor::new(bytes), format.decoder())
        .into_dimensions()
        .map_err(|e| ImageError::Unreadable(e.to_string()))?;
    if width == 0 || height == 0 {
        return Err(ImageError::Unreadable("it has no pixels".to_string()));
    }
    if u64::from(width) * u64::from(height) > MAX_PIXELS {
        return Err(ImageError::TooManyPixels { width, height });
    }
    Ok((width, height))
}

/// What a provider takes: the longest side it is worth sending (larger images are scaled
/// down on its side anyway, at the same cost) and the largest file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Limits {
    pub max_side: u32,
    pub max_bytes: usize,
}

/// OpenAI: a high-detail image is fitted into 2048×2048 before it is read; 20 MB a file.
pub const OPENAI_LIMITS: Limits = Limits {
    max_side: 2048,
    max_bytes: 20 * 1024 * 1024,
};
/// Anthropic: images over 1568 px on the long side are scaled down before they are read;
/// 5 MB a file, counted after base64 (4/3 of the bytes).
pub const ANTHROPIC_LIMITS: Limits = Limits {
    max_side: 1568,
    max_bytes: 5 * 1024 * 1024 / 4 * 3,
};
/// Ollama: the vision encoders of local models read far less than this; kept as small as
/// Anthropic's so a local model is not handed megabytes to encode.
pub const OLLAMA_LIMITS: Limits = Limits {
    max_side: 1568,
    max_bytes: 5 * 1024 * 1024,
};

/// An image as a request carries it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fitted {
    pub media_type: &'static str,
    pub base64: String,
}

impl Fitted {
    pub fn data_url(&self) -> String {
        format!("data:{};base64,{}", self.media_type, self.base64)
    }
}

/// The fitted copies of the images used last, so a conversation's images are not scaled
/// again for every round: least recently used first, at most `FITTED_BYTES` of base64.
static FITTED: Mutex<Vec<(String, Limits, Arc<Fitted>)>> = Mutex::new(Vec::new());
const FITTED_BYTES: usize = 96 * 1024 * 1024;

/// `image` within `limits`: as it is when it fits (a GIF is always made a PNG of its first
/// frame, since not every provider takes an animated one), else scaled down to fit.
pub fn fitted(image: &ImagePart, limits: Limits) -> Result<Arc<Fitted>, ImageError> {
    let key = (image.sha256.as_str(), limits);
    {
        let mut cache = FITTED.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = cache.iter().position(|(h, l, _)| (h.as_str(), *l) == key) {
            let hit = cache.remove(i);
            let fitted = hit.2.clone();
            cache.push(hit);
            return Ok(fitted);
        }
    }
    let fitted = Arc::new(fit(&image.data, limits)?);
    let mut cache = FITTED.lock().unwrap_or_else(|e| e.into_inner());
    cache.push((image.sha256.clone(), limits, fitted.clone()));
    let mut total: usize = cache.iter().map(|(_, _, f)| f.base64.len()).sum();
    while total > FITTED_BYTES && cache.len() > 1 {
        total -= cache.remove(0).2.base64.len();
    }
    Ok(fitted)
}

fn fit(bytes: &[u8], limits: Limits) -> Result<Fitted, ImageError> {
    let format = ImageFormat::sniff(bytes).ok_or(ImageError::Unsupported)?;
    let (w, h) = dimensions(bytes, format)?;
    // Sent as it is only when it fits and carries nothing besides its pixels worth
    // re-encoding for: a JPEG may hold where it was taken and which way is up, a file far
    // larger than its pixels need holds something else.
    let bloated = bytes.len() as u64 > u64::from(w) * u64::from(h) * 4 + 64 * 1024;
    if !matches!(format, ImageFormat::Gif | ImageFormat::Jpeg)
        && !bloated
        && w.max(h) <= limits.max_side
        && bytes.len() <= limits.max_bytes
    {
        return Ok(Fitted {
            media_type: format.media_type(),
            base64: base64::engine::general_purpose::STANDARD.encode(bytes),
        });
    }
    let mut img = decode(bytes, format)?;
    let mut side = limits.max_side;
    loop {
        if img.width().max(img.height()) > side {
            // Sampled down without a full-size floating-point copy (what `resize` makes).
            img = img.thumbnail(side, side);
        }
        // A photo stays a JPEG; a screenshot or drawing a PNG, unless it is too large as one.
        let mut out = Vec::new();
        let mut as_format = if format == ImageFormat::Jpeg {
            ImageFormat::Jpeg
        } else {
            ImageFormat::Png
        };
        encode(&img, as_format, &mut out)?;
        if out.len() > limits.max_bytes && as_format == ImageFormat::Png {
            as_format = ImageFormat::Jpeg;
            out.clear();
            encode(&img, as_format, &mut out)?;
        }
        if out.len() <= limits.max_bytes {
            return Ok(Fitted {
                media_type: as_format.media_type(),
                base64: base64::engine::general_purpose::STANDARD.encode(&out),
            });
        }
        if side <= 64 {
            return Err(ImageError::Unreadable(
                "it cannot be made small enough for the provider".to_string(),
            ));
        }
        side /= 2;
    }
}

fn encode(
    img: &image::DynamicImage,
    format: ImageFormat,
    out: &mut Vec<u8>,
) -> Result<(), ImageError> {
    let failed = |e: image::ImageError| ImageError::Unreadable(e.to_string());
    match format {
        ImageFormat::Jpeg => {
            // JPEG has no alpha: a transparent screenshot is flattened first.
            let rgb = image::DynamicImage::ImageRgb8(img.to_rgb8());
            let encoder = image::codecs::jpeg::JpegEncoder::new_with_quality(Cursor::new(out), 85);
            rgb.write_with_encoder(encoder).map_err(failed)
        }
        _ => img
            .write_to(&mut Cursor::new(out), image::ImageFormat::Png)
            .map_err(failed),
    }
}

/// How a request shows one image: fitted, or, when that failed, a line saying so.
pub(crate) enum Shown {
    Image(Arc<Fitted>),
    Note(String),
}

pub(crate) fn shown(image: &ImagePart, limits: Limits) -> Shown {
    match fitted(image, limits) {
        Ok(f) => Shown::Image(f),
        Err(e) => Shown::Note(format!(
            "[an attached image could not be prepared for the model: {e}]"
        )),
    }
}

/// What one request may carry of images, per provider: each fitted to `limits`, at most
/// `images` of them and `bytes` of base64 in all (Anthropic refuses a request over 32 MB,
/// and a model reads the latest images best anyway).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    pub limits: Limits,
    pub images: usize,
    pub bytes: usize,
}

pub fn budget_for(kind: crate::ProviderKind) -> Budget {
    match kind {
        crate::ProviderKind::Anthropic => Budget {
            limits: ANTHROPIC_LIMITS,
            images: 20,
            bytes: 24 * 1024 * 1024,
        },
        crate::ProviderKind::Ollama => Budget {
            limits: OLLAMA_LIMITS,
            images: 10,
            bytes: 24 * 1024 * 1024,
        },
        crate::ProviderKind::OpenAi | crate::ProviderKind::Local => Budget {
            limits: OPENAI_LIMITS,
            images: 20,
            bytes: 40 * 1024 * 1024,
        },
    }
}

/// Keeps the newest images of a conversation within `budget`, fitting each (so the request
/// that follows finds them fitted); an older one beyond it becomes a line saying it was
/// left out. Decodes and encodes: call it off the async threads.
pub fn keep_within(messages: &mut [Message], budget: Budget) {
    let (mut count, mut bytes) = (0usize, 0usize);
    for m in messages.iter_mut().rev() {
        if m.images.is_empty() {
            continue;
        }
        let mut kept = Vec::with_capacity(m.images.len());
        let mut left_out = 0;
        for image in m.images.drain(..).rev() {
            let size = fitted(&image, budget.limits).map_or(0, |f| f.base64.len());
            if count < budget.images && bytes + size <= budget.bytes {
                count += 1;
                bytes += size;
                kept.push(image);
            } else {
                left_out += 1;
            }
        }
        kept.reverse();
        m.images = kept;
        if left_out > 0 {
            let note = format!(
                "[{left_out} earlier image{} left out here, to keep the request within what \
                 the provider takes]",
                if left_out == 1 { "" } else { "s" }
            );
            m.content = if m.content.is_empty() {
                note
            } else {
                format!("{}\n\n{note}", m.content)
            };
        }
    }
}

/// The messages as a provider whose tool messages take text only is sent them: after each
/// run of tool results, a user message with their images, saying whose they are.
pub(crate) fn tool_images_as_user(messages: &[Message]) -> Vec<std::borrow::Cow<'_, Message>> {
    use std::borrow::Cow;
    let mut out = Vec::with_capacity(messages.len());
    let (mut said, mut images): (Vec<String>, Vec<ImagePart>) = (Vec::new(), Vec::new());
    for (i, m) in messages.iter().enumerate() {
        out.push(Cow::Borrowed(m));
        if m.role == crate::Role::Tool && !m.images.is_empty() {
            said.push(format!(
                "The image{} of tool call {}:",
                if m.images.len() == 1 { "" } else { "s" },
                m.tool_call_id.as_deref().unwrap_or("?")
            ));
            images.extend(m.images.iter().cloned());
        }
        let run_ends = messages
            .get(i + 1)
            .is_none_or(|n| n.role != crate::Role::Tool);
        if run_ends && !images.is_empty() {
            out.push(Cow::Owned(
                Message::user(std::mem::take(&mut said).join("\n"))
                    .with_images(std::mem::take(&mut images)),
            ));
        }
    }
    out
}

/// The conversation for a model that cannot see images: each image becomes a line saying
/// one was there, so the model knows it was shown something it cannot read.
pub fn without_images(messages: &mut [Message], why: &str) {
    for m in messages.iter_mut().filter(|m| !m.images.is_empty()) {
        let n = m.images.len();
        m.images.clear();
        let note = format!(
            "[{n} image{} attached here; {why}]",
            if n == 1 { "" } else { "s" }
        );
        if m.content.is_empty() {
            m.content = note;
        } else {
            m.content = format!("{}\n\n{note}", m.content);
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A 2×2 PNG, small enough to be sent as it is (the providers' tests send it).
    pub(crate) fn tiny_png() -> ImagePart {
        ImagePart::new(
            base64::engine::general_purpose::STANDARD
                .decode("iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP8z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg==")
                .unwrap(),
        )
    }

    fn png(w: u32, h: u32) -> Vec<u8> {
        let img = image::RgbaImage::from_fn(w, h, |x, y| {
            image::Rgba([(x % 256) as u8, (y % 256) as u8, ((x ^ y) % 256) as u8, 255])
        });
        let mut out = Vec::new();
        image::DynamicImage::ImageRgba8(img)
            .write_to(&mut Cursor::new(&mut out), image::ImageFormat::Png)
            .unwrap();
        out
    }

    fn decoded(f: &Fitted) -> image::DynamicImage {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&f.base64)
            .unwrap();
        image::load_from_memory(&bytes).unwrap()
    }

    #[test]
    fn inspect_names_the_format_and_size_and_refuses_the_rest() {
        let info = inspect(&png(30, 20)).unwrap();
        assert_eq!(
            info,
            ImageInfo {
                format: ImageFormat::Png,
                width: 30,
                height: 20
            }
        );
        assert_eq!(
            inspect(b"%PDF-1.7 ...").unwrap_err(),
            ImageError::Unsupported
        );
        // A PNG's signature over bytes that are not one.
        let mut broken = png(30, 20);
        broken.truncate(40);
        assert!(matches!(inspect(&broken), Err(ImageError::Unreadable(_))));
        assert!(matches!(
            inspect(&vec![0u8; MAX_INPUT_BYTES + 1]),
            Err(ImageError::TooLarge(_))
        ));
    }

    #[test]
    fn a_small_image_is_sent_as_it_is_and_a_large_one_scaled_to_the_limit() {
        let small = png(100, 50);
        let f = fitted(&ImagePart::new(small.clone()), OPENAI_LIMITS).unwrap();
        assert_eq!(f.media_type, "image/png");
        assert_eq!(
            base64::engine::general_purpose::STANDARD
                .decode(&f.base64)
                .unwrap(),
            small
        );
        let big = ImagePart::new(png(3000, 1000));
        let f = fitted(&big, ANTHROPIC_LIMITS).unwrap();
        let img = decoded(&f);
        assert_eq!((img.width(), img.height()), (1568, 523));
        let f = fitted(&big, OPENAI_LIMITS).unwrap();
        assert_eq!(decoded(&f).width(), 2048);
    }

    #[test]
    fn too_many_bytes_become_a_smaller_jpeg() {
        let noisy = ImagePart::new(png(1200, 1200));
        let limits = Limits {
            max_side: 2048,
            max_bytes: 200 * 1024,
        };
        let f = fitted(&noisy, limits).unwrap();
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&f.base64)
            .unwrap();
        assert!(bytes.len() <= limits.max_bytes, "{}", bytes.len());
        assert_eq!(f.media_type, "image/jpeg");
    }

    #[test]
    fn known_models_see_or_not_by_name() {
        use crate::ProviderKind::*;
        for (kind, model, sees) in [
            (OpenAi, "gpt-4.1-mini", true),
            (OpenAi, "o3-mini", false),
            (OpenAi, "o3", true),
            (OpenAi, "gpt-4", false),
            (OpenAi, "openai/gpt-4o", true),
            (OpenAi, "deepseek-chat", false),
            (OpenAi, "some-new-model", true),
            (Anthropic, "claude-sonnet-4-5", true),
            (Ollama, "llama3.2", false),
            (Ollama, "llama3.2-vision:11b", true),
            (Ollama, "gemma3:1b", false),
            (Ollama, "gemma3:12b", true),
            (Local, "smollm2-135m", false),
        ] {
            assert_eq!(known_to_see(kind, model), sees, "{kind:?} {model}");
        }
    }

    /// A PNG of a signature and an IHDR chunk alone: a header claiming `w`×`h`.
    fn png_header(w: u32, h: u32) -> Vec<u8> {
        fn crc32(bytes: &[u8]) -> u32 {
            let mut crc = 0xFFFF_FFFFu32;
            for b in bytes {
                crc ^= u32::from(*b);
                for _ in 0..8 {
                    crc = if crc & 1 == 1 {
                        (crc >> 1) ^ 0xEDB8_8320
                    } else {
                        crc >> 1
                    };
                }
            }
            !crc
        }
        let mut chunk = b"IHDR".to_vec();
        chunk.extend(w.to_be_bytes());
        chunk.extend(h.to_be_bytes());
        chunk.extend([8, 6, 0, 0, 0]);
        let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
        // IHDR, then an empty IDAT (the header is read up to the first data) and IEND.
        for chunk in [chunk, b"IDAT".to_vec(), b"IEND".to_vec()] {
            out.extend(((chunk.len() - 4) as u32).to_be_bytes());
            out.extend(&chunk);
            out.extend(crc32(&chunk).to_be_bytes());
        }
        out
    }

    #[test]
    fn a_canvas_too_large_or_empty_is_refused_from_its_header_before_decoding() {
        // 16384×16384 would take a gigabyte to decode; 6001×6000 is just over the budget.
        for (w, h) in [(16_384, 16_384), (6001, 6000)] {
            let e = inspect(&png_header(w, h)).unwrap_err();
            assert!(
                matches!(e, ImageError::TooManyPixels { .. }),
                "{w}×{h}: {e}"
            );
            let e = fitted(&ImagePart::new(png_header(w, h)), OPENAI_LIMITS).unwrap_err();
            assert!(
                matches!(e, ImageError::TooManyPixels { .. }),
                "{w}×{h}: {e}"
            );
        }
        // Wider than any decoder takes.
        assert!(inspect(&png_header(40_000, 1)).is_err());
        for (w, h) in [(0, 10), (10, 0)] {
            let e = inspect(&png_header(w, h)).unwrap_err();
            assert!(matches!(e, ImageError::Unreadable(_)), "{w}×{h}: {e}");
        }
    }

    #[test]
    fn a_request_keeps_its_newest_images_within_the_budget() {
        let shot = |n: u8| ImagePart::new(png(40 + u32::from(n), 30));
        let mut messages = vec![
            Message::user("first").with_images(vec![shot(1), shot(2)]),
            Message::user("second").with_images(vec![shot(3)]),
            Message::user("third").with_images(vec![shot(4), shot(5)]),
        ];
        keep_within(
            &mut messages,
            Budget {
                limits: OPENAI_LIMITS,
                images: 3,
                bytes: usize::MAX,
            },
        );
        let counts: Vec<usize> = messages.iter().map(|m| m.images.len()).collect();
        assert_eq!(counts, [0, 1, 2]);
        assert_eq!(
            messages[0].content,
            "first\n\n[2 earlier images left out here, to keep the request within what the provider takes]"
        );
        assert_eq!(messages[2].images[1], shot(5));
        // A byte budget too: only what fits, newest first.
        let one = fitted(&shot(5), OPENAI_LIMITS).unwrap().base64.len();
        let mut messages = vec![Message::user("x").with_images(vec![shot(4), shot(5)])];
        keep_within(
            &mut messages,
            Budget {
                limits: OPENAI_LIMITS,
                images: 10,
                bytes: one,
            },
        );
        assert_eq!(messages[0].images, [shot(5)]);
    }

    #[test]
    fn a_model_that_cannot_see_is_told_an_image_was_there() {
        let mut messages = vec![
            Message::user("look"),
            Message::user(""),
            Message::user("plain"),
        ];
        messages[0].images = vec![ImagePart::new(png(2, 2))];
        messages[1].images = vec![ImagePart::new(png(2, 2)), ImagePart::new(png(3, 3))];
        without_images(&mut messages, "this model cannot see images");
        assert_eq!(
            messages[0].content,
            "look\n\n[1 image attached here; this model cannot see images]"
        );
        assert_eq!(
            messages[1].content,
            "[2 images attached here; this model cannot see images]"
        );
        assert_eq!(messages[2].content, "plain");
        assert!(messages.iter().all(|m| m.images.is_empty()));
    }
}
