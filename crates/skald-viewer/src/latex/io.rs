//! The I/O every TeX engine of a build goes through (`IoProvider` and `DriverHooks`):
//! the only way the engines reach files. Names are judged by `policy` first; what is
//! written stays in memory until the driver puts it in the build's work folder; what is
//! read comes from memory, the document's folder (as the policy allows), the last build's
//! intermediates, then the bundle. It also keeps what the driver needs: how each file was
//! used (for reruns), the document's own inputs, and every refused name.

use super::policy::{self, ReadPolicy, Refusal};
use std::cell::{Cell, RefCell};
use std::collections::{BTreeSet, HashMap};
use std::io::{BufReader, Cursor, Write};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use tectonic_bridge_core::DriverHooks;
use tectonic_bundles::Bundle;
use tectonic_errors::anyhow::anyhow;
use tectonic_io_base::digest::DigestData;
use tectonic_io_base::{InputHandle, InputOrigin, IoProvider, OpenResult, OutputHandle};
use tectonic_status_base::{MessageKind, StatusBackend};

/// All a build may write, together (a runaway `\write` loop ends here, not in swap).
pub(crate) const OUTPUT_LIMIT: usize = 1 << 30;

/// At most this many refusals are kept (one document could probe thousands of names).
const MAX_REFUSALS: usize = 50;

/// How a file was used during the passes so far (as tectonic's driver tracks it): a file
/// read and then written with other content means TeX must run again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Access {
    Read,
    Written,
    ReadThenWritten,
    WrittenThenRead,
}

#[derive(Debug, Clone)]
struct Usage {
    access: Access,
    /// The content when first read in this pass.
    read: Option<DigestData>,
    /// The content when last written.
    written: Option<DigestData>,
}

type Files = Rc<RefCell<HashMap<String, Vec<u8>>>>;

/// An output file being written: kept in memory, stored under its name when closed.
struct MemWriter {
    files: Files,
    name: String,
    data: Vec<u8>,
    total: Rc<Cell<usize>>,
}

impl Write for MemWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let total = self.total.get().saturating_add(buf.len());
        if total > OUTPUT_LIMIT {
            return Err(std::io::Error::other(format!(
                "the build wrote more than {} MB",
                OUTPUT_LIMIT >> 20
            )));
        }
        self.total.set(total);
        self.data.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for MemWriter {
    fn drop(&mut self) {
        self.files.borrow_mut().insert(
            std::mem::take(&mut self.name),
            std::mem::take(&mut self.data),
        );
    }
}

/// Where compiled format files are kept: `<dir>/<bundle digest>-<stem>-<serial>.fmt`, the
/// names tectonic's own cache uses.
pub(crate) struct FormatCache {
    dir: PathBuf,
    digest: DigestData,
}

impl FormatCache {
    fn path(&self, name: &str) -> PathBuf {
        let stem = name.split('.').next().unwrap_or(name);
        self.dir.join(format!(
            "{}-{stem}-{}.fmt",
            self.digest,
            tectonic_engine_xetex::FORMAT_SERIAL
        ))
    }

    pub fn exists(&self, name: &str) -> bool {
        self.path(name).is_file()
    }

    /// Written to a temporary name and renamed: two builds making it at once both
    /// leave a whole file.
    pub fn store(&self, name: &str, data: &[u8]) -> std::io::Result<()> {
        std::fs::create_dir_all(&self.dir)?;
        let path = self.path(name);
        let tmp = path.with_extension(format!("fmt.tmp-{}", std::process::id()));
        std::fs::write(&tmp, data)?;
        std::fs::rename(&tmp, &path).inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })
    }
}

/// The build's I/O.
pub(crate) struct BuildIo {
    policy: ReadPolicy,
    primary: PathBuf,
    previous: PathBuf,
    bundle: Box<dyn Bundle>,
    pub formats: FormatCache,
    files: Files,
    total: Rc<Cell<usize>>,
    usage: HashMap<String, Usage>,
    /// While a format file is made: the primary input is this text, and neither the
    /// document's folder nor the last build's files are read.
    format_primary: Option<String>,
    inputs: BTreeSet<PathBuf>,
    refusals: Vec<Refusal>,
}

