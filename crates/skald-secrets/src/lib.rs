//! Secrets (tokens, passwords) for MCP servers and plugins. Values live in the OS keyring
//! — Secret Service on Linux, Keychain on macOS, Credential Manager on Windows — or, where
//! there is none (a headless Linux box), in an encrypted file in the data directory. Only
//! names are ever listed; values are read where they are used (an MCP server's
//! environment) and redacted from anything a model or a log could see.
//!
//! Layout under the data directory's `secrets/`: `index.json` (each name and where its
//! value is), and for the file backend `vault.key` (a random 256-bit key) and `vault.bin`
//! (XChaCha20-Poly1305 over the JSON map of values), all readable by the user only. The
//! file protects against casual disclosure — backups, a synced folder, a grep — not
//! against someone who can act as the user; the keyring is the stronger home.

use chacha20poly1305::aead::{Aead, KeyInit};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Where a value is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Backend {
    Keyring,
    File,
}

#[derive(Debug, thiserror::Error)]
pub enum SecretError {
    #[error("`{0}` cannot name a secret: use letters, digits, `_`, `-` and `.` (at most 64)")]
    BadName(String),
    #[error("cannot use {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the secrets vault {0} cannot be read (wrong key or damaged)")]
    Vault(PathBuf),
    #[error("{0} is damaged; fix or remove it (its values stay where they are)")]
    Damaged(PathBuf),
    #[error("the OS keyring refused: {0}")]
    Keyring(String),
    #[error("`{0}` stayed in use by another process for {1} s")]
    Busy(String, u64),
}

/// Service name the values are filed under in the OS keyring.
const SERVICE: &str = "skald";
/// Values shorter than this are not redacted: they would match ordinary text.
const MIN_REDACT: usize = 4;

pub struct Secrets {
    dir: PathBuf,
    /// Where new values go.
    backend: Backend,
    /// Serialises read-modify-write of the index and the vault within this process.
    lock: Mutex<()>,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> SecretError + '_ {
    move |source| SecretError::Io {
        path: path.to_path_buf(),
        source,
    }
}

pub fn check_name(name: &str) -> Result<(), SecretError> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if ok {
        Ok(())
    } else {
        Err(SecretError::BadName(name.to_string()))
    }
}

/// Runs a keyring call on a thread of its own: the Secret Service client drives its own
/// async I/O, which must not run on (and block) the caller's async runtime.
fn on_thread<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    std::thread::spawn(f).join().ok()
}

/// Whether the OS keyring answers: reading an entry that does not exist says `NoEntry`
/// when it works, and fails otherwise (no Secret Service on this session bus, say).
fn keyring_available() -> bool {
    on_thread(|| match keyring::Entry::new(SERVICE, "skald-probe") {
        Ok(entry) => matches!(entry.get_password(), Err(keyring::Error::NoEntry) | Ok(_)),
        Err(_) => false,
    })
    .unwrap_or(false)
}

impl Secrets {
    /// Opens the secrets under `data_dir/secrets`. New values go to the OS keyring when
    /// one answers, else to the encrypted file; `SKALD_SECRETS=file` forces the file.
    pub fn open(data_dir: &Path) -> Result<Secrets, SecretError> {
        let dir = data_dir.join("secrets");
        std::fs::create_dir_all(&dir).map_err(io(&dir))?;
        restrict(&dir, 0o700);
        let forced_file = std::env::var("SKALD_SECRETS").is_ok_and(|v| v == "file");
        let backend = if !forced_file && keyring_available() {
            Backend::Keyring
        } else {
            Backend::File
        };
        Ok(Secrets {
            dir,
            backend,
            lock: Mutex::new(()),
        })
    }

