//! Reviewing what an agent changed in its worktree, file by file and hunk by hunk, and
//! bringing the chosen part into the person's folder (docs/worktrees.md, "Review and
//! apply"). Plain functions on file contents; reading and writing folders is the caller's.
//!
//! A file's hunks are the runs of changed lines between where the worktree started and
//! what the agent left (diffy's Myers diff, no context lines, so two nearby changes stay
//! two choices). Applying brings the chosen hunks over with a three-way merge against the
//! person's file as it is now: what only one side changed is taken, what both changed
//! alike is kept, and what both changed differently is a conflict — shown, never written.

/// One run of changed lines: `removed` lines of the old file from line `old_start` (1-based;
/// for a pure insertion, the line after which it goes), replaced by `added` ones, which
/// are lines `new_start…` of the new file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    pub old_start: usize,
    pub new_start: usize,
    pub removed: Vec<String>,
    pub added: Vec<String>,
}

/// A file with a NUL byte in its first 8 KiB is taken as binary, as git does.
pub fn is_binary(bytes: &[u8]) -> bool {
    bytes.iter().take(8000).any(|b| *b == 0)
}

/// The hunks from `old` to `new` (an absent file being empty), or `None` when either is
/// binary: a binary file is taken or left whole.
pub fn hunks(old: &[u8], new: &[u8]) -> Option<Vec<Hunk>> {
    if is_binary(old) || is_binary(new) {
        return None;
    }
    let mut opts = diffy::DiffOptions::new();
    opts.set_context_len(0);
    let patch = opts.create_patch_bytes(old, new);
    let text = |l: &[u8]| String::from_utf8_lossy(l).into_owned();
    Some(
        patch
            .hunks()
            .iter()
            .map(|h| {
                let (mut removed, mut added) = (Vec::new(), Vec::new());
                for line in h.lines() {
                    match line {
                        diffy::Line::Delete(l) => removed.push(text(l)),
                        diffy::Line::Insert(l) => added.push(text(l)),
                        diffy::Line::Context(_) => {}
                    }
                }
                Hunk {
                    old_start: h.old_range().start(),
                    new_start: h.new_range().start(),
                    removed,
                    added,
                }
            })
            .collect(),
    )
}

/// `old` with only the `chosen` hunks (by index in `hunks(old, new)`) of the change to
/// `new` made. Choosing every hunk gives `new`, choosing none gives `old`. A binary file
/// is whole: any choice gives `new`.
pub fn with_hunks(old: &[u8], new: &[u8], chosen: &[usize]) -> Vec<u8> {
    if is_binary(old) || is_binary(new) {
        return if chosen.is_empty() {
            old.to_vec()
        } else {
            new.to_vec()
        };
    }
    let mut opts = diffy::DiffOptions::new();
    opts.set_context_len(0);
    let patch = opts.create_patch_bytes(old, new);
    let old_lines: Vec<&[u8]> = old.split_inclusive(|b| *b == b'\n').collect();
    let mut out = Vec::with_capacity(new.len().max(old.len()));
    let mut at = 0;
    for (i, h) in patch.hunks().iter().enumerate() {
        let range = h.old_range();
        // diffy numbers lines from 1, and an empty range by the line before it.
        let first = if range.is_empty() {
            range.start()
        } else {
            range.start() - 1
        };
        for line in old_lines.get(at..first).into_iter().flatten() {
            out.extend_from_slice(line);
        }
        if chosen.contains(&i) {
            for line in h.lines() {
                if let diffy::Line::Insert(l) = line {
                    out.extend_from_slice(l);
                }
            }
        } else {
            for line in old_lines
                .get(first..first + range.len())
                .into_iter()
                .flatten()
            {
                out.extend_from_slice(line);
            }
        }
        at = first + range.len();
    }
    for line in old_lines.get(at..).into_iter().flatten() {
        out.extend_from_slice(line);
    }
    out
}

/// What applying one file comes to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Merge {
    /// The person's file becomes this (`None`: it is removed).
    Write(Option<Vec<u8>>),
    /// The person's file already is what applying would make it.
    Unchanged,
    /// Both changed the same lines differently, or a binary file, or one removed what the
    /// other changed: nothing is written. `markers` is the text with git's conflict
    /// markers, when both are text.
    Conflict { markers: Option<Vec<u8>> },
}

