//! Many new files at once — the first checkpoint of a folder, the base of a new worktree:
//! their blobs are written to memory (libgit2's mempack) and then to the object store as
//! one pack, instead of one loose object file each. Making ten thousand small files is
//! what such a checkpoint spent most of its time on; a pack is two.
//!
//! Crash-safe as loose objects are: the indexer writes a pack under a temporary name and
//! renames it with its index, and no tree, commit or index entry names a blob before its
//! pack is in place (the caller finishes the bulk first).

use crate::Result;
use git2::{Buf, Mempack, Odb, Oid, Repository};

use std::io::Write;

/// Below this many files a folder's blobs are written loose, as every later checkpoint's.
pub(crate) const FROM_FILES: usize = 64;
/// Files larger than this are written loose.
const PACKED_UP_TO: usize = 16 << 10;
/// What is kept in memory before it is written out as a pack.
const FLUSH_BYTES: usize = 64 << 20;

/// Blobs held in memory by a second handle on the shadow repository (`repo`), whose
/// object database (`odb`) alone has the in-memory backend.
pub(crate) struct Bulk<'a> {
    repo: &'a Repository,
    mempack: Mempack<'a>,
    pending_bytes: usize,
    /// The blobs held in memory, to pack: mempack's own dump packs only what commits
    /// reach.
    pending: Vec<Oid>,
}

impl<'a> Bulk<'a> {
    pub(crate) fn new(repo: &'a Repository, odb: &'a Odb<'a>) -> Result<Bulk<'a>> {
        // Above the loose and pack backends: new objects go to memory; ones already in
        // the store are found there and not written again.
        let mempack = odb.add_new_mempack_backend(1000)?;
        Ok(Bulk {
            repo,
            mempack,
            pending_bytes: 0,
            pending: Vec::new(),
        })
    }

    /// Writes `content` as a blob (into memory); once enough is held, it goes to `store`
    /// (the shadow repository's main handle) as a pack.
    pub(crate) fn blob(&mut self, content: &[u8], store: &Repository) -> Result<Oid> {
        // A large file is one file either way, and the pack builder would look for deltas
        // against it: written loose.
        if content.len() > PACKED_UP_TO {
            return Ok(store.blob(content)?);
        }
        let id = self.repo.blob(content)?;
        self.pending.push(id);
        self.pending_bytes += content.len();
        if self.pending_bytes >= FLUSH_BYTES {
            self.flush(store)?;
        }
        Ok(id)
    }

    /// Writes what is held as a pack into `store`'s objects.
    fn flush(&mut self, store: &Repository) -> Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let mut builder = self.repo.packbuilder()?;
        // One thread: the checkpoint already runs beside the agent's work.
        builder.set_threads(1);
        for id in &self.pending {
            builder.insert_object(*id, None)?;
        }
        let mut pack = Buf::new();
        builder.write_buf(&mut pack)?;
        let odb = store.odb()?;
        let mut writer = odb.packwriter()?;
        writer
            .write_all(&pack)
            .map_err(|e| git2::Error::from_str(&format!("cannot write a pack: {e}")))?;
        writer.commit()?;
        // The store's handle reads its pack folder again, so the trees written next find
        // the blobs they name.
        odb.refresh()?;
        self.mempack.reset()?;
        self.pending.clear();
        self.pending_bytes = 0;
        Ok(())
    }

    /// Writes the rest out; every blob written is then in `store`.
    pub(crate) fn finish(mut self, store: &Repository) -> Result<()> {
        self.flush(store)
    }
}
