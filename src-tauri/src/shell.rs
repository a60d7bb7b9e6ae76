//! What makes it a desktop app: the data folder and the engine at start, the tray (Open,
//! Quit), closing to the tray, one instance, remembered window geometry, OS notifications
//! for new Inbox items while the window is not in front, and a clean quit.

use anyhow::Context as _;
use skald_api::protocol::{InboxEntry, InboxRequest, OpenTarget};
use skald_core::config::Rendering;
use skald_core::{Config, DataDir};
use skald_service::{RestartSignal, Service, ServiceConfig};
use std::path::PathBuf;
use std::sync::Arc;
use tauri::menu::{Menu, MenuItem};
use tauri::tray::TrayIconBuilder;
use tauri::{AppHandle, Emitter, Manager, RunEvent, Runtime, WindowEvent};

const MAIN: &str = "main";

/// Brings the main window to the front (the tray's Open, a second launch).
pub fn show_main<R: Runtime>(app: &AppHandle<R>) {
    if let Some(w) = app.get_webview_window(MAIN) {
        let _ = w.unminimize();
        let _ = w.show();
        let _ = w.set_focus();
    }
}

/// A new Inbox item while the window is hidden or in the background: an OS notification.
/// Clicking it brings the window up on that item.
pub fn inbox_notification<R: Runtime>(app: &AppHandle<R>, item: &InboxEntry) {
    let in_front = app
        .get_webview_window(MAIN)
        .map(|w| w.is_visible().unwrap_or(false) && w.is_focused().unwrap_or(false))
        .unwrap_or(false);
    if in_front {
        return;
    }
    let title = match item.request {
        InboxRequest::Approval(_) => "An agent needs your approval",
        InboxRequest::Question(_) => "An agent has a question",
        InboxRequest::Elicitation(_) => "An agent is waiting for you",
    };
    let body = match item.title.as_str() {
        "" => "Open Skald's Inbox to answer",
        t => t,
    };
    let target = Some(OpenTarget::InboxItem {
        inbox_id: item.id,
        session_id: item.session_id,
    });
    notify(app, title, body, target);
}

/// The notification server of the desktop session (freedesktop Notifications over
/// D-Bus) reports clicks, so the notification carries a default action and a thread waits
/// for it. The notification plugin has no click callback on Linux.
#[cfg(freedesktop)]
fn notify<R: Runtime>(app: &AppHandle<R>, title: &str, body: &str, target: Option<OpenTarget>) {
    let mut n = notify_rust::Notification::new();
    n.appname("Skald")
        .summary(title)
        .body(body)
        // The name the packages install the icon under.
        .icon("skald-desktop")
        .action("default", "Open");
    let app = app.clone();
    // Sending and waiting are D-Bus round trips: off the event loop's threads.
    let spawned = std::thread::Builder::new()
        .name("notification".into())
        .spawn(move || match n.show() {
            Ok(handle) => handle.wait_for_action(|action| {
                if action == "default" {
                    open(&app, target);
                }
            }),
            Err(e) => tracing::warn!("cannot show a notification: {e}"),
        });
    if let Err(e) = spawned {
        tracing::warn!("cannot show a notification: {e}");
    }
}

/// Elsewhere the notification plugin shows it; a click brings the app to the front.
#[cfg(not(freedesktop))]
fn notify<R: Runtime>(app: &AppHandle<R>, title: &str, body: &str, _target: Option<OpenTarget>) {
    use tauri_plugin_notification::NotificationExt;
    if app
        .try_state::<tauri_plugin_notification::Notification<R>>()
        .is_none()
    {
        return;
    }
    if let Err(e) = app.notification().builder().title(title).body(body).show() {
        tracing::warn!("cannot show a notification: {e}");
    }
}

/// Brings the window up and asks the UI to show `target`.
fn open<R: Runtime>(app: &AppHandle<R>, target: Option<OpenTarget>) {
    show_main(app);
    if let Some(t) = target
        && let Err(e) = app.emit(crate::OPEN_EVENT, &t)
    {
        tracing::warn!("cannot ask the UI to open an item: {e}");
    }
}

/// Stops running turns and background tasks (recorded, to resume at the next start) and
/// the MCP servers, then leaves.
fn quit<R: Runtime>(app: &AppHandle<R>) {
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        if let Some(d) = app.try_state::<crate::Desktop>() {
            d.service.shutdown().await;
        }
        app.exit(0);
    });
}

/// After an approved `restart` (the service has waited for the turns and shut the engine
/// down): the same binary starts again. The single-instance lock is let go first, or the
/// new process would find this one still holding it, hand over to it and exit.
fn restart_when_asked<R: Runtime>(app: AppHandle<R>, service: Arc<Service>) {
    tauri::async_runtime::spawn(async move {
        service.restart_requested().await;
        // `restart` from another thread asks the event loop to exit and never returns.
        std::thread::spawn(move || {
            tauri_plugin_single_instance::destroy(&app);
            app.restart();
        });
    });
}

