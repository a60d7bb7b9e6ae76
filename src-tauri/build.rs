fn main() {
    // `freedesktop`: desktops whose notification server is reached over D-Bus.
    println!("cargo::rustc-check-cfg=cfg(freedesktop)");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if ["linux", "dragonfly", "freebsd", "openbsd", "netbsd"].contains(&os.as_str()) {
        println!("cargo::rustc-cfg=freedesktop");
    }
    // Only the commands the UI uses are callable, and only as the capabilities say.
    tauri_build::try_build(
        tauri_build::Attributes::new()
            .app_manifest(tauri_build::AppManifest::new().commands(&["request", "pick_folder"])),
    )
    .unwrap_or_else(|e| panic!("tauri build script: {e:#}"));
}
