// Keep a console window from opening next to the app on Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    // Commands the agent runs are started as `bosun-app __sandbox …`. The trampoline needs a
    // process without threads, and WebKit starts one before `main`: hand the call over to a
    // sibling trampoline binary (see `trampoline.rs`). `dispatch_sandbox` stays as the fallback
    // for a build without WebKit threads.
    bosun_app::trampoline::forward();
    bosun_exec::dispatch_sandbox();
    if let Err(err) = bosun_app::run() {
        eprintln!("bosun: the app could not start: {err}");
        std::process::exit(1);
    }
}
