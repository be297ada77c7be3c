//! What changed between two published versions: their archives, fetched into the cache or
//! read from it, unpacked, and the answer files that differ (the rules are the module doc's).

use super::{Fetch, LocaliseError, Registry, io_err};
use std::collections::BTreeMap;
use std::io::{self, Read};
use std::path::Path;

/// Whether a package-relative path can be part of an answer (see the module doc).
pub fn answer_file(rel: &str) -> bool {
    let parts: Vec<&str> = rel.split('/').collect();
    let Some((name, dirs)) = parts.split_last() else {
        return false;
    };
    const LEFT_OUT: &[&str] = &[
        "tests",
        "test",
        "testing",
        "benches",
        "benchmarks",
        "examples",
        "docs",
        "doc",
        "node_modules",
        "vendor",
        "third_party",
        "target",
        "dist",
        "build",
        "venv",
        "__pycache__",
    ];
    let indexed = bosun_syntax::Language::for_path(rel).is_some_and(bosun_syntax::has_tags);
    indexed
        && !parts.iter().any(|p| p.starts_with('.') || p.is_empty())
        && !dirs
            .iter()
            .any(|d| LEFT_OUT.contains(d) || d.ends_with(".egg-info"))
        && !crate::is_test_name(name)
}

/// Whether `before` becomes `after` by the version number alone (`1.2.3` or `1, 2, 3`).
fn only_version_changed(before: &[u8], after: &[u8], from: &str, to: &str) -> bool {
    let (Ok(before), Ok(after)) = (std::str::from_utf8(before), std::str::from_utf8(after)) else {
        return false;
    };
    let tuple = |v: &str| v.replace('.', ", ");
    before.replace(from, to).replace(&tuple(from), &tuple(to)) == after
}

/// The answer files between two trees (package-relative path → bytes) of `from` and `to`.
pub fn changed_files(
    before: &BTreeMap<String, Vec<u8>>,
    after: &BTreeMap<String, Vec<u8>>,
    from: &str,
    to: &str,
) -> Vec<String> {
    before
        .iter()
        .filter(|(path, _)| answer_file(path))
        .filter(|(path, bytes)| match after.get(*path) {
            None => true,
            Some(new) => new != *bytes && !only_version_changed(bytes, new, from, to),
        })
        .map(|(path, _)| path.clone())
        .collect()
}

/// The regular files of a `.tar.gz` archive, the top directory (`name-1.2.3/`) stripped;
/// entries that would leave the tree (`..`, absolute) are dropped.
pub fn read_archive(bytes: &[u8]) -> io::Result<BTreeMap<String, Vec<u8>>> {
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(bytes));
    let mut files = BTreeMap::new();
    for entry in archive.entries()? {
        let mut entry = entry?;
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let path = entry.path()?.into_owned();
        let mut parts = Vec::new();
        let mut safe = true;
        for c in path.components() {
            match c {
                std::path::Component::Normal(p) => parts.push(p.to_string_lossy().into_owned()),
                std::path::Component::CurDir => {}
                _ => safe = false,
            }
        }
        if !safe || parts.len() < 2 {
            continue;
        }
        let mut bytes = Vec::new();
        entry.read_to_end(&mut bytes)?;
        files.insert(parts[1..].join("/"), bytes);
    }
    Ok(files)
}

/// The URL of a version's archive.
fn archive_url(
    registry: Registry,
    name: &str,
    version: &str,
    fetch: Fetch,
) -> Result<String, LocaliseError> {
    match registry {
        Registry::Crates => Ok(format!(
            "https://static.crates.io/crates/{name}/{name}-{version}.crate"
        )),
        Registry::Pypi => {
            // The version's JSON; where that is not served (some mirrors serve only the
            // project's), the project's JSON and its list for the version.
            let url = format!("https://pypi.org/pypi/{name}/{version}/json");
            let (url, files) = match pypi_json(&url, fetch) {
                Ok(json) => (url, json["urls"].clone()),
                Err(first) => {
                    let project = format!("https://pypi.org/pypi/{name}/json");
                    match pypi_json(&project, fetch) {
                        Ok(json) => (project, json["releases"][version].clone()),
                        Err(_) => return Err(first),
                    }
                }
            };
            let sdist = files
                .as_array()
                .into_iter()
                .flatten()
                .find(|u| u["packagetype"] == "sdist")
                .and_then(|u| Some((u["url"].as_str()?, u["filename"].as_str()?)));
            match sdist {
                Some((u, f)) if f.ends_with(".tar.gz") => Ok(join_url(&url, u)),
                Some((_, f)) => Err(LocaliseError::Fetch {
                    url,
                    cause: format!("the sdist {f} is not a .tar.gz"),
                }),
                None => Err(LocaliseError::Fetch {
                    url,
                    cause: format!("version {version} has no sdist"),
                }),
            }
        }
    }
}

fn pypi_json(url: &str, fetch: Fetch) -> Result<serde_json::Value, LocaliseError> {
    let body = fetch(url).map_err(|cause| LocaliseError::Fetch {
        url: url.to_string(),
        cause,
    })?;
    serde_json::from_slice(&body).map_err(|e| LocaliseError::Fetch {
        url: url.to_string(),
        cause: format!("not PyPI's JSON: {e}"),
    })
}

