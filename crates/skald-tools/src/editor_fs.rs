//! The file tools' I/O when an editor lends its file system to the call (docs/acp.md):
//! the file is read as the editor has it, unsaved changes included, and an edit is handed
//! to the editor, which updates its buffer and saves it. The tools work on the blocking
//! pool and the editor answers over its connection, so these wait there for its answer.
//! What the tools check on disk first (a regular file, not binary, not huge) stays.

use skald_api::editor::EditorAccess;
use skald_api::{ToolError, ToolScope};
use std::path::Path;

/// The editor to read `scope`'s files through, if one lends its file system.
pub(crate) fn reader(scope: &ToolScope) -> Option<&EditorAccess> {
    scope.editor().filter(|e| e.offers().read_files)
}

/// The editor to write `scope`'s files through, if one lends its file system.
pub(crate) fn writer(scope: &ToolScope) -> Option<&EditorAccess> {
    scope.editor().filter(|e| e.offers().write_files)
}

/// The editor's text of `path`. Called on the blocking pool.
pub(crate) fn read(editor: &EditorAccess, path: &Path) -> Result<String, ToolError> {
    wait(editor.read_text_file(path))?.map_err(|why| {
        ToolError::failed(format!(
            "the editor could not give its copy of {}: {why}",
            path.display()
        ))
    })
}

/// Hands `content` for `path` to the editor. Called on the blocking pool.
pub(crate) fn write(editor: &EditorAccess, path: &Path, content: &str) -> Result<(), ToolError> {
    wait(editor.write_text_file(path, content))?.map_err(|why| {
        ToolError::failed(format!(
            "the editor could not write {}: {why}",
            path.display()
        ))
    })
}

fn wait<F: std::future::Future>(request: F) -> Result<F::Output, ToolError> {
    // The blocking pool's threads belong to the runtime but run no tasks of their own,
    // which is what `block_on` needs.
    let runtime = tokio::runtime::Handle::try_current()
        .map_err(|e| ToolError::failed(format!("cannot reach the editor: {e}")))?;
    Ok(runtime.block_on(request))
}

#[cfg(test)]
mod tests {
    use crate::{EditFile, ReadFile, WriteFile};
    use serde_json::json;
    use skald_api::editor::{
        Editor, EditorAccess, EditorFuture, EditorOffers, TerminalCommand, TerminalOutcome,
    };
    use skald_api::{ExecutionOutcome, Tool, ToolScope};
    use std::collections::HashMap;
    use std::path::{Path, PathBuf};
    use std::sync::{Arc, Mutex};

    /// An editor holding unsaved buffers; what it was asked is kept.
    #[derive(Default)]
    struct Buffers {
        open: Mutex<HashMap<PathBuf, String>>,
        asked: Mutex<Vec<String>>,
        fail: bool,
    }

