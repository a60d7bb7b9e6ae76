//! The commands the UI may call (build.rs lists them; capabilities/default.json allows
//! them): the protocol's one entry point, and the native folder picker.

use crate::Desktop;
use skald_api::protocol::{Request, ServerMessage};
use tauri::{Manager, Runtime};

/// One protocol request, answered as `skald serve` answers it over its WebSocket.
#[tauri::command]
pub async fn request(
    desktop: tauri::State<'_, Desktop>,
    request: Request,
) -> Result<ServerMessage, String> {
    Ok(desktop.conn.handle(request).await)
}

/// The OS's folder picker (for a chat's working folder); `None` when cancelled.
#[tauri::command]
pub async fn pick_folder<R: Runtime>(app: tauri::AppHandle<R>) -> Result<Option<String>, String> {
    use tauri_plugin_dialog::DialogExt;
    if app.try_state::<tauri_plugin_dialog::Dialog<R>>().is_none() {
        return Err("no folder picker in this build".into());
    }
    let (tx, rx) = tokio::sync::oneshot::channel();
    app.dialog()
        .file()
        .set_title("Choose the folder the agent works in")
        .pick_folder(move |picked| {
            let _ = tx.send(picked);
        });
    let picked = rx.await.map_err(|e| e.to_string())?;
    Ok(picked
        .and_then(|p| p.into_path().ok())
        .map(|p| p.display().to_string()))
}