/// `link` read relative to `base` (a mirror's JSON may give `../../packages/…`).
fn join_url(base: &str, link: &str) -> String {
    if link.contains("://") {
        return link.to_string();
    }
    let Some((scheme, rest)) = base.split_once("://") else {
        return link.to_string();
    };
    let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
    let mut parts: Vec<&str> = if link.starts_with('/') {
        Vec::new()
    } else {
        let mut dir: Vec<&str> = path.split('/').collect();
        dir.pop();
        dir
    };
    for seg in link.trim_start_matches('/').split('/') {
        match seg {
            ".." => {
                parts.pop();
            }
            "." => {}
            s => parts.push(s),
        }
    }
    format!("{scheme}://{host}/{}", parts.join("/"))
}

/// A version's files, from the cache or downloaded into it.
pub(super) fn version_files(
    registry: Registry,
    name: &str,
    version: &str,
    cache: &Path,
    fetch: Fetch,
) -> Result<BTreeMap<String, Vec<u8>>, LocaliseError> {
    let path = cache.join(match registry {
        Registry::Crates => format!("crates/{name}-{version}.crate"),
        Registry::Pypi => format!("pypi/{name}-{version}.tar.gz"),
    });
    if !path.exists() {
        let url = archive_url(registry, name, version, fetch)?;
        let bytes = fetch(&url).map_err(|cause| LocaliseError::Fetch {
            url: url.clone(),
            cause,
        })?;
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(io_err(format!("while creating {}", dir.display())))?;
        }
        // Written whole, then renamed: an interrupted run leaves no half archive.
        let part = path.with_extension("part");
        std::fs::write(&part, &bytes)
            .map_err(io_err(format!("while writing {}", part.display())))?;
        std::fs::rename(&part, &path)
            .map_err(io_err(format!("while writing {}", path.display())))?;
    }
    let bytes =
        std::fs::read(&path).map_err(io_err(format!("while reading {}", path.display())))?;
    read_archive(&bytes).map_err(|e| LocaliseError::Archive {
        path: path.display().to_string(),
        cause: e.to_string(),
    })
}

/// Writes `files` under `dir` (made afresh).
pub(super) fn write_tree(dir: &Path, files: &BTreeMap<String, Vec<u8>>) -> io::Result<()> {
    if dir.exists() {
        std::fs::remove_dir_all(dir)?;
    }
    for (rel, bytes) in files {
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(path, bytes)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn the_answer_is_changed_or_removed_library_source_not_tests_docs_or_a_version_bump() {
        for (path, answer) in [
            ("src/lib.rs", true),
            ("src/sys/unix.rs", true),
            ("attr/_make.py", true),
            ("tests/it.rs", false),
            ("src/test/mod.rs", false),
            ("pkg/test_util.py", false),
            ("pkg/conftest.py", false),
            ("benches/b.rs", false),
            ("examples/e.rs", false),
            ("docs/conf.py", false),
            (".github/x.py", false),
            ("CHANGELOG.md", false),
            ("Cargo.toml", false),
            ("data.json", false),
        ] {
            assert_eq!(answer_file(path), answer, "{path}");
        }
        let tree = |v: &[(&str, &str)]| -> BTreeMap<String, Vec<u8>> {
            v.iter()
                .map(|(k, v)| (k.to_string(), v.as_bytes().to_vec()))
                .collect()
        };
        let before = tree(&[
            (
                "pkg/__init__.py",
                "__version__ = \"1.2.3\"\nVERSION = (1, 2, 3)\n",
            ),
            ("pkg/core.py", "def f():\n    return 1\n"),
            ("pkg/gone.py", "x = 1\n"),
            ("pkg/same.py", "y = 2\n"),
            ("tests/test_core.py", "assert True\n"),
        ]);
        let after = tree(&[
            (
                "pkg/__init__.py",
                "__version__ = \"1.2.4\"\nVERSION = (1, 2, 4)\n",
            ),
            ("pkg/core.py", "def f():\n    return 2\n"),
            ("pkg/same.py", "y = 2\n"),
            ("pkg/added.py", "z = 3\n"),
            ("tests/test_core.py", "assert False\n"),
        ]);
        assert_eq!(
            changed_files(&before, &after, "1.2.3", "1.2.4"),
            ["pkg/core.py", "pkg/gone.py"]
        );
    }

    #[test]
    fn a_relative_sdist_link_is_read_against_the_json_it_came_in() {
        let base = "https://pypi.org/pypi/click/json";
        assert_eq!(
            join_url(base, "../../packages/packages/96/d3/click-8.1.7.tar.gz"),
            "https://pypi.org/packages/packages/96/d3/click-8.1.7.tar.gz"
        );
        assert_eq!(
            join_url(base, "https://files.pythonhosted.org/packages/x.tar.gz"),
            "https://files.pythonhosted.org/packages/x.tar.gz"
        );
        assert_eq!(join_url(base, "/p/x.tar.gz"), "https://pypi.org/p/x.tar.gz");
    }

    #[test]
    fn an_archive_entry_that_would_leave_the_tree_is_dropped() {
        let mut b = tar::Builder::new(flate2::write::GzEncoder::new(
            Vec::new(),
            flate2::Compression::fast(),
        ));
        for name in ["pkg-1.0/../../evil.rs", "/etc/evil.rs", "pkg-1.0/src/ok.rs"] {
            let mut h = tar::Header::new_old();
            h.as_old_mut().name[..name.len()].copy_from_slice(name.as_bytes());
            h.set_size(2);
            h.set_mode(0o644);
            h.set_entry_type(tar::EntryType::Regular);
            h.set_cksum();
            b.append(&h, &b"x\n"[..]).unwrap();
        }
        let bytes = b.into_inner().unwrap().finish().unwrap();
        let files = read_archive(&bytes).unwrap();
        assert_eq!(files.keys().collect::<Vec<_>>(), ["src/ok.rs"]);
    }
}
