//! get_ast_outline's cache: each file's outline, kept in `<data dir>/cache/outline.sqlite`
//! under the file's path with the stamp it had when it was parsed (size, modification and
//! change times, inode). An unchanged file costs a `stat` and a lookup instead of a parse;
//! agents outline the same tree many times a session, and across sessions.
//!
//! A file changed within the last two seconds is parsed but not kept: a second write in
//! the same timestamp tick, of the same size, would otherwise leave its old outline behind
//! (git's "racy" rule). Outlines made by another build of Skald are dropped when the cache
//! is opened, since a new build may outline differently. The cache only saves time: when it
//! cannot be opened, read or written, outlines are made as if it were not there.

use rusqlite::{Connection, OptionalExtension, params};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How recently changed a file may be and still be kept.
const SETTLE: Duration = Duration::from_secs(2);

/// Rows kept at most; past it the oldest-written half goes. Outlines average a few
/// hundred bytes: this is tens of megabytes, about ten times a large monorepo.
const MAX_ROWS: i64 = 400_000;

/// A file's outline, or why it has none (a parse error is an outline's answer too).
pub(crate) type Outcome = Result<String, String>;

/// What a file's metadata says about its content: when any part differs, so may the content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp {
    size: i64,
    mtime_ns: i64,
    ctime_ns: i64,
    ino: i64,
}

fn nanos(t: SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_nanos()).unwrap_or(i64::MAX),
        Err(e) => -i64::try_from(e.duration().as_nanos()).unwrap_or(i64::MAX),
    }
}

impl Stamp {
    pub(crate) fn of(meta: &std::fs::Metadata) -> Stamp {
        let mtime_ns = meta.modified().map(nanos).unwrap_or(0);
        #[cfg(unix)]
        let (ctime_ns, ino) = {
            use std::os::unix::fs::MetadataExt;
            (
                meta.ctime()
                    .saturating_mul(1_000_000_000)
                    .saturating_add(meta.ctime_nsec()),
                meta.ino() as i64,
            )
        };
        #[cfg(not(unix))]
        let (ctime_ns, ino) = (mtime_ns, 0);
        Stamp {
            size: i64::try_from(meta.len()).unwrap_or(i64::MAX),
            mtime_ns,
            ctime_ns,
            ino,
        }
    }

    /// Whether the file last changed at least `settle` before `now`.
    fn settled(&self, now: SystemTime, settle: Duration) -> bool {
        let limit = nanos(now).saturating_sub(i64::try_from(settle.as_nanos()).unwrap_or(0));
        self.mtime_ns <= limit && self.ctime_ns <= limit
    }
}

/// One file's outline as parsed, to be kept.
pub(crate) struct Fresh {
    pub path: PathBuf,
    pub stamp: Stamp,
    pub outcome: Outcome,
}

impl Fresh {
    /// What a parse of `path`, read at `read_at` with metadata `stamp`, gives to keep:
    /// nothing if the file changed too recently to trust the stamp.
    pub(crate) fn new(
        cache: &OutlineCache,
        path: &Path,
        stamp: Stamp,
        read_at: SystemTime,
        outcome: &Outcome,
    ) -> Option<Fresh> {
        stamp.settled(read_at, cache.settle).then(|| Fresh {
            path: path.to_path_buf(),
            stamp,
            outcome: outcome.clone(),
        })
    }
}

pub(crate) struct OutlineCache {
    conn: Mutex<Connection>,
    settle: Duration,
}

/// The caches opened in this process, by folder: each is opened once and shared by every
/// call (and every engine) using that folder. A folder whose cache could not be opened is
/// remembered too, so that the failure is logged once, not on every call.
type Opened = Mutex<HashMap<PathBuf, Option<Arc<OutlineCache>>>>;

fn opened() -> &'static Opened {
    static OPENED: OnceLock<Opened> = OnceLock::new();
    OPENED.get_or_init(Default::default)
}

/// The cache in `dir`, opened (and created) on first use; `None` when it cannot be.
pub(crate) fn open(dir: &Path) -> Option<Arc<OutlineCache>> {
    open_with(dir, SETTLE)
}

fn open_with(dir: &Path, settle: Duration) -> Option<Arc<OutlineCache>> {
    let mut map = opened().lock().unwrap_or_else(|p| p.into_inner());
    if let Some(c) = map.get(dir) {
        return c.clone();
    }
    let cache = match OutlineCache::create(dir, settle) {
        Ok(c) => Some(Arc::new(c)),
        Err(e) => {
            tracing::warn!(dir = %dir.display(), "outline cache unavailable, outlines are made without it: {e}");
            None
        }
    };
    map.insert(dir.to_path_buf(), cache.clone());
    cache
}

