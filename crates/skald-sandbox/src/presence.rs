//! Which of a command's masks exist now, without looking at each of them every time.
//!
//! A spawner is keyed by the masks that exist (`spawner.rs`): one made after it started —
//! a new `~/.aws` — must send the command to a new spawner. Looking is a `stat` per mask,
//! about thirty of them for a real chat (the credential folders, Skald's data, the sockets),
//! before every command. So the answer is kept, and what could change it is watched: the
//! kernel's inotify on every folder on the way to each mask, for its entries appearing,
//! going or being renamed, and the mount table, for a mount that would show something new.
//! Both report synchronously: once the call that made the change has returned, its event
//! is queued, so a command asked for after it sees it, exactly as a `stat` would.
//!
//! Whatever the watch cannot vouch for is looked at every time: a mask that is a symbolic
//! link (its target's folder is not watched), one on a path that could not be watched (a
//! folder Skald may not read, the system's watches used up), every mask when the watch
//! could not be made at all, and everything after `MAX_AGE`.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use inotify::{EventMask, Inotify, WatchMask};
use rustix::event::{PollFd, PollFlags};

/// How long an answer is kept at most, whatever the watch says: the bound for what inotify
/// does not report (a change made from another machine on a network file system).
const MAX_AGE: Duration = Duration::from_secs(10);
/// Sets of masks watched at once (a chat has one; a few chats share a machine).
const MAX_KEPT: usize = 8;

/// The masks a command with these `masked` and `writable` paths gets
/// ([`crate::plan_masks`]) that exist now (following links, as the helper does when it
/// mounts over them), in the plan's order.
pub fn existing(masked: &[PathBuf], writable: &[PathBuf]) -> Vec<PathBuf> {
    let mut kept = crate::spawner::lock(&KEPT);
    let at = kept
        .iter()
        .position(|k| k.masked.as_slice() == masked && k.writable.as_slice() == writable);
    // The plan depends on the paths alone unless a mask holds a writable folder, whose
    // other entries it then lists.
    let fixed = match at {
        Some(i) => kept[i].fixed,
        None => !writable
            .iter()
            .any(|w| masked.iter().any(|m| w.starts_with(m))),
    };
    let planned = (!fixed).then(|| crate::plan_masks(masked, writable));
    if let Some(i) = at {
        let k = &mut kept[i];
        let same = planned.as_ref().is_none_or(|p| *p == k.watch.planned);
        if same && let Some(found) = k.watch.still() {
            return found;
        }
        kept.swap_remove(i);
    }
    let planned = planned.unwrap_or_else(|| crate::plan_masks(masked, writable));
    match Watch::start(&planned) {
        Some(watch) => {
            let found = watch.found();
            if kept.len() >= MAX_KEPT {
                kept.remove(0);
            }
            kept.push(Kept {
                masked: masked.to_vec(),
                writable: writable.to_vec(),
                fixed,
                watch,
            });
            found
        }
        None => look(&planned),
    }
}

/// One set of masks watched.
struct Kept {
    masked: Vec<PathBuf>,
    writable: Vec<PathBuf>,
    fixed: bool,
    watch: Watch,
}

/// The sets of masks watched, oldest first.
static KEPT: Mutex<Vec<Kept>> = Mutex::new(Vec::new());

fn exists(path: &Path) -> bool {
    std::fs::metadata(path).is_ok()
}

fn look(planned: &[PathBuf]) -> Vec<PathBuf> {
    planned.iter().filter(|p| exists(p)).cloned().collect()
}

/// The answer for one set of masks and what keeps it true.
struct Watch {
    /// The masks watched, as planned.
    planned: Vec<PathBuf>,
    inotify: Inotify,
    /// `/proc/self/mountinfo`, which polls as changed when a mount comes or goes.
    mounts: std::fs::File,
    /// For each watched folder, the names in it on the way to a mask.
    names: HashMap<i32, Vec<OsString>>,
    /// Each mask, whether it existed, and whether it is looked at every time (a link, or
    /// a path the watch does not cover).
    masks: Vec<(PathBuf, bool, bool)>,
    since: Instant,
}