fn tray<R: Runtime>(app: &tauri::App<R>) -> tauri::Result<()> {
    let open = MenuItem::with_id(app, "open", "Open Skald", true, None::<&str>)?;
    let quit_item = MenuItem::with_id(app, "quit", "Quit", true, None::<&str>)?;
    let menu = Menu::with_items(app, &[&open, &quit_item])?;
    let mut tray = TrayIconBuilder::with_id("skald")
        .tooltip("Skald")
        .menu(&menu)
        .on_menu_event(|app, event| match event.id().as_ref() {
            "open" => show_main(app),
            "quit" => quit(app),
            _ => {}
        });
    if let Some(icon) = app.default_window_icon() {
        tray = tray.icon(icon.clone());
    }
    tray.build(app)?;
    Ok(())
}

/// Software painting instead of OpenGL compositing where `[desktop] rendering` says so —
/// on `auto`, where the system has no GPU driver and OpenGL would run on the CPU anyway
/// (see `Rendering::uses_gpu`). Set before the page has drawn anything, so WebKit never
/// starts compositing. Only WebKitGTK is told: the other platforms' webviews choose well.
#[cfg(freedesktop)]
fn choose_rendering<R: Runtime>(app: &tauri::App<R>, rendering: Rendering) -> tauri::Result<()> {
    let gpu = rendering.uses_gpu(std::path::Path::new("/dev/dri"));
    tracing::info!(?rendering, gpu, "the window's rendering");
    if gpu {
        return Ok(());
    }
    let Some(window) = app.get_webview_window(MAIN) else {
        return Ok(());
    };
    window.with_webview(|webview| {
        use webkit2gtk::{HardwareAccelerationPolicy, SettingsExt, WebViewExt};
        if let Some(settings) = webview.inner().settings() {
            settings.set_hardware_acceleration_policy(HardwareAccelerationPolicy::Never);
        }
    })
}

#[cfg(not(freedesktop))]
fn choose_rendering<R: Runtime>(_app: &tauri::App<R>, _rendering: Rendering) -> tauri::Result<()> {
    Ok(())
}

/// The folder new chats work in: `SKALD_ROOT`, else the home folder.
fn root() -> anyhow::Result<PathBuf> {
    let dir = std::env::var_os("SKALD_ROOT")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(PathBuf::from))
        .or_else(|| std::env::var_os("USERPROFILE").map(PathBuf::from))
        .map_or_else(std::env::current_dir, Ok)?;
    std::fs::canonicalize(&dir).with_context(|| format!("the folder {}", dir.display()))
}

pub fn run() -> anyhow::Result<()> {
    let data_dir = DataDir::resolve(None)?;
    data_dir.ensure()?;
    let config = Config::load_or_create(&data_dir.config_path())?;
    let _log = skald_core::logging::init(&data_dir.logs_dir(), &config.log, None)?;
    let restart = RestartSignal::default();
    let rendering = config.desktop.rendering;
    let config = ServiceConfig {
        data_dir,
        root: root()?,
        config,
        model: None,
        tex_bundle: skald_viewer::latex::bundle::named_bundle(),
        file_route: crate::file_route().to_string(),
        restart: Some(restart.clone()),
        hidden_env: Vec::new(),
    };
    // The engine lives on Tauri's tokio runtime, in this process.
    let service: Arc<Service> =
        tauri::async_runtime::block_on(async move { Service::start(config) })
            .map_err(anyhow::Error::msg)?;
    let builder = tauri::Builder::default()
        // First: a second launch hands over to this one and exits.
        .plugin(tauri_plugin_single_instance::init(|app, _args, _cwd| {
            show_main(app)
        }))
        .plugin(tauri_plugin_window_state::Builder::default().build())
        .plugin(tauri_plugin_notification::init())
        .plugin(tauri_plugin_dialog::init());
    let service_for_restart = service.clone();
    let app = crate::with_engine(builder, service)
        .setup(move |app| {
            tray(app)?;
            // The window works either way: a failure here costs memory, not the start.
            if let Err(e) = choose_rendering(app, rendering) {
                tracing::warn!("cannot set the window's rendering: {e}");
            }
            crate::forward_events(app.handle());
            restart_when_asked(app.handle().clone(), service_for_restart);
            Ok(())
        })
        .on_window_event(|window, event| {
            // Closing the window keeps Skald running in the tray; Quit ends it.
            if let WindowEvent::CloseRequested { api, .. } = event
                && window.label() == MAIN
            {
                let _ = window.hide();
                api.prevent_close();
            }
        })
        .build(tauri::generate_context!())
        .context("cannot start the window")?;
    app.run(|app, event| {
        if let RunEvent::ExitRequested {
            code: None, api, ..
        } = event
        {
            // Not our own exit (the last window went some other way): drain first.
            api.prevent_exit();
            quit(app);
        }
    });
    Ok(())
}