    /// An exclusive hold on the secret `name` across processes, released when the file
    /// returned is dropped: for a read-modify-write no other process may interleave with
    /// (an OAuth refresh token that rotates: the app and `skald` in a terminal refreshing
    /// it at once would leave one of them with a spent token). Waits at most `wait`.
    pub fn hold(
        &self,
        name: &str,
        wait: std::time::Duration,
    ) -> Result<std::fs::File, SecretError> {
        check_name(name)?;
        let dir = self.dir.join("holds");
        std::fs::create_dir_all(&dir).map_err(io(&dir))?;
        let path = dir.join(format!("{name}.lock"));
        let file = std::fs::OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(false)
            .open(&path)
            .map_err(io(&path))?;
        let until = std::time::Instant::now() + wait;
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(file),
                Err(std::fs::TryLockError::WouldBlock) if std::time::Instant::now() < until => {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                Err(std::fs::TryLockError::WouldBlock) => {
                    return Err(SecretError::Busy(name.to_string(), wait.as_secs()));
                }
                Err(std::fs::TryLockError::Error(e)) => return Err(io(&path)(e)),
            }
        }
    }

    /// Where new values go.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    fn guard(&self) -> std::sync::MutexGuard<'_, ()> {
        self.lock.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn index_path(&self) -> PathBuf {
        self.dir.join("index.json")
    }

    fn index(&self) -> Result<BTreeMap<String, Backend>, SecretError> {
        let path = self.index_path();
        match std::fs::read(&path) {
            // A damaged index is reported: read as empty, the next `set` would forget
            // every other name.
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|_| SecretError::Damaged(path)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(BTreeMap::new()),
            Err(e) => Err(io(&path)(e)),
        }
    }

    fn save_index(&self, index: &BTreeMap<String, Backend>) -> Result<(), SecretError> {
        let bytes = serde_json::to_vec_pretty(index).unwrap_or_default();
        write_private(&self.index_path(), &bytes)
    }

    /// Sets a secret; an empty value deletes it. Returns where it was stored.
    pub fn set(&self, name: &str, value: &str) -> Result<Option<Backend>, SecretError> {
        check_name(name)?;
        if value.is_empty() {
            self.delete(name)?;
            return Ok(None);
        }
        let _g = self.guard();
        let mut index = self.index()?;
        // A value moving between backends leaves nothing behind in the old one.
        if let Some(old) = index.get(name).copied()
            && old != self.backend
        {
            self.remove_from(old, name)?;
        }
        match self.backend {
            Backend::Keyring => {
                let (n, v) = (name.to_string(), value.to_string());
                on_thread(move || {
                    keyring::Entry::new(SERVICE, &n).and_then(|e| e.set_password(&v))
                })
                .unwrap_or_else(|| Err(keyring::Error::Invalid("thread".into(), "panicked".into())))
                .map_err(|e| SecretError::Keyring(e.to_string()))?;
            }
            Backend::File => {
                let mut vault = self.read_vault()?;
                vault.insert(name.to_string(), value.to_string());
                self.write_vault(&vault)?;
            }
        }
        index.insert(name.to_string(), self.backend);
        self.save_index(&index)?;
        Ok(Some(self.backend))
    }

    /// A secret's value.
    pub fn get(&self, name: &str) -> Result<Option<String>, SecretError> {
        let _g = self.guard();
        let Some(backend) = self.index()?.get(name).copied() else {
            return Ok(None);
        };
        match backend {
            Backend::File => Ok(self.read_vault()?.get(name).cloned()),
            Backend::Keyring => {
                let n = name.to_string();
                match on_thread(move || {
                    keyring::Entry::new(SERVICE, &n).and_then(|e| e.get_password())
                }) {
                    Some(Ok(v)) => Ok(Some(v)),
                    Some(Err(keyring::Error::NoEntry)) => Ok(None),
                    Some(Err(e)) => Err(SecretError::Keyring(e.to_string())),
                    None => Err(SecretError::Keyring("the keyring call panicked".into())),
                }
            }
        }
    }

    /// Deletes a secret. Returns whether it existed.
    pub fn delete(&self, name: &str) -> Result<bool, SecretError> {
        let _g = self.guard();
        let mut index = self.index()?;
        let Some(backend) = index.remove(name) else {
            return Ok(false);
        };
        self.remove_from(backend, name)?;
        self.save_index(&index)?;
        Ok(true)
    }

    fn remove_from(&self, backend: Backend, name: &str) -> Result<(), SecretError> {
        match backend {
            Backend::File => {
                let mut vault = self.read_vault()?;
                if vault.remove(name).is_some() {
                    self.write_vault(&vault)?;
                }
            }
            Backend::Keyring => {
                let n = name.to_string();
                match on_thread(move || {
                    keyring::Entry::new(SERVICE, &n).and_then(|e| e.delete_credential())
                }) {
                    Some(Ok(())) | Some(Err(keyring::Error::NoEntry)) => {}
                    Some(Err(e)) => return Err(SecretError::Keyring(e.to_string())),
                    None => return Err(SecretError::Keyring("the keyring call panicked".into())),
                }
            }
        }
        Ok(())
    }

    /// Secret names, sorted; with a pattern, those containing it or matching it as a
    /// `prefix*` glob.
    pub fn list(&self, pattern: Option<&str>) -> Result<Vec<String>, SecretError> {
        let index = self.index()?;
        Ok(index
            .into_keys()
            .filter(|n| match pattern.map(str::trim).filter(|p| !p.is_empty()) {
                None => true,
                Some(p) => match p.strip_suffix('*') {
                    Some(prefix) => n.starts_with(prefix),
                    None => n.contains(p),
                },
            })
            .collect())
    }

    /// A redactor over every current value. A value that is a JSON record (an MCP
    /// server's OAuth login) has the strings inside it redacted too: a server echoing its
    /// access token shows the token, not the record around it.
    pub fn redactor(&self) -> Result<Redactor, SecretError> {
        let mut pairs = Vec::new();
        for name in self.list(None)? {
            if let Some(v) = self.get(&name)? {
                if let Ok(record) = serde_json::from_str::<serde_json::Value>(&v) {
                    inner_strings(&record, &name, &mut pairs);
                }
                pairs.push((name, v));
            }
        }
        Ok(Redactor::new(pairs))
    }

    fn key(&self) -> Result<[u8; 32], SecretError> {
        let path = self.dir.join("vault.key");
        match std::fs::read(&path) {
            Ok(bytes) => bytes
                .try_into()
                .map_err(|_| SecretError::Vault(path.clone())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let mut key = [0u8; 32];
                getrandom::fill(&mut key)
                    .map_err(|e| io(&path)(std::io::Error::other(e.to_string())))?;
                write_private(&path, &key)?;
                Ok(key)
            }
            Err(e) => Err(io(&path)(e)),
        }
    }

    fn read_vault(&self) -> Result<BTreeMap<String, String>, SecretError> {
        let path = self.dir.join("vault.bin");
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
            Err(e) => return Err(io(&path)(e)),
        };
        if bytes.len() < 24 {
            return Err(SecretError::Vault(path));
        }
        let (nonce, sealed) = bytes.split_at(24);
        let cipher = XChaCha20Poly1305::new((&self.key()?).into());
        let plain = cipher
            .decrypt(XNonce::from_slice(nonce), sealed)
            .map_err(|_| SecretError::Vault(path.clone()))?;
        serde_json::from_slice(&plain).map_err(|_| SecretError::Vault(path))
    }

    fn write_vault(&self, vault: &BTreeMap<String, String>) -> Result<(), SecretError> {
        let path = self.dir.join("vault.bin");
        let cipher = XChaCha20Poly1305::new((&self.key()?).into());
        let mut nonce = [0u8; 24];
        getrandom::fill(&mut nonce).map_err(|e| io(&path)(std::io::Error::other(e.to_string())))?;
        let plain = serde_json::to_vec(vault).unwrap_or_default();
        let sealed = cipher
            .encrypt(XNonce::from_slice(&nonce), plain.as_slice())
            .map_err(|_| SecretError::Vault(path.clone()))?;
        let mut out = nonce.to_vec();
        out.extend(sealed);
        write_private(&path, &out)
    }
}

