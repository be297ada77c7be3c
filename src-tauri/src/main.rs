// Keep a console window from opening next to the app on Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    if let Err(err) = bosun_app::run() {
        eprintln!("bosun: the app could not start: {err}");
        std::process::exit(1);
    }
}
