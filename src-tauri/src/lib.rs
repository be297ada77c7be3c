//! bosun-app: the Tauri shell. Thin commands over the journal ([`bosun_store::Store`]) and the event
//! bridge that streams it to the UI over `tauri::ipc::Channel`s. No logic of its own lives here.

pub mod bridge;
pub mod commands;
pub mod error;
pub mod feed;

use bosun_store::Store;
use bridge::Bridge;
use commands::Journal;
use error::IpcError;
use std::sync::Arc;

/// Opens the journal at `bosun_home()/bosun.db` and starts following it.
pub fn open_journal() -> Journal {
    let path = bosun_store::journal_path();
    let opened = Store::open(&path).map(|store| Arc::new(Bridge::new(Arc::new(store))));
    match opened {
        Ok(bridge) => {
            if let Err(err) = bridge.spawn_poller() {
                return Journal(Err(IpcError::new(
                    "journal",
                    format!("could not start following the journal: {err}"),
                )));
            }
            Journal(Ok(bridge))
        }
        Err(err) => {
            tracing::error!("{err}");
            Journal(Err(err.into()))
        }
    }
}

/// Runs the app until its window closes.
pub fn run() -> Result<(), tauri::Error> {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("BOSUN_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .try_init();
    tauri::Builder::default()
        .manage(open_journal())
        .invoke_handler(tauri::generate_handler![
            commands::list_tasks,
            commands::task_events,
            commands::subscribe_tasks,
            commands::subscribe_task,
            commands::unsubscribe,
        ])
        .run(tauri::generate_context!())
}