impl BuildIo {
    pub fn new(
        policy: ReadPolicy,
        primary: PathBuf,
        previous: PathBuf,
        mut bundle: Box<dyn Bundle>,
        formats_dir: PathBuf,
    ) -> Result<BuildIo, String> {
        let digest = bundle
            .get_digest()
            .map_err(|e| format!("the TeX bundle has no digest: {e}"))?;
        Ok(BuildIo {
            policy,
            primary,
            previous,
            bundle,
            formats: FormatCache {
                dir: formats_dir,
                digest,
            },
            files: Rc::new(RefCell::new(HashMap::new())),
            total: Rc::new(Cell::new(0)),
            usage: HashMap::new(),
            format_primary: None,
            inputs: BTreeSet::new(),
            refusals: Vec::new(),
        })
    }

    pub fn enter_format_mode(&mut self, primary_text: String) {
        self.format_primary = Some(primary_text);
    }

    pub fn leave_format_mode(&mut self) {
        self.format_primary = None;
    }

    /// The contents of an output file, if it was written.
    pub fn file(&self, name: &str) -> Option<Vec<u8>> {
        self.files.borrow().get(name).cloned()
    }

    pub fn file_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.files.borrow().keys().cloned().collect();
        names.sort();
        names
    }

    /// Writes `data` as an output of this build, as if TeX had.
    pub fn put(&mut self, name: &str, data: Vec<u8>) {
        self.files.borrow_mut().insert(name.to_string(), data);
    }

    /// A file the last successful build left, if it kept one under that name.
    pub fn previous_file(&self, name: &str) -> Option<Vec<u8>> {
        policy::resolve_own(&self.previous, name).and_then(|p| std::fs::read(p).ok())
    }

    /// A file of the document's folder as TeX or BibTeX would open it — the policy
    /// applies, and it becomes an input of the build (a change rebuilds) — for deciding
    /// whether BibTeX must run. `None` when it is not there or may not be read.
    pub fn read_input(&mut self, name: &str) -> Option<Vec<u8>> {
        policy::check_read_name(name).ok()?;
        let path = self.policy.resolve(name).ok()??;
        let data = std::fs::read(&path).ok()?;
        self.inputs.insert(path);
        Some(data)
    }

    /// The bundle's digest: its files (BibTeX's styles among them) change only with it.
    pub fn bundle_digest(&self) -> String {
        self.formats.digest.to_string()
    }

    pub fn remove_file(&mut self, name: &str) {
        self.files.borrow_mut().remove(name);
    }

    /// Forgets everything written and read (after a format file was made).
    pub fn clear(&mut self) {
        self.files.borrow_mut().clear();
        self.usage.clear();
    }

    /// A new pass starts: what matters is what it reads.
    pub fn forget_reads(&mut self) {
        for u in self.usage.values_mut() {
            u.read = None;
        }
    }

    /// A file the last pass read and then wrote with different content, if any.
    pub fn changed_file(&self) -> Option<String> {
        let mut names: Vec<&String> = self.usage.keys().collect();
        names.sort();
        names
            .into_iter()
            .find(|name| {
                let u = &self.usage[name.as_str()];
                u.access == Access::ReadThenWritten
                    && match (&u.read, &u.written) {
                        (Some(r), Some(w)) => r != w,
                        _ => true,
                    }
            })
            .cloned()
    }

    /// The document's own files the build read (the main file included).
    pub fn inputs(&self) -> Vec<PathBuf> {
        let mut out = vec![self.primary.clone()];
        out.extend(self.inputs.iter().filter(|p| **p != self.primary).cloned());
        out
    }

    pub fn refusals(&self) -> &[Refusal] {
        &self.refusals
    }

    /// Writes every output into `work` (names were checked when they were opened, and
    /// are checked again here).
    pub fn write_outputs(&self, work: &Path) -> std::io::Result<()> {
        for (name, data) in self.files.borrow().iter() {
            if name.is_empty() || data.is_empty() || policy::check_name(name).is_err() {
                continue;
            }
            let path = work.join(name);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(&path, data)?;
        }
        Ok(())
    }

    fn refuse<T>(&mut self, name: &str, write: bool, reason: policy::Reason) -> OpenResult<T> {
        // Making the format file reads the bundle's own files, which probe a few system
        // paths (`/dev/null`): as in tectonic, where no file system is read then, they
        // are simply not there, and the document is not to blame.
        if self.format_primary.is_some() {
            return OpenResult::NotAvailable;
        }
        let refusal = Refusal {
            name: name.to_string(),
            write,
            reason,
        };
        let message = refusal.message();
        if self.refusals.len() < MAX_REFUSALS && !self.refusals.iter().any(|r| r.name == name) {
            self.refusals.push(refusal);
        }
        OpenResult::Err(anyhow!(message))
    }

    fn note_read(&mut self, name: &str, found: bool) {
        match self.usage.get_mut(name) {
            Some(u) => {
                if u.access == Access::Written {
                    u.access = Access::WrittenThenRead;
                }
            }
            None => {
                // A file that is not there reads as an empty one: if a pass then writes
                // it, its content changed.
                let read = (!found).then(DigestData::of_nothing);
                self.usage.insert(
                    name.to_string(),
                    Usage {
                        access: Access::Read,
                        read,
                        written: None,
                    },
                );
            }
        }
    }

    fn open_file(name: &str, path: &Path, origin: InputOrigin) -> OpenResult<InputHandle> {
        match std::fs::File::open(path) {
            Ok(f) => OpenResult::Ok(InputHandle::new(name, BufReader::new(f), origin)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => OpenResult::NotAvailable,
            Err(e) => OpenResult::Err(e.into()),
        }
    }

    fn open_input(
        &mut self,
        name: &str,
        status: &mut dyn StatusBackend,
    ) -> OpenResult<(InputHandle, Option<PathBuf>)> {
        if let Err(reason) = policy::check_read_name(name) {
            return self.refuse(name, false, reason);
        }
        if let Some(data) = self.files.borrow().get(name) {
            return OpenResult::Ok((
                InputHandle::new(name, Cursor::new(data.clone()), InputOrigin::Other),
                None,
            ));
        }
        if self.format_primary.is_none() {
            match self.policy.resolve(name) {
                Err(reason) => return self.refuse(name, false, reason),
                Ok(Some(path)) => {
                    return match Self::open_file(name, &path, InputOrigin::Filesystem) {
                        OpenResult::Ok(h) => {
                            self.inputs.insert(path.clone());
                            OpenResult::Ok((h, Some(path)))
                        }
                        OpenResult::NotAvailable => OpenResult::NotAvailable,
                        OpenResult::Err(e) => OpenResult::Err(e),
                    };
                }
                Ok(None) => {}
            }
            if let Some(path) = policy::resolve_own(&self.previous, name) {
                match Self::open_file(name, &path, InputOrigin::Other) {
                    OpenResult::NotAvailable => {}
                    OpenResult::Ok(h) => return OpenResult::Ok((h, None)),
                    OpenResult::Err(e) => return OpenResult::Err(e),
                }
            }
        }
        self.bundle.input_open_name_with_abspath(name, status)
    }
}

