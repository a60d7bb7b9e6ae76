//! The desktop app: the engine on Tauri's tokio runtime in the same process, the UI in a
//! webview. Like `skald serve` it carries the protocol of `skald_api::protocol` to
//! `skald_service` and holds no logic of its own:
//!
//! - the UI calls one command, `request`, with a protocol `Request`, and gets the
//!   protocol's `ServerMessage` back; engine events arrive as `skald://message` events;
//! - files reach the viewer through the `skald-file` URI scheme, which applies the same
//!   path policy as `skald serve`'s file route (no `file://`, no asset-protocol scope);
//! - the shell adds what a desktop app does: a tray, hiding on close, one instance,
//!   remembered window geometry, OS notifications for new Inbox items, a folder picker.

mod commands;
mod files;
mod shell;

use skald_api::protocol::ServerMessage;
use skald_service::{Connection, Service};
use std::sync::Arc;
use tauri::{Emitter, Manager, Runtime};

/// The event the UI listens to for engine events.
pub const MESSAGE_EVENT: &str = "skald://message";

/// The event that asks the UI to show something (`skald_api::protocol::OpenTarget`).
pub const OPEN_EVENT: &str = "skald://open";

/// The URI scheme of the viewer's files.
pub const FILE_SCHEME: &str = "skald-file";

/// How the webview writes a `skald-file` URL: WebKitGTK and WKWebView take the scheme
/// itself, WebView2 (Windows) an `http://<scheme>.localhost` host.
pub fn file_route() -> &'static str {
    if cfg!(windows) {
        "http://skald-file.localhost/?path="
    } else {
        "skald-file://localhost/?path="
    }
}

/// What the commands share: the service and the window's connection to it.
pub struct Desktop {
    pub service: Arc<Service>,
    pub conn: Connection,
}

/// Adds the engine's side to `builder` (the real runtime, or Tauri's mock runtime in
/// tests): the commands, the file scheme, and the forwarding of engine events.
pub fn with_engine<R: Runtime>(
    builder: tauri::Builder<R>,
    service: Arc<Service>,
) -> tauri::Builder<R> {
    let for_files = service.clone();
    builder
        .manage(Desktop {
            conn: service.connect(),
            service,
        })
        .invoke_handler(tauri::generate_handler![
            commands::request,
            commands::pick_folder
        ])
        .register_asynchronous_uri_scheme_protocol(FILE_SCHEME, move |_ctx, request, responder| {
            files::serve(for_files.clone(), request, responder)
        })
}

/// Sends every engine event to the UI, and hands Inbox requests to the shell (which
/// notifies when the window is not in front).
pub fn forward_events<R: Runtime>(app: &tauri::AppHandle<R>) {
    let Some(desktop) = app.try_state::<Desktop>() else {
        return;
    };
    let mut rx = desktop.service.subscribe();
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        loop {
            match rx.recv().await {
                Ok(message) => {
                    if let ServerMessage::Event {
                        event: skald_api::events::Event::InboxRequested { item },
                        ..
                    } = &message
                    {
                        shell::inbox_notification(&app, item);
                    }
                    if let Err(e) = app.emit(MESSAGE_EVENT, &message) {
                        tracing::warn!("cannot send an event to the UI: {e}");
                    }
                }
                Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => {
                    tracing::warn!("the UI fell behind; {n} events dropped (history has them)");
                }
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
            }
        }
    });
}

/// Starts the app: data folder, configuration, logging, the engine, the window.
pub fn run() -> anyhow::Result<()> {
    shell::run()
}
