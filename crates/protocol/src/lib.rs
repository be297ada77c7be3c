//! Every type that crosses a boundary of Bosun.
//!
//! The core is a queue pair: frontends (the app, the CLI, tests) submit [`Op`]s and consume
//! [`Event`]s; the core never calls a frontend. An [`Event`] carries a per-task monotonic `seq`,
//! so a frontend that missed events reads the journal from `seq` and then follows live. The JSON of
//! an [`Event`] is exactly what `bosun run --json` prints, one event per line:
//!
//! ```json
//! {"seq":3,"task_id":"01jd…","ts":"2026-11-30T03:15:00.123Z","type":"tool_call_begin","call_id":"call_1","tool":"read_file","args":{"path":"README.md"},"recovered":false}
//! ```
//!
//! No IO and no async here: this crate is plain data with serde and ts-rs derives.

mod approval;
mod check;
mod event;
mod ids;
mod network;
mod op;
mod review;
mod tool;
mod usage;

pub use approval::*;
pub use check::*;
pub use event::*;
pub use ids::*;
pub use network::*;
pub use op::*;
pub use review::*;
pub use tool::*;
pub use usage::*;

/// Where `cargo test -p bosun-protocol export_bindings` writes the generated TypeScript
/// (relative to this crate). The UI imports it from `ui/src/lib/bindings/`.
pub const BINDINGS_DIR: &str = "../../ui/src/lib/bindings";
