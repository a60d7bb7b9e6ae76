//! Checks on a model file before llama.cpp sees it: llama.cpp reports a bad file only to
//! its log, so the reasons a person can act on are found here.

use std::io::Read;
use std::path::Path;

/// The first bytes of every GGUF file.
pub const GGUF_MAGIC: &[u8; 4] = b"GGUF";

/// `Ok` if `path` is a readable file that starts like a GGUF model; otherwise why not.
pub fn check_gguf(path: &Path) -> Result<(), String> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(format!("no model file at {}", path.display()));
        }
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    if !meta.is_file() {
        return Err(format!("{} is not a file", path.display()));
    }
    let mut head = [0u8; 8];
    let n = std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if n < 8 || &head[..4] != GGUF_MAGIC {
        return Err(format!(
            "{} is not a GGUF model file (it does not start with `GGUF`)",
            path.display()
        ));
    }
    let version = u32::from_le_bytes([head[4], head[5], head[6], head[7]]);
    if !(2..=3).contains(&version) {
        return Err(format!(
            "{} is GGUF version {version}; llama.cpp reads versions 2 and 3",
            path.display()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_foreign_and_future_files_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.gguf");
        assert!(check_gguf(&p).unwrap_err().contains("no model file"));
        std::fs::write(&p, b"PK\x03\x04 not a model").unwrap();
        assert!(check_gguf(&p).unwrap_err().contains("not a GGUF"));
        std::fs::write(&p, b"GGUF\x09\x00\x00\x00").unwrap();
        assert!(check_gguf(&p).unwrap_err().contains("version 9"));
        std::fs::write(&p, b"GGUF\x03\x00\x00\x00rest").unwrap();
        assert!(check_gguf(&p).is_ok());
        assert!(check_gguf(dir.path()).unwrap_err().contains("not a file"));
    }
}
