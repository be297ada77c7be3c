//! bosun-app: the Tauri shell. Thin commands over the journal ([`bosun_store::Store`]), the event
//! bridge that streams it to the UI over `tauri::ipc::Channel`s, and the [`engine::Engine`] that runs
//! the tasks launched from the window. No logic of its own lives here.

pub mod base_watch;
pub mod batch;
pub mod branches;
pub mod bridge;
pub mod checks;
pub mod commands;
pub mod costs;
pub mod engine;
pub mod error;
pub mod feed;
pub mod history;
pub mod import;
pub mod mcp;
pub mod memory;
pub mod notify;
pub mod prepare;
pub mod probe;
pub mod quit;
pub mod review;
pub mod secrets;
pub mod settings;
pub mod steer;
pub mod telemetry;
pub mod trampoline;

use bosun_store::Store;
use bridge::Bridge;
use commands::{Journal, Runner};
use engine::Engine;
use error::IpcError;
use std::sync::Arc;
use std::time::Duration;

/// How long quitting waits for running tasks to stop after interrupting them.
pub const QUIT_GRACE: Duration = Duration::from_secs(5);

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

/// The engine, on its own connection to the journal (so the bridge's poller sees its writes).
pub fn open_engine(journal: &Journal) -> Runner {
    let store = match Store::open(&bosun_store::journal_path()) {
        Ok(store) => Arc::new(store),
        Err(err) => return Runner(Err(err.into())),
    };
    // `[history] retention_days`: older transcripts go when the app starts (in the background).
    {
        let (home, store) = (bosun_store::bosun_home(), Arc::clone(&store));
        std::thread::spawn(move || {
            if let Err(e) = bosun_core::export::apply_retention(&home, &store) {
                tracing::warn!("the retention setting could not be applied: {e}");
            }
        });
    }
    let mut engine = Engine::new(bosun_store::bosun_home(), store, true);
    if let Ok(bridge) = &journal.0 {
        engine = engine.with_bridge(Arc::clone(bridge));
    }
    engine = engine.with_approval_hook(notify::approval_hook());
    Runner(Ok(Arc::new(engine)))
}

/// Runs the app until its window closes; tasks still running are then interrupted.
pub fn run() -> Result<(), tauri::Error> {
    // On stderr: the e2e tests read it through tauri-driver, which drops the app's stdout.
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("BOSUN_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .try_init();
    let journal = open_journal();
    let runner = open_engine(&journal);
    let engine = runner.0.as_ref().ok().cloned();
    let app = tauri::Builder::default()
        // The repository folder picker; the window may only open it (`dialog:allow-open`).
        .plugin(tauri_plugin_dialog::init())
        // Approval notifications, shown from Rust (src/notify.rs): no permission for the window.
        .plugin(tauri_plugin_notification::init())
        .setup({
            let engine = engine.clone();
            move |app| {
                notify::set_app(app.handle().clone());
                // Batches whose process died (a crash, a quit) continue here.
                if let Some(engine) = &engine {
                    let resumed = batch::resume_interrupted(engine);
                    if !resumed.is_empty() {
                        tracing::info!("continuing {} interrupted batch(es)", resumed.len());
                    }
                }
                Ok(())
            }
        })
        .manage(journal)
        .manage(runner)
        .manage(base_watch::BaseWatches::default())
        .invoke_handler(tauri::generate_handler![
            commands::list_tasks,
            commands::task_events,
            commands::task_children,
            commands::get_task,
            commands::subscribe_tasks,
            commands::subscribe_task,
            commands::unsubscribe,
            commands::start_task,
            commands::prepare_worktree,
            commands::release_prepared_worktree,
            commands::stop_task,
            commands::answer_approval,
            commands::pin_context,
            settings::ipc::get_settings,
            settings::ipc::save_provider,
            settings::ipc::remove_provider,
            settings::ipc::set_defaults,
            settings::ipc::set_routing,
            settings::ipc::set_fallback,
            settings::ipc::test_provider,
            settings::ipc::detect_servers,
            settings::ipc::read_policy,
            settings::ipc::save_policy,
            settings::ipc::check_policy,
            settings::ipc::data_usage,
            settings::ipc::get_budgets,
            settings::ipc::save_budgets,
            settings::ipc::provider_profile,
            settings::ipc::probe_provider,
            commands::continue_task,
            commands::list_branches,
            quit::quit_app,
            quit::cancel_quit,
            review::review_get,
            review::review_file,
            review::review_verdict,
            review::review_undo,
            review::review_comment,
            review::review_uncomment,
            review::review_request_changes,
            review::review_timeline,
            review::review_diff,
            review::review_diff_file,
            review::review_restore_preview,
            review::review_restore,
            review::review_merge_message,
            review::review_merge,
            review::review_rebase,
            review::review_export,
            review::review_remove_worktree,
            review::review_discard,
            base_watch::review_base_moved,
            base_watch::review_watch_base,
            checks::checks_for_repo,
            checks::save_checks,
            checks::rerun_checks,
            checks::review_checks,
            checks::review_run_checks,
            commands::fork_task,
            history::export_task,
            history::archive_task,
            history::delete_task,
            history::history_search,
            import::import_folders,
            import::import_sessions,
            costs::cost_dashboard,
            costs::task_usage,
            costs::cost_stats,
            costs::cost_groups,
            costs::budget_statuses,
            costs::add_price,
            memory::memories,
            memory::pin_memory,
            memory::delete_memory,
            memory::add_memory,
            memory::set_memory_enabled,
            mcp::mcp_servers,
            mcp::mcp_set_enabled,
            mcp::mcp_import,
            batch::batch_start,
            batch::batch_list,
            batch::batch_status,
            batch::batch_resume,
            batch::batch_stop,
            batch::compare_start,
            batch::compare_list,
            batch::compare_status,
            batch::compare_merge,
            batch::setups_list,
        ])
        .build(tauri::generate_context!())?;
    app.run(move |handle, event| {
        // With tasks running, the window asks first (src/quit.rs).
        if let tauri::RunEvent::WindowEvent {
            event: tauri::WindowEvent::CloseRequested { api, .. },
            ..
        } = &event
            && !quit::allow_close(handle, engine.as_ref())
        {
            api.prevent_close();
            return;
        }
        let quitting = matches!(
            event,
            tauri::RunEvent::ExitRequested { .. }
                | tauri::RunEvent::Exit
                | tauri::RunEvent::WindowEvent {
                    event: tauri::WindowEvent::CloseRequested { .. },
                    ..
                }
        );
        if quitting
            && let Some(engine) = &engine
            && !engine.running().is_empty()
        {
            tracing::info!(
                "quitting: interrupting {} running task(s)",
                engine.running().len()
            );
            let left = engine.shutdown(QUIT_GRACE);
            if left > 0 {
                tracing::warn!(
                    "{left} task(s) did not stop in time; they will show as interrupted"
                );
            }
        }
    });
    Ok(())
}