/// Writes a file readable by the user only, atomically (temp file, then rename).
fn write_private(path: &Path, bytes: &[u8]) -> Result<(), SecretError> {
    // A name of its own per write: two processes never share a temporary file.
    let mut nonce = [0u8; 8];
    let _ = getrandom::fill(&mut nonce);
    let tmp = path.with_extension(format!(
        "tmp.{}.{}",
        std::process::id(),
        nonce.iter().map(|b| format!("{b:02x}")).collect::<String>()
    ));
    std::fs::write(&tmp, bytes).map_err(io(&tmp))?;
    restrict(&tmp, 0o600);
    std::fs::rename(&tmp, path).map_err(io(path))
}

#[cfg(unix)]
fn restrict(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode));
}

#[cfg(not(unix))]
fn restrict(_path: &Path, _mode: u32) {}

/// The credentials inside a JSON record (`access_token`, `refresh_token`, `id_token`,
/// `client_secret`, `private_key` at any depth), named after the secret that holds them. Only these: the
/// record's other strings (its issuer URL, scopes) are not secret, and redacting them
/// would blank out ordinary text.
fn inner_strings(value: &serde_json::Value, name: &str, out: &mut Vec<(String, String)>) {
    const CREDENTIALS: [&str; 5] = [
        "access_token",
        "refresh_token",
        "id_token",
        "client_secret",
        "private_key",
    ];
    match value {
        serde_json::Value::Array(items) => {
            for v in items {
                inner_strings(v, name, out);
            }
        }
        serde_json::Value::Object(map) => {
            for (key, v) in map {
                match v {
                    serde_json::Value::String(s) if CREDENTIALS.contains(&key.as_str()) => {
                        out.push((name.to_string(), s.clone()));
                    }
                    _ => inner_strings(v, name, out),
                }
            }
        }
        _ => {}
    }
}

/// Replaces secret values in text with `[secret:NAME]`.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    /// Longest values first, so a value containing another is replaced whole.
    pairs: Vec<(String, String)>,
}

impl Redactor {
    pub fn new(pairs: Vec<(String, String)>) -> Redactor {
        let mut pairs: Vec<(String, String)> = pairs
            .into_iter()
            .filter(|(_, v)| v.len() >= MIN_REDACT)
            .collect();
        pairs.sort_by_key(|p| std::cmp::Reverse(p.1.len()));
        Redactor { pairs }
    }

