// No console window next to the app on Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() -> std::process::ExitCode {
    // Commands the agents run must not read the app's keys out of /proc.
    if let Err(e) = skald_core::process::keep_memory_private() {
        eprintln!("skald-desktop: {e}");
    }
    // Started as a LaTeX worker (by the viewer's `LatexEngine`): run that one build, open
    // no window.
    if let Some(code) = skald_viewer::latex::worker::run_worker_if_asked() {
        return std::process::ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
    match skald_desktop::run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("skald-desktop: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