impl Watch {
    /// Watches first, then looks: a change after the look is an event. Each folder is
    /// watched before the one below it, so one that is not there when its turn comes is
    /// reported by the watch above when it appears.
    fn start(planned: &[PathBuf]) -> Option<Watch> {
        let inotify = Inotify::init().ok()?;
        // Polls as changed once a mount comes or goes after this opening.
        let mounts = std::fs::File::open("/proc/self/mountinfo").ok()?;
        let flags = WatchMask::CREATE
            | WatchMask::DELETE
            | WatchMask::MOVED_FROM
            | WatchMask::MOVED_TO
            | WatchMask::DELETE_SELF
            | WatchMask::MOVE_SELF
            | WatchMask::ONLYDIR;
        let mut names: HashMap<i32, Vec<OsString>> = HashMap::new();
        let mut masks = Vec::with_capacity(planned.len());
        for mask in planned {
            let plain = mask.is_absolute()
                && mask
                    .components()
                    .all(|c| matches!(c, Component::RootDir | Component::Normal(_)));
            let mut watched = plain;
            if plain {
                let mut folder = PathBuf::from("/");
                for name in mask.components().skip(1).map(|c| c.as_os_str()) {
                    match inotify.watches().add(&folder, flags) {
                        Ok(wd) => names
                            .entry(wd.get_watch_descriptor_id())
                            .or_default()
                            .push(name.to_os_string()),
                        // Not there: the folder above reports its coming.
                        Err(e)
                            if matches!(
                                e.kind(),
                                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                            ) =>
                        {
                            break;
                        }
                        // Not allowed, or out of watches: this mask is looked at every time.
                        Err(_) => {
                            watched = false;
                            break;
                        }
                    }
                    folder.push(name);
                }
            }
            masks.push((mask.clone(), watched));
        }
        let masks = masks
            .into_iter()
            .map(|(p, watched)| {
                let link = std::fs::symlink_metadata(&p).is_ok_and(|m| m.file_type().is_symlink());
                let there = exists(&p);
                (p, there, link || !watched)
            })
            .collect();
        Some(Watch {
            planned: planned.to_vec(),
            inotify,
            mounts,
            names,
            masks,
            since: Instant::now(),
        })
    }

    fn found(&self) -> Vec<PathBuf> {
        self.masks
            .iter()
            .filter(|(p, there, look)| if *look { exists(p) } else { *there })
            .map(|(p, ..)| p.clone())
            .collect()
    }

    /// The answer, if nothing that could change it happened since it was taken.
    fn still(&mut self) -> Option<Vec<PathBuf>> {
        if self.since.elapsed() > MAX_AGE || self.mounts_changed() || self.touched() {
            return None;
        }
        Some(self.found())
    }

    fn mounts_changed(&self) -> bool {
        let mut fds = [PollFd::new(&self.mounts, PollFlags::PRI)];
        let zero = rustix::event::Timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // An error is taken as a change: the answer is then looked for afresh.
        !matches!(rustix::event::poll(&mut fds, Some(&zero)), Ok(0))
    }

