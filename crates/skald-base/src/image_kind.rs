//! Which image formats a model can be shown, told from a file's first bytes: the tools
//! (`read_file`) and the model clients (`skald_llm::vision`) judge a file the same way.

/// The media type of an image in a format every provider takes (PNG, JPEG, WebP, GIF),
/// from its first bytes; `None` for anything else.
pub fn image_media_type(head: &[u8]) -> Option<&'static str> {
    match head {
        [0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A, ..] => Some("image/png"),
        [0xFF, 0xD8, 0xFF, ..] => Some("image/jpeg"),
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
        ] => Some("image/webp"),
        [b'G', b'I', b'F', b'8', b'7' | b'9', b'a', ..] => Some("image/gif"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_four_formats_by_their_signatures_and_nothing_else() {
        assert_eq!(
            image_media_type(b"\x89PNG\r\n\x1a\nrest"),
            Some("image/png")
        );
        assert_eq!(image_media_type(b"\xff\xd8\xff\xe0"), Some("image/jpeg"));
        assert_eq!(
            image_media_type(b"RIFF\0\0\0\0WEBPVP8 "),
            Some("image/webp")
        );
        assert_eq!(image_media_type(b"GIF89a.."), Some("image/gif"));
        assert_eq!(image_media_type(b"GIF87a.."), Some("image/gif"));
        for other in [
            &b"RIFF\0\0\0\0WAVE"[..],
            b"%PDF-1.7",
            b"\x89PNG",
            b"",
            b"<svg",
        ] {
            assert_eq!(image_media_type(other), None, "{other:?}");
        }
    }
}
