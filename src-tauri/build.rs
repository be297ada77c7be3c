fn main() {
    // Declaring the app's commands makes Tauri generate an `allow-<command>` permission for each;
    // `capabilities/main-window.json` grants exactly the ones the UI calls.
    let manifest = tauri_build::AppManifest::new().commands(&[
        "list_tasks",
        "task_events",
        "subscribe_tasks",
        "subscribe_task",
        "unsubscribe",
        "start_task",
        "stop_task",
        "answer_approval",
        "get_settings",
        "save_provider",
        "remove_provider",
        "set_defaults",
        "test_provider",
        "detect_servers",
        "read_policy",
        "save_policy",
        "check_policy",
        "data_usage",
        "continue_task",
        "list_branches",
        "quit_app",
        "cancel_quit",
    ]);
    if let Err(err) = tauri_build::try_build(tauri_build::Attributes::new().app_manifest(manifest))
    {
        println!("cargo:warning=tauri build step failed: {err:#}");
        std::process::exit(1);
    }
}