impl IoProvider for BuildIo {
    fn output_open_name(&mut self, name: &str) -> OpenResult<OutputHandle> {
        if name.is_empty() {
            return OpenResult::NotAvailable;
        }
        if let Err(reason) = policy::check_name(name) {
            return self.refuse(name, true, reason);
        }
        // Open means empty: a reader meanwhile sees no content, as in tectonic's memory.
        self.files.borrow_mut().insert(name.to_string(), Vec::new());
        match self.usage.get_mut(name) {
            Some(u) => {
                if u.access == Access::Read {
                    u.access = Access::ReadThenWritten;
                }
            }
            None => {
                self.usage.insert(
                    name.to_string(),
                    Usage {
                        access: Access::Written,
                        read: None,
                        written: None,
                    },
                );
            }
        }
        OpenResult::Ok(OutputHandle::new(
            name,
            MemWriter {
                files: self.files.clone(),
                name: name.to_string(),
                data: Vec::new(),
                total: self.total.clone(),
            },
        ))
    }

    fn output_open_stdout(&mut self) -> OpenResult<OutputHandle> {
        // What TeX prints on the terminal is in its log as well.
        OpenResult::Ok(OutputHandle::new("", std::io::sink()))
    }

    fn input_open_name(
        &mut self,
        name: &str,
        status: &mut dyn StatusBackend,
    ) -> OpenResult<InputHandle> {
        match self.input_open_name_with_abspath(name, status) {
            OpenResult::Ok((h, _)) => OpenResult::Ok(h),
            OpenResult::NotAvailable => OpenResult::NotAvailable,
            OpenResult::Err(e) => OpenResult::Err(e),
        }
    }