/// Which build of Skald wrote the outlines: the version, and the size and time of the
/// running executable (so that a rebuild with the same version counts as another build).
fn build_id() -> String {
    let exe = std::env::current_exe()
        .and_then(std::fs::metadata)
        .map(|m| format!("{} {}", m.len(), m.modified().map(nanos).unwrap_or(0)))
        .unwrap_or_default();
    format!("{} {exe}", env!("CARGO_PKG_VERSION"))
}

/// Makes `dir` (0700) and `file` in it (0600) before SQLite opens it, as the data
/// directory's other files are: SQLite gives its journal files the database's mode.
fn private(dir: &Path, file: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)?;
    let mut options = std::fs::OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(file).map(drop)
}

fn path_key(path: &Path) -> Vec<u8> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        path.as_os_str().as_bytes().to_vec()
    }
    #[cfg(not(unix))]
    {
        path.to_string_lossy().into_owned().into_bytes()
    }
}

fn key_path(key: Vec<u8>) -> PathBuf {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStringExt;
        PathBuf::from(std::ffi::OsString::from_vec(key))
    }
    #[cfg(not(unix))]
    {
        PathBuf::from(String::from_utf8_lossy(&key).into_owned())
    }
}

/// The stamp and outcome of a row whose `size, mtime, ctime, ino, ok, text` columns start
/// at column `at`.
fn kept_at(r: &rusqlite::Row<'_>, at: usize) -> rusqlite::Result<(Stamp, Outcome)> {
    let stamp = Stamp {
        size: r.get(at)?,
        mtime_ns: r.get(at + 1)?,
        ctime_ns: r.get(at + 2)?,
        ino: r.get(at + 3)?,
    };
    let text: String = r.get(at + 5)?;
    let outcome = if r.get(at + 4)? { Ok(text) } else { Err(text) };
    Ok((stamp, outcome))
}

impl OutlineCache {
    fn create(dir: &Path, settle: Duration) -> rusqlite::Result<OutlineCache> {
        let file = dir.join("outline.sqlite");
        private(dir, &file).map_err(|e| {
            rusqlite::Error::InvalidPath(PathBuf::from(format!("{}: {e}", dir.display())))
        })?;
        let conn = Connection::open(&file)?;
        // Another Skald process may be writing: wait a little, then go without the cache.
        conn.busy_timeout(Duration::from_millis(500))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
             CREATE TABLE IF NOT EXISTS outlines (
                 path BLOB NOT NULL UNIQUE,
                 size INTEGER NOT NULL,
                 mtime INTEGER NOT NULL,
                 ctime INTEGER NOT NULL,
                 ino INTEGER NOT NULL,
                 ok INTEGER NOT NULL,
                 text TEXT NOT NULL
             );",
        )?;
        let build = build_id();
        let stored: Option<String> = conn
            .query_row("SELECT value FROM meta WHERE key = 'build'", [], |r| {
                r.get(0)
            })
            .optional()?;
        if stored.as_deref() != Some(build.as_str()) {
            conn.execute_batch("DELETE FROM outlines")?;
            conn.execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES ('build', ?1)",
                [&build],
            )?;
        }
        Ok(OutlineCache {
            conn: Mutex::new(conn),
            settle,
        })
    }

    fn conn(&self) -> std::sync::MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The kept outline of `path`, if it was made when the file had this stamp.
    pub(crate) fn get(&self, path: &Path, stamp: &Stamp) -> Option<Outcome> {
        let row = self
            .conn()
            .query_row(
                "SELECT size, mtime, ctime, ino, ok, text FROM outlines WHERE path = ?1",
                [path_key(path)],
                |r| kept_at(r, 0),
            )
            .optional();
        match row {
            Ok(Some((kept, outcome))) if kept == *stamp => Some(outcome),
            Ok(_) => None,
            Err(e) => {
                tracing::debug!("outline cache read failed: {e}");
                None
            }
        }
    }

    /// Every kept outline of a file under `root`, with its stamp: read once before a
    /// directory's files are outlined.
    pub(crate) fn under(&self, root: &Path) -> HashMap<PathBuf, (Stamp, Outcome)> {
        let mut low = path_key(root);
        if low.last() != Some(&b'/') {
            low.push(b'/');
        }
        // Every key starting with `low` sorts below `low` with its `/` raised by one.
        let mut high = low.clone();
        if let Some(last) = high.last_mut() {
            *last += 1;
        }
        let read = || -> rusqlite::Result<HashMap<PathBuf, (Stamp, Outcome)>> {
            let conn = self.conn();
            let mut stmt = conn.prepare(
                "SELECT path, size, mtime, ctime, ino, ok, text FROM outlines
                 WHERE path >= ?1 AND path < ?2",
            )?;
            let rows = stmt.query_map(params![low, high], |r| {
                Ok((key_path(r.get(0)?), kept_at(r, 1)?))
            })?;
            rows.collect()
        };
        read().unwrap_or_else(|e| {
            tracing::debug!("outline cache read failed: {e}");
            HashMap::new()
        })
    }

    /// Keeps `fresh` outlines, replacing what was kept for those paths.
    pub(crate) fn put(&self, fresh: &[Fresh]) {
        if fresh.is_empty() {
            return;
        }
        let write = || -> rusqlite::Result<()> {
            let mut conn = self.conn();
            let tx = conn.transaction()?;
            {
                let mut stmt = tx.prepare(
                    "INSERT OR REPLACE INTO outlines (path, size, mtime, ctime, ino, ok, text)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                )?;
                for f in fresh {
                    let (ok, text) = match &f.outcome {
                        Ok(t) => (true, t),
                        Err(t) => (false, t),
                    };
                    stmt.execute(params![
                        path_key(&f.path),
                        f.stamp.size,
                        f.stamp.mtime_ns,
                        f.stamp.ctime_ns,
                        f.stamp.ino,
                        ok,
                        text
                    ])?;
                }
            }
            let rows: i64 = tx.query_row("SELECT COUNT(*) FROM outlines", [], |r| r.get(0))?;
            if rows > MAX_ROWS {
                tx.execute(
                    "DELETE FROM outlines WHERE rowid IN
                     (SELECT rowid FROM outlines ORDER BY rowid LIMIT ?1)",
                    [rows - MAX_ROWS / 2],
                )?;
            }
            tx.commit()
        };
        if let Err(e) = write() {
            tracing::debug!("outline cache write failed: {e}");
        }
    }
}

