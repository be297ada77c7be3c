fn main() {
    // The custom-protocol build embeds ui/dist: a new UI build must rebuild the app.
    println!("cargo:rerun-if-changed=../ui/dist");
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
        "review_get",
        "review_file",
        "review_verdict",
        "review_undo",
        "review_comment",
        "review_uncomment",
        "review_request_changes",
        "review_timeline",
        "review_diff",
        "review_diff_file",
        "review_restore_preview",
        "review_restore",
        "review_merge_message",
        "review_merge",
        "review_rebase",
        "review_export",
        "review_remove_worktree",
        "review_discard",
        "prepare_worktree",
        "release_prepared_worktree",
        "checks_for_repo",
        "save_checks",
        "rerun_checks",
        "review_checks",
        "review_run_checks",
        "fork_task",
        "export_task",
        "archive_task",
        "delete_task",
        "history_search",
        "get_budgets",
        "save_budgets",
    ]);
    if let Err(err) = tauri_build::try_build(tauri_build::Attributes::new().app_manifest(manifest))
    {
        println!("cargo:warning=tauri build step failed: {err:#}");
        std::process::exit(1);
    }
}