/// The three-way merge of one file: `base` where the worktree started, `ours` the
/// person's file now, `theirs` what is to be brought over (`None`: no such file).
pub fn merge(base: Option<&[u8]>, ours: Option<&[u8]>, theirs: Option<&[u8]>) -> Merge {
    if ours == theirs {
        return Merge::Unchanged;
    }
    if ours == base {
        return Merge::Write(theirs.map(<[u8]>::to_vec));
    }
    if theirs == base {
        // Only the person changed it.
        return Merge::Unchanged;
    }
    let (Some(b), Some(o), Some(t)) = (base, ours, theirs) else {
        // Removed on one side, changed on the other (or made on both).
        let markers = match (ours, theirs) {
            (Some(o), Some(t)) if !is_binary(o) && !is_binary(t) => {
                diffy::merge_bytes(b"", o, t).err()
            }
            _ => None,
        };
        return Merge::Conflict { markers };
    };
    if is_binary(b) || is_binary(o) || is_binary(t) {
        return Merge::Conflict { markers: None };
    }
    match diffy::merge_bytes(b, o, t) {
        // The person's file has every change already (applied before).
        Ok(merged) if merged == o => Merge::Unchanged,
        Ok(merged) => Merge::Write(Some(merged)),
        Err(markers) => Merge::Conflict {
            markers: Some(markers),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OLD: &str = "one\ntwo\nthree\nfour\nfive\nsix\n";
    const NEW: &str = "ONE\ntwo\nthree\nfour\n4.5\nfive\n";

    #[test]
    fn each_run_of_changed_lines_is_a_hunk() {
        let h = hunks(OLD.as_bytes(), NEW.as_bytes()).unwrap();
        assert_eq!(h.len(), 3, "{h:?}");
        assert_eq!(
            (h[0].old_start, h[0].removed.clone(), h[0].added.clone()),
            (1, vec!["one\n".to_string()], vec!["ONE\n".to_string()])
        );
        // An insertion goes after line 4.
        assert_eq!(
            (h[1].old_start, h[1].removed.len(), h[1].added.clone()),
            (4, 0, vec!["4.5\n".to_string()])
        );
        assert_eq!(
            (h[2].old_start, h[2].removed.clone(), h[2].added.len()),
            (6, vec!["six\n".to_string()], 0)
        );
        assert_eq!(hunks(b"a\0b", b"c"), None);
    }

    #[test]
    fn chosen_hunks_alone_are_made() {
        let pick =
            |c: &[usize]| String::from_utf8(with_hunks(OLD.as_bytes(), NEW.as_bytes(), c)).unwrap();
        assert_eq!(pick(&[0, 1, 2]), NEW);
        assert_eq!(pick(&[]), OLD);
        assert_eq!(pick(&[1]), "one\ntwo\nthree\nfour\n4.5\nfive\nsix\n");
        assert_eq!(pick(&[0, 2]), "ONE\ntwo\nthree\nfour\nfive\n");
        // Edges: a file made from nothing, emptied, or without a last newline.
        for (old, new) in [
            ("", "a\nb\n"),
            ("a\nb\n", ""),
            ("a\nb", "a\nc"),
            ("x\n", "y\nx\nz"),
        ] {
            let n = hunks(old.as_bytes(), new.as_bytes()).unwrap().len();
            let all: Vec<usize> = (0..n).collect();
            assert_eq!(
                with_hunks(old.as_bytes(), new.as_bytes(), &all),
                new.as_bytes(),
                "{old:?} -> {new:?}"
            );
            assert_eq!(
                with_hunks(old.as_bytes(), new.as_bytes(), &[]),
                old.as_bytes()
            );
        }
    }

    #[test]
    fn every_choice_of_hunks_then_the_rest_gives_the_new_file() {
        // Many shapes of change, each hunk alone: taking it, then the rest from there,
        // ends at the new file.
        let cases = [
            ("a\nb\nc\nd\ne\nf\ng\n", "a\nB\nc\nd\nE\nf\ng\nh\n"),
            ("1\n2\n3\n", "0\n1\n3\n4\n"),
            ("x\ny\n", "y\nx\n"),
        ];
        for (old, new) in cases {
            let n = hunks(old.as_bytes(), new.as_bytes()).unwrap().len();
            for i in 0..n {
                let mid = with_hunks(old.as_bytes(), new.as_bytes(), &[i]);
                let rest = hunks(&mid, new.as_bytes()).unwrap().len();
                let all: Vec<usize> = (0..rest).collect();
                assert_eq!(with_hunks(&mid, new.as_bytes(), &all), new.as_bytes());
                assert!(rest < n || n == 1, "{old:?} {i}");
            }
        }
    }

    #[test]
    fn a_merge_takes_each_sides_own_change_and_shows_a_clash() {
        let base = b"a\nb\nc\nd\ne\n".as_slice();
        let person = b"A\nb\nc\nd\ne\n".as_slice();
        let agent = b"a\nb\nc\nd\nE\n".as_slice();
        assert_eq!(
            merge(Some(base), Some(person), Some(agent)),
            Merge::Write(Some(b"A\nb\nc\nd\nE\n".to_vec()))
        );
        assert_eq!(
            merge(Some(base), Some(base), Some(agent)),
            Merge::Write(Some(agent.to_vec()))
        );
        assert_eq!(
            merge(Some(base), Some(person), Some(base)),
            Merge::Unchanged
        );
        assert_eq!(
            merge(Some(base), Some(agent), Some(agent)),
            Merge::Unchanged
        );
        // Both changed line one differently.
        let clash = merge(Some(base), Some(person), Some(b"a1\nb\nc\nd\ne\n"));
        let Merge::Conflict { markers: Some(m) } = clash else {
            panic!("{clash:?}")
        };
        let m = String::from_utf8(m).unwrap();
        assert!(
            m.contains("<<<<<<<") && m.contains("A\n") && m.contains("a1\n"),
            "{m}"
        );
        // Made, removed.
        assert_eq!(
            merge(None, None, Some(b"new\n")),
            Merge::Write(Some(b"new\n".to_vec()))
        );
        assert_eq!(merge(Some(base), Some(base), None), Merge::Write(None));
        assert!(matches!(
            merge(Some(base), Some(person), None),
            Merge::Conflict { .. }
        ));
        assert!(matches!(
            merge(Some(base), None, Some(agent)),
            Merge::Conflict { .. }
        ));
        assert!(matches!(
            merge(None, Some(b"mine\n"), Some(b"theirs\n")),
            Merge::Conflict { markers: Some(_) }
        ));
        // A binary file changed on both sides is never merged.
        assert_eq!(
            merge(Some(b"\0a"), Some(b"\0b"), Some(b"\0c")),
            Merge::Conflict { markers: None }
        );
    }
}