#[cfg(test)]
pub(crate) fn open_for_test(dir: &Path) -> Option<Arc<OutlineCache>> {
    open_with(dir, Duration::ZERO)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_outline_is_found_only_with_the_same_stamp_and_under_its_folders() {
        let d = tempfile::tempdir().unwrap();
        let cache = open_for_test(&d.path().join("cache")).unwrap();
        let file = d.path().join("src/a.py");
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, "def f():\n    pass\n").unwrap();
        let stamp = Stamp::of(&std::fs::metadata(&file).unwrap());
        let now = SystemTime::now();
        let fresh = Fresh::new(&cache, &file, stamp, now, &Ok("1-2 | function: f\n".into()));
        cache.put(&fresh.into_iter().collect::<Vec<_>>());
        assert_eq!(
            cache.get(&file, &stamp),
            Some(Ok("1-2 | function: f\n".into()))
        );
        let other = Stamp {
            size: stamp.size + 1,
            ..stamp
        };
        assert_eq!(cache.get(&file, &other), None);
        assert_eq!(cache.under(d.path()).len(), 1);
        assert_eq!(cache.under(&d.path().join("src")).len(), 1);
        assert!(cache.under(&d.path().join("sr")).is_empty());
        assert!(cache.under(&d.path().join("src/a")).is_empty());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&d.path().join("cache")), 0o700);
            assert_eq!(mode(&d.path().join("cache/outline.sqlite")), 0o600);
        }
    }

    #[test]
    fn a_file_changed_just_now_is_not_kept() {
        let d = tempfile::tempdir().unwrap();
        let cache = open(&d.path().join("cache")).unwrap();
        let file = d.path().join("a.py");
        std::fs::write(&file, "x = 1\n").unwrap();
        let stamp = Stamp::of(&std::fs::metadata(&file).unwrap());
        assert!(Fresh::new(&cache, &file, stamp, SystemTime::now(), &Ok(String::new())).is_none());
        let later = SystemTime::now() + Duration::from_secs(3);
        assert!(Fresh::new(&cache, &file, stamp, later, &Ok(String::new())).is_some());
    }

    #[test]
    fn another_build_drops_what_was_kept() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("cache");
        let cache = open_for_test(&dir).unwrap();
        let file = d.path().join("a.py");
        std::fs::write(&file, "x = 1\n").unwrap();
        let stamp = Stamp::of(&std::fs::metadata(&file).unwrap());
        let fresh = Fresh::new(&cache, &file, stamp, SystemTime::now(), &Ok("kept".into()));
        cache.put(&fresh.into_iter().collect::<Vec<_>>());
        cache
            .conn()
            .execute(
                "UPDATE meta SET value = 'an older build' WHERE key = 'build'",
                [],
            )
            .unwrap();
        let reopened = OutlineCache::create(&dir, Duration::ZERO).unwrap();
        assert_eq!(reopened.get(&file, &stamp), None);
    }
}
