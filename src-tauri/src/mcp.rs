//! The MCP servers section of Settings: every server configured (yours, your repository's, a
//! repository's own) with its state and tools, and the switch of yours. Thin wrappers over
//! [`bosun_core::mcp`] and [`bosun_core::mcp_settings`]; listing starts each server, so it runs on
//! the async pool.

use crate::error::IpcError;
use bosun_mcp::ServerReport;
use std::path::{Path, PathBuf};

/// The repository a listing is for: none for a blank one (your global servers only); a path in
/// no repository is an error saying so.
fn root(repo: Option<&str>) -> Result<Option<PathBuf>, IpcError> {
    match repo.map(str::trim).filter(|r| !r.is_empty()) {
        None => Ok(None),
        Some(r) => Ok(Some(
            bosun_workspace::resolve_repo(Path::new(r)).map_err(bosun_core::CoreError::from)?,
        )),
    }
}

/// Every server configured for `repo` (or your global ones), each started once in a scratch
/// directory to list its tools, then stopped.
pub async fn servers(home: &Path, repo: Option<&str>) -> Result<Vec<ServerReport>, IpcError> {
    let root = root(repo)?;
    Ok(bosun_core::mcp::list(home, root.as_deref()).await?)
}

/// Turns one of your servers on or off in `config.toml` and returns it as listed now (only it
/// is started).
pub async fn set_enabled(
    home: &Path,
    name: &str,
    repo: Option<&str>,
    enabled: bool,
) -> Result<ServerReport, IpcError> {
    let root = root(repo)?;
    bosun_core::mcp_settings::set_enabled(home, name, root.as_deref(), enabled)?;
    Ok(bosun_core::mcp::report(home, root.as_deref(), name).await?)
}

/// The servers of `repo`'s tasks (null: your global ones).
#[tauri::command]
pub async fn mcp_servers(repo: Option<String>) -> Result<Vec<ServerReport>, IpcError> {
    servers(&bosun_store::bosun_home(), repo.as_deref()).await
}

/// Turns your server `name` on or off (`enabled` in its table of `config.toml`, the rest of the
/// file kept); a repository's own server is refused (it is approved when a task starts).
#[tauri::command]
pub async fn mcp_set_enabled(
    name: String,
    repo: Option<String>,
    enabled: bool,
) -> Result<ServerReport, IpcError> {
    set_enabled(&bosun_store::bosun_home(), &name, repo.as_deref(), enabled).await
}

/// Another agent's servers (`from`: `claude`, `codex` or a file), read as `bosun mcp import`
/// reads them; Claude Code's project entries are those of `repo` (none: of no project).
/// Without `write` nothing is written; with it the new ones `names` lists are.
pub fn import(
    home: &Path,
    from: &str,
    repo: Option<&str>,
    names: Option<&[String]>,
    write: bool,
) -> Result<bosun_core::mcp_import::ImportReport, IpcError> {
    let mut places = bosun_mcp::Places::from_env();
    places.cwd = match root(repo)? {
        Some(r) => r,
        None => places.home.clone().unwrap_or_else(|| home.to_path_buf()),
    };
    Ok(bosun_core::mcp_import::import(
        home, from, &places, names, write,
    )?)
}

/// Imports (or, with `write` false, shows) the MCP servers of Claude Code or Codex into
/// `config.toml`.
#[tauri::command(async)]
pub fn mcp_import(
    from: String,
    repo: Option<String>,
    names: Option<Vec<String>>,
    write: bool,
) -> Result<bosun_core::mcp_import::ImportReport, IpcError> {
    import(
        &bosun_store::bosun_home(),
        &from,
        repo.as_deref(),
        names.as_deref(),
        write,
    )
}
