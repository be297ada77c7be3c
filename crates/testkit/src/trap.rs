//! A program that leaves a mark when anything runs it: for tests proving that nothing Bosun does
//! runs a program a task (or a configuration it can steer) named.

use std::io;
use std::path::{Path, PathBuf};

/// `dir/evil.sh`: writes its environment to `dir/PWNED` and passes stdin through (so it also
/// works as a git filter, textconv or hook).
pub struct Trap {
    pub script: PathBuf,
    pub marker: PathBuf,
}

impl Trap {
    pub fn new(dir: &Path) -> io::Result<Trap> {
        use std::os::unix::fs::PermissionsExt;
        std::fs::create_dir_all(dir)?;
        let marker = dir.join("PWNED");
        let script = dir.join("evil.sh");
        std::fs::write(
            &script,
            format!("#!/bin/sh\nenv > '{}'\ncat\n", marker.display()),
        )?;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755))?;
        Ok(Trap { script, marker })
    }

    /// Whether anything ran the program.
    pub fn sprung(&self) -> bool {
        self.marker.exists()
    }

    /// What the program saw in its environment when it ran (empty when it never ran).
    pub fn saw(&self) -> String {
        std::fs::read_to_string(&self.marker).unwrap_or_default()
    }
}