    fn input_open_name_with_abspath(
        &mut self,
        name: &str,
        status: &mut dyn StatusBackend,
    ) -> OpenResult<(InputHandle, Option<PathBuf>)> {
        if name.is_empty() {
            return OpenResult::NotAvailable;
        }
        let r = self.open_input(name, status);
        match &r {
            OpenResult::Ok(_) => self.note_read(name, true),
            OpenResult::NotAvailable => self.note_read(name, false),
            OpenResult::Err(_) => {}
        }
        r
    }

    fn input_open_primary(&mut self, status: &mut dyn StatusBackend) -> OpenResult<InputHandle> {
        match self.input_open_primary_with_abspath(status) {
            OpenResult::Ok((h, _)) => OpenResult::Ok(h),
            OpenResult::NotAvailable => OpenResult::NotAvailable,
            OpenResult::Err(e) => OpenResult::Err(e),
        }
    }

    fn input_open_primary_with_abspath(
        &mut self,
        _status: &mut dyn StatusBackend,
    ) -> OpenResult<(InputHandle, Option<PathBuf>)> {
        if let Some(text) = &self.format_primary {
            let h = InputHandle::new_read_only(
                "",
                Cursor::new(text.clone().into_bytes()),
                InputOrigin::Other,
            );
            return OpenResult::Ok((h, None));
        }
        if let Err(reason) = self.policy.check_denied(&self.primary) {
            let name = self.primary.display().to_string();
            return self.refuse(&name, false, reason);
        }
        let primary = self.primary.clone();
        match Self::open_file("", &primary, InputOrigin::Filesystem) {
            OpenResult::Ok(h) => OpenResult::Ok((h, Some(primary))),
            OpenResult::NotAvailable => OpenResult::NotAvailable,
            OpenResult::Err(e) => OpenResult::Err(e),
        }
    }

    /// Format files come from the format cache only, never from the document's folder.
    fn input_open_format(
        &mut self,
        name: &str,
        _status: &mut dyn StatusBackend,
    ) -> OpenResult<InputHandle> {
        if policy::check_name(name).is_err() {
            return OpenResult::NotAvailable;
        }
        // Never written by a build, so its digest is not worth computing.
        match std::fs::File::open(self.formats.path(name)) {
            Ok(f) => OpenResult::Ok(InputHandle::new_read_only(
                name,
                BufReader::new(f),
                InputOrigin::Other,
            )),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => OpenResult::NotAvailable,
            Err(e) => OpenResult::Err(e.into()),
        }
    }
}

impl DriverHooks for BuildIo {
    fn io(&mut self) -> &mut dyn IoProvider {
        self
    }

    fn event_output_closed(&mut self, name: String, digest: DigestData) {
        if let Some(u) = self.usage.get_mut(&name) {
            u.written = Some(digest);
        }
    }

    fn event_input_closed(
        &mut self,
        name: String,
        digest: Option<DigestData>,
        _status: &mut dyn StatusBackend,
    ) {
        // What a file held the first time it was read is what matters.
        if let Some(u) = self.usage.get_mut(&name)
            && u.read.is_none()
        {
            u.read = digest;
        }
    }
}

/// Keeps the engines' error and warning messages (the log has the TeX ones; these are
/// the bridge's, such as a refused open), a bounded number.
#[derive(Default)]
pub(crate) struct Messages {
    pub lines: Vec<String>,
}

impl StatusBackend for Messages {
    fn report(
        &mut self,
        kind: MessageKind,
        args: std::fmt::Arguments<'_>,
        err: Option<&tectonic_errors::Error>,
    ) {
        if kind == MessageKind::Note || self.lines.len() >= 100 {
            return;
        }
        self.lines.push(match err {
            Some(e) => format!("{args}: {e}"),
            None => args.to_string(),
        });
    }

    fn dump_error_logs(&mut self, _output: &[u8]) {}
}