    impl Editor for Buffers {
        fn offers(&self) -> EditorOffers {
            EditorOffers {
                read_files: true,
                write_files: true,
                terminals: false,
            }
        }
        fn read_text_file<'a>(&'a self, path: &'a Path) -> EditorFuture<'a, String> {
            Box::pin(async move {
                self.asked
                    .lock()
                    .unwrap()
                    .push(format!("read {}", path.display()));
                if self.fail {
                    return Err("the buffer is gone".to_string());
                }
                match self.open.lock().unwrap().get(path) {
                    Some(t) => Ok(t.clone()),
                    None => std::fs::read_to_string(path).map_err(|e| e.to_string()),
                }
            })
        }
        fn write_text_file<'a>(&'a self, path: &'a Path, content: &'a str) -> EditorFuture<'a, ()> {
            Box::pin(async move {
                self.asked
                    .lock()
                    .unwrap()
                    .push(format!("write {}", path.display()));
                self.open
                    .lock()
                    .unwrap()
                    .insert(path.to_path_buf(), content.to_string());
                Ok(())
            })
        }
        fn run_in_terminal<'a>(
            &'a self,
            _call_id: &'a str,
            _command: TerminalCommand,
        ) -> EditorFuture<'a, TerminalOutcome> {
            Box::pin(async { Err("no terminals".to_string()) })
        }
    }

    async fn run(
        tool: &dyn Tool,
        dir: &Path,
        editor: &Arc<Buffers>,
        args: serde_json::Value,
    ) -> ExecutionOutcome {
        let exec = tool.run(&(), args);
        let lent: Arc<dyn Editor> = editor.clone();
        ToolScope::new(dir)
            .with_editor(Some(EditorAccess::new(lent, "c1")))
            .run(exec.wait())
            .await
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn files_are_read_and_edited_as_the_editor_has_them() {
        let d = tempfile::tempdir().unwrap();
        let notes = d.path().join("notes.txt");
        std::fs::write(&notes, "disk\n").unwrap();
        let editor = Arc::new(Buffers::default());
        editor
            .open
            .lock()
            .unwrap()
            .insert(notes.clone(), "unsaved one\nunsaved two\n".into());
        let ExecutionOutcome::Completed(read) =
            run(&ReadFile, d.path(), &editor, json!({"path": "notes.txt"})).await
        else {
            panic!("read failed")
        };
        assert!(
            read.contains("unsaved two") && !read.contains("disk"),
            "{read}"
        );
        let edited = run(
            &EditFile,
            d.path(),
            &editor,
            json!({"path": "notes.txt", "old": "two", "new": "2"}),
        )
        .await;
        assert!(
            matches!(edited, ExecutionOutcome::Completed(_)),
            "{edited:?}"
        );
        assert_eq!(
            editor.open.lock().unwrap()[&notes],
            "unsaved one\nunsaved 2\n"
        );
        assert_eq!(
            std::fs::read_to_string(&notes).unwrap(),
            "disk\n",
            "the editor saves, not Skald"
        );
        // A new file in a new folder: the folder is made, the text goes to the editor.
        let created = run(
            &WriteFile,
            d.path(),
            &editor,
            json!({"path": "new/a.txt", "content": "hi\n"}),
        )
        .await;
        let ExecutionOutcome::Completed(created) = created else {
            panic!("{created:?}")
        };
        assert!(created.starts_with("Created"), "{created}");
        assert!(d.path().join("new").is_dir());
        assert_eq!(
            *editor.asked.lock().unwrap(),
            [
                format!("read {}", notes.display()),
                format!("read {}", notes.display()),
                format!("write {}", notes.display()),
                format!("write {}", d.path().join("new/a.txt").display()),
            ]
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_disk_is_checked_first_and_an_editor_failure_is_said() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("x.bin"), b"\x00\x01").unwrap();
        std::fs::write(d.path().join("a.txt"), "a\n").unwrap();
        let editor = Arc::new(Buffers {
            fail: true,
            ..Default::default()
        });
        // A binary file is refused without asking the editor; a folder is not a file.
        let bin = run(
            &EditFile,
            d.path(),
            &editor,
            json!({"path": "x.bin", "old": "a", "new": "b"}),
        )
        .await;
        assert!(
            matches!(&bin, ExecutionOutcome::Failed(m) if m.contains("binary")),
            "{bin:?}"
        );
        let dir = run(
            &WriteFile,
            d.path(),
            &editor,
            json!({"path": ".", "content": "x"}),
        )
        .await;
        assert!(
            matches!(&dir, ExecutionOutcome::Failed(m) if m.contains("directory")),
            "{dir:?}"
        );
        assert!(editor.asked.lock().unwrap().is_empty());
        // The editor cannot give its copy: the call fails saying so, and nothing is written.
        let failed = run(&ReadFile, d.path(), &editor, json!({"path": "a.txt"})).await;
        assert!(
            matches!(&failed, ExecutionOutcome::Failed(m) if m.contains("the editor could not give its copy") && m.contains("the buffer is gone")),
            "{failed:?}"
        );
        let edit = run(
            &EditFile,
            d.path(),
            &editor,
            json!({"path": "a.txt", "old": "a", "new": "b"}),
        )
        .await;
        assert!(matches!(edit, ExecutionOutcome::Failed(_)));
        assert_eq!(
            std::fs::read_to_string(d.path().join("a.txt")).unwrap(),
            "a\n"
        );
    }
}
