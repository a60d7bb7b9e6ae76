//! The hello-world of `create-tauri-app` (vanilla template, no commands): one window of the
//! app's size showing a static page. `skald-bench --only desktop` measures the desktop app
//! against it, so what the table shows is what Skald adds to Tauri and WebKitGTK.

fn main() {
    if let Err(e) = tauri::Builder::default().run(tauri::generate_context!()) {
        eprintln!("tauri-hello: {e}");
        std::process::exit(1);
    }
}
