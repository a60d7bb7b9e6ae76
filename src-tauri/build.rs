fn main() {
    // Only the commands the UI uses are callable, and only as the capabilities say.
    tauri_build::try_build(
        tauri_build::Attributes::new()
            .app_manifest(tauri_build::AppManifest::new().commands(&["request", "pick_folder"])),
    )
    .unwrap_or_else(|e| panic!("tauri build script: {e:#}"));
}
