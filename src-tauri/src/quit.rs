//! Quitting with tasks running asks first. Closing the window while the app's engine runs tasks
//! is held back and the window is asked to confirm ("N tasks are running: stop them and quit?");
//! confirming calls [`quit_app`], which interrupts them cleanly (as [`Engine::shutdown`] does) and
//! exits. A second close while the question is open quits anyway, so a window whose page broke
//! can still be closed.

use crate::QUIT_GRACE;
use crate::commands::Runner;
use crate::engine::Engine;
use crate::error::IpcError;
use serde::Serialize;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tauri::{AppHandle, Emitter, State};

/// The event the window receives when a close waits for its confirmation.
pub const QUIT_REQUESTED: &str = "bosun://quit-requested";

/// The payload of [`QUIT_REQUESTED`].
#[derive(Debug, Clone, Serialize)]
pub struct QuitRequest {
    /// How many tasks the app runs (they would be interrupted).
    pub running: usize,
}

/// Whether a close waits for the window's answer.
static ASKED: AtomicBool = AtomicBool::new(false);

/// Decides what a close request does: true to let the window close now; false when it was held
/// back to ask the window first.
pub fn allow_close(app: &AppHandle, engine: Option<&Arc<Engine>>) -> bool {
    let running = engine.map_or(0, |e| e.running().len());
    if running == 0 || ASKED.swap(true, Ordering::SeqCst) {
        return true;
    }
    if let Err(err) = app.emit_to("main", QUIT_REQUESTED, QuitRequest { running }) {
        tracing::warn!("could not ask the window to confirm quitting: {err}");
        return true;
    }
    false
}

/// The window's answer "stay": the next close asks again.
#[tauri::command]
pub fn cancel_quit() {
    ASKED.store(false, Ordering::SeqCst);
}

/// The window's answer "stop them and quit": interrupts the running tasks, waits for them (up to
/// [`QUIT_GRACE`]), and exits.
#[tauri::command]
pub async fn quit_app(app: AppHandle, runner: State<'_, Runner>) -> Result<(), IpcError> {
    if let Ok(engine) = &runner.0 {
        let engine = Arc::clone(engine);
        let left = tokio::task::spawn_blocking(move || engine.shutdown(QUIT_GRACE))
            .await
            .map_err(|e| IpcError::new("quit", format!("stopping the tasks failed: {e}")))?;
        if left > 0 {
            tracing::warn!("{left} task(s) did not stop in time; they will show as interrupted");
        }
    }
    app.exit(0);
    Ok(())
}
