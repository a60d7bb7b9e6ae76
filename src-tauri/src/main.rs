// No console window next to the app on Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() -> std::process::ExitCode {
    // Commands the agents run must not read the app's keys out of /proc.
    if let Err(e) = skald_core::process::keep_memory_private() {
        eprintln!("skald-desktop: {e}");
    }
    match skald_desktop::run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("skald-desktop: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
