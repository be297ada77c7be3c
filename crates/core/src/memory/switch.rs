//! `[memory] enabled` in `$BOSUN_HOME/config.toml`, written by the app's Memory panel: only that
//! key changes, every other key, comment and blank line of the file stays as it was.

use crate::{BosunConfig, CoreError};
use std::path::{Path, PathBuf};

/// Sets `[memory] enabled = <enabled>` in `home/config.toml` (creating the file or the section
/// as needed) and returns the file's path. A file Bosun cannot read is left alone: the error
/// says what is wrong with it.
pub fn set_enabled(home: &Path, enabled: bool) -> Result<PathBuf, CoreError> {
    let path = home.join("config.toml");
    let shown = path.display().to_string();
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(CoreError::Config(format!("cannot read {shown}: {e}"))),
    };
    // The file must be one Bosun reads before it is edited: a broken one is the user's to fix.
    BosunConfig::load(home)?;
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e| CoreError::Config(format!("{shown} is not valid TOML: {e}")))?;
    if !doc.contains_key("memory") {
        doc.insert("memory", toml_edit::Item::Table(toml_edit::Table::new()));
    }
    let section = doc
        .get_mut("memory")
        .and_then(toml_edit::Item::as_table_like_mut)
        .ok_or_else(|| CoreError::Config(format!("{shown}: `memory` must be a table")))?;
    // An existing value is replaced in place, so the comments around its key stay.
    match section
        .get_mut("enabled")
        .and_then(toml_edit::Item::as_value_mut)
    {
        Some(v) => {
            let decor = v.decor().clone();
            *v = toml_edit::Value::from(enabled);
            *v.decor_mut() = decor;
        }
        None => {
            section.insert("enabled", toml_edit::value(enabled));
        }
    }
    let out = doc.to_string();
    toml::from_str::<BosunConfig>(&out)
        .map_err(|e| CoreError::Config(format!("{shown} would not be valid after saving: {e}")))?;
    std::fs::create_dir_all(home)
        .map_err(|e| CoreError::Config(format!("cannot create {}: {e}", home.display())))?;
    let tmp = path.with_extension("toml.tmp");
    std::fs::write(&tmp, out)
        .and_then(|()| std::fs::rename(&tmp, &path))
        .map_err(|e| CoreError::Config(format!("cannot write {shown}: {e}")))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::memory::enabled;
    use pretty_assertions::assert_eq;

    const CONFIG: &str = "# my providers\ndefault_provider = \"local\"\n\n[providers.local]\napi = \"openai-chat\"   # llama.cpp\nmodel = \"qwen\"\n";

    #[test]
    fn turning_memory_off_and_on_changes_only_that_key() {
        let home = tempfile::tempdir().unwrap();
        std::fs::write(home.path().join("config.toml"), CONFIG).unwrap();
        assert!(enabled(home.path()));
        set_enabled(home.path(), false).unwrap();
        assert!(!enabled(home.path()));
        let text = std::fs::read_to_string(home.path().join("config.toml")).unwrap();
        assert_eq!(text, format!("{CONFIG}\n[memory]\nenabled = false\n"));
        set_enabled(home.path(), true).unwrap();
        assert!(enabled(home.path()));
        let text = std::fs::read_to_string(home.path().join("config.toml")).unwrap();
        assert_eq!(text, format!("{CONFIG}\n[memory]\nenabled = true\n"));
    }

    #[test]
    fn an_existing_section_inline_or_not_is_edited_in_place() {
        let home = tempfile::tempdir().unwrap();
        let file = home.path().join("config.toml");
        std::fs::write(&file, "[memory]\n# off while I try things\nenabled = true\n\n[context]\nmask_tool_outputs = false\n").unwrap();
        set_enabled(home.path(), false).unwrap();
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            "[memory]\n# off while I try things\nenabled = false\n\n[context]\nmask_tool_outputs = false\n"
        );
        std::fs::write(&file, "memory = { enabled = false }\nmax_steps = 9\n").unwrap();
        set_enabled(home.path(), true).unwrap();
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            "memory = { enabled = true }\nmax_steps = 9\n"
        );
    }

    #[test]
    fn a_missing_file_is_created_and_a_broken_one_left_alone() {
        let home = tempfile::tempdir().unwrap();
        let dir = home.path().join("new-home");
        set_enabled(&dir, false).unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.join("config.toml")).unwrap(),
            "[memory]\nenabled = false\n"
        );
        let file = home.path().join("config.toml");
        std::fs::write(&file, "[memory]\nenabld = false\n").unwrap();
        let err = set_enabled(home.path(), false).unwrap_err().to_string();
        assert!(err.contains("enabld"), "{err}");
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            "[memory]\nenabld = false\n"
        );
    }
}