    pub fn redact(&self, text: &str) -> String {
        let mut out = text.to_string();
        for (name, value) in &self.pairs {
            if out.contains(value.as_str()) {
                out = out.replace(value.as_str(), &format!("[secret:{name}]"));
            }
        }
        out
    }

    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hold_is_exclusive_until_dropped_and_names_are_checked() {
        let dir = tempfile::tempdir().unwrap();
        let secrets = Secrets::open(dir.path()).unwrap();
        let wait = std::time::Duration::from_millis(100);
        let first = secrets.hold("mcp-oauth.docs", wait).unwrap();
        // Another open of the lock (another process's, or another caller's here) waits,
        // then gives up.
        assert!(matches!(
            secrets.hold("mcp-oauth.docs", wait),
            Err(SecretError::Busy(..))
        ));
        // Another login is not held up.
        drop(secrets.hold("mcp-oauth.other", wait).unwrap());
        drop(first);
        drop(secrets.hold("mcp-oauth.docs", wait).unwrap());
        assert!(matches!(
            secrets.hold("../escape", wait),
            Err(SecretError::BadName(_))
        ));
    }

    #[test]
    fn credentials_inside_a_json_record_are_redacted_and_the_rest_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let s = file_store(dir.path());
        std::fs::create_dir_all(dir.path().join("secrets")).unwrap();
        let record = serde_json::json!({
            "credentials": {"client_id": "skald-client", "token_response": {
                "access_token": "at-1234567890", "refresh_token": "rt-0987654321",
                "token_type": "Bearer"}},
            "client_secret": "cs-abcdef",
            "challenge": "Bearer scope=\"mcp:basic\""
        });
        s.set("mcp-oauth.docs", &record.to_string()).unwrap();
        let r = s.redactor().unwrap();
        let out =
            r.redact("sent at-1234567890, rt-0987654321 and cs-abcdef as skald-client Bearer");
        assert_eq!(
            out,
            "sent [secret:mcp-oauth.docs], [secret:mcp-oauth.docs] and [secret:mcp-oauth.docs] as skald-client Bearer"
        );
    }

    fn file_store(dir: &Path) -> Secrets {
        Secrets {
            dir: dir.join("secrets"),
            backend: Backend::File,
            lock: Mutex::new(()),
        }
    }

    #[test]
    fn file_vault_round_trip_and_never_plain() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("secrets")).unwrap();
        let s = file_store(dir.path());
        assert_eq!(
            s.set("GITHUB_TOKEN", "ghp_abcdef123456").unwrap(),
            Some(Backend::File)
        );
        s.set("other.key", "hunter2-long").unwrap();
        assert_eq!(
            s.get("GITHUB_TOKEN").unwrap().as_deref(),
            Some("ghp_abcdef123456")
        );
        assert_eq!(s.list(None).unwrap(), ["GITHUB_TOKEN", "other.key"]);
        assert_eq!(s.list(Some("GIT*")).unwrap(), ["GITHUB_TOKEN"]);
        assert_eq!(s.list(Some("key")).unwrap(), ["other.key"]);
        // Nothing on disk holds a value in the clear.
        for entry in std::fs::read_dir(dir.path().join("secrets")).unwrap() {
            let bytes = std::fs::read(entry.unwrap().path()).unwrap();
            let text = String::from_utf8_lossy(&bytes);
            assert!(!text.contains("ghp_abcdef123456") && !text.contains("hunter2"));
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.path().join("secrets/vault.bin"))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o077, 0, "the vault is the user's only");
        }
        // A reopened store reads them back; an empty value deletes.
        let again = file_store(dir.path());
        assert_eq!(
            again.get("other.key").unwrap().as_deref(),
            Some("hunter2-long")
        );
        assert_eq!(again.set("other.key", "").unwrap(), None);
        assert_eq!(again.get("other.key").unwrap(), None);
        assert!(!again.delete("other.key").unwrap());
        assert!(matches!(
            again.set("bad name", "x"),
            Err(SecretError::BadName(_))
        ));
        // A damaged vault is reported, not read as empty.
        std::fs::write(
            dir.path().join("secrets/vault.bin"),
            b"0123456789012345678901234567890",
        )
        .unwrap();
        assert!(matches!(
            again.get("GITHUB_TOKEN"),
            Err(SecretError::Vault(_))
        ));
    }

    #[test]
    fn redaction_replaces_values_longest_first() {
        let r = Redactor::new(vec![
            ("SHORT".into(), "abc".into()),
            ("TOKEN".into(), "tok-123456".into()),
            ("LONG".into(), "tok-123456-extended".into()),
        ]);
        assert_eq!(
            r.redact("a tok-123456-extended and tok-123456, abc"),
            "a [secret:LONG] and [secret:TOKEN], abc"
        );
        assert!(Redactor::default().is_empty());
    }
}