    /// Whether an event concerns a name on the way to a mask (or the watch itself: a
    /// watched folder moved or gone, events lost). Reads every queued event.
    fn touched(&mut self) -> bool {
        let mut buffer = [0u8; 4096];
        let own = EventMask::DELETE_SELF
            | EventMask::MOVE_SELF
            | EventMask::IGNORED
            | EventMask::Q_OVERFLOW;
        let mut touched = false;
        loop {
            let events = match self.inotify.read_events(&mut buffer) {
                Ok(events) => events,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return touched,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => return true,
            };
            for event in events {
                touched |= event.mask.intersects(own)
                    || match event.name {
                        None => true,
                        Some(name) => self
                            .names
                            .get(&event.wd.get_watch_descriptor_id())
                            .is_none_or(|names| names.iter().any(|n| n == name)),
                    };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn masks(root: &Path) -> Vec<PathBuf> {
        ["home/.aws", "home/.config/gh", "home/.ssh", "run/bus"]
            .iter()
            .map(|p| root.join(p))
            .collect()
    }

    #[test]
    fn what_appears_goes_or_is_renamed_is_seen_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("home/.ssh")).unwrap();
        std::fs::create_dir_all(root.join("run")).unwrap();
        let planned = masks(&root);
        assert_eq!(existing(&planned, &[]), vec![root.join("home/.ssh")]);
        assert_eq!(existing(&planned, &[]), vec![root.join("home/.ssh")]);

        // A mask made later.
        std::fs::create_dir(root.join("home/.aws")).unwrap();
        assert_eq!(
            existing(&planned, &[]),
            vec![root.join("home/.aws"), root.join("home/.ssh")]
        );
        // One whose folder did not exist either: the folder above was watched.
        std::fs::create_dir_all(root.join("home/.config/gh")).unwrap();
        assert_eq!(existing(&planned, &[]).len(), 3);
        // A file mask, and one that goes.
        std::fs::write(root.join("run/bus"), "").unwrap();
        std::fs::remove_dir(root.join("home/.aws")).unwrap();
        assert_eq!(
            existing(&planned, &[]),
            vec![
                root.join("home/.config/gh"),
                root.join("home/.ssh"),
                root.join("run/bus")
            ]
        );
        // A folder on the way renamed away, and another renamed into its place.
        std::fs::rename(root.join("home/.config"), root.join("old")).unwrap();
        assert_eq!(existing(&planned, &[]).len(), 2);
        std::fs::create_dir_all(root.join("new/gh")).unwrap();
        std::fs::rename(root.join("new"), root.join("home/.config")).unwrap();
        assert_eq!(existing(&planned, &[]).len(), 3);
        // The whole home folder replaced.
        std::fs::rename(root.join("home"), root.join("gone")).unwrap();
        std::fs::create_dir_all(root.join("home/.aws")).unwrap();
        assert_eq!(
            existing(&planned, &[]),
            vec![root.join("home/.aws"), root.join("run/bus")]
        );
    }

    #[test]
    fn a_mask_holding_a_writable_folder_is_planned_again_each_time() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let data = root.join("data");
        std::fs::create_dir_all(data.join("chats/one")).unwrap();
        std::fs::create_dir_all(data.join("logs")).unwrap();
        let (masked, writable) = (vec![data.clone()], vec![data.join("chats/one")]);
        assert_eq!(existing(&masked, &writable), vec![data.join("logs")]);
        // A new entry beside the writable folder is hidden from the next command on.
        std::fs::create_dir(data.join("secrets")).unwrap();
        std::fs::create_dir(data.join("chats/two")).unwrap();
        assert_eq!(
            existing(&masked, &writable),
            vec![
                data.join("chats/two"),
                data.join("logs"),
                data.join("secrets")
            ]
        );
    }

    #[test]
    fn a_mask_that_is_a_link_is_looked_at_every_time() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("home")).unwrap();
        std::os::unix::fs::symlink(root.join("elsewhere/aws"), root.join("home/.aws")).unwrap();
        let planned = masks(&root);
        assert!(existing(&planned, &[]).is_empty());
        // Its target appears in a folder nobody watches.
        std::fs::create_dir_all(root.join("elsewhere/aws")).unwrap();
        assert_eq!(existing(&planned, &[]), vec![root.join("home/.aws")]);
    }

    #[test]
    fn names_beside_the_masks_keep_the_answer() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("home/.ssh")).unwrap();
        let planned = masks(&root);
        let mut watch = Watch::start(&planned).unwrap();
        std::fs::write(root.join("home/.bash_history"), "ls").unwrap();
        std::fs::create_dir(root.join("home/.cache")).unwrap();
        assert!(!watch.touched(), "an unrelated name is not a change");
        assert_eq!(watch.still(), Some(vec![root.join("home/.ssh")]));
        std::fs::create_dir(root.join("home/.aws")).unwrap();
        assert!(watch.touched());
    }
}
