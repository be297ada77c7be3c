//! Blob ids for changed files, as `git add` would store them.
//!
//! Git's clean filters (end-of-line conversion, `ident`) only run when an attributes file or
//! `core.autocrlf` could ask for them, which libgit2 finds out by reading every attributes source
//! for every file. When no such source exists for a file's directory, its blob is simply its
//! bytes, hashed in memory; otherwise libgit2 hashes it, filters and all. New blobs are kept in
//! memory (up to a bound) until the checkpoint writes them all at once, and a file whose content
//! is already in the latest checkpoint is never written.

use crate::error::{GitContext, IoContext, Result};
use crate::pack::write_pack;
use git2::{ErrorCode, ObjectType, Oid, Repository, Tree};
use std::collections::HashMap;
use std::fs::Metadata;
use std::path::{Path, PathBuf};

/// New blobs from which one pack is written rather than a loose object each.
const PACK_FROM: usize = 16;

/// Unwritten blob bytes beyond which they are written early, to bound memory.
const WRITE_AT: usize = 64 << 20;

/// Files above this size are streamed by libgit2 instead of being read into memory.
const IN_MEMORY_LIMIT: u64 = 32 << 20;

/// One checkpoint's blob hashing: what it has learnt about attributes, and the new blobs.
pub(crate) struct Blobs<'r> {
    repo: &'r Repository,
    worktree: &'r Path,
    /// Trees whose `.gitattributes` files libgit2 may read (the latest checkpoint, the base).
    trees: &'r [Tree<'r>],
    /// Whether a repository-wide source (config, info/attributes, global files) may filter.
    global: Option<bool>,
    /// Per directory: whether it holds (or held) a `.gitattributes` file.
    dirs: HashMap<String, bool>,
    /// Blobs hashed but not yet in the object database, and their total size.
    unwritten: Vec<(Oid, Vec<u8>)>,
    unwritten_bytes: usize,
}

impl<'r> Blobs<'r> {
    pub fn new(repo: &'r Repository, worktree: &'r Path, trees: &'r [Tree<'r>]) -> Self {
        Blobs {
            repo,
            worktree,
            trees,
            global: None,
            dirs: HashMap::new(),
            unwritten: Vec::new(),
            unwritten_bytes: 0,
        }
    }

    pub fn repo(&self) -> &'r Repository {
        self.repo
    }

    pub fn worktree(&self) -> &'r Path {
        self.worktree
    }

    /// The blob id of the file at `rel` (a symlink's target for links). It is written to the
    /// object database by [`Blobs::write`] unless it equals `known`.
    pub fn hash(&mut self, rel: &str, meta: &Metadata, known: Option<Oid>) -> Result<Oid> {
        let abs = self.worktree.join(rel);
        let data = if meta.file_type().is_symlink() {
            use std::os::unix::ffi::OsStrExt;
            let target = std::fs::read_link(&abs).io_ctx("read the symlink", &abs)?;
            target.as_os_str().as_bytes().to_vec()
        } else if meta.len() > IN_MEMORY_LIMIT || self.may_filter(rel)? {
            return self
                .repo
                .blob_path(&abs)
                .git_ctx(format!("hashing {}", abs.display()));
        } else {
            std::fs::read(&abs).io_ctx("read", &abs)?
        };
        let id = Oid::hash_object(ObjectType::Blob, &data)
            .git_ctx(format!("hashing {}", abs.display()))?;
        if known != Some(id) {
            self.unwritten_bytes += data.len();
            self.unwritten.push((id, data));
            if self.unwritten_bytes > WRITE_AT {
                self.write()?;
            }
        }
        Ok(id)
    }

    /// Writes the new blobs to the object database: a few as loose objects, more as one pack.
    /// Also done early when they take too much memory, so even a preview may write some.
    pub fn write(&mut self) -> Result<()> {
        self.unwritten.sort_by_key(|(id, _)| *id);
        self.unwritten.dedup_by_key(|(id, _)| *id);
        if self.unwritten.len() >= PACK_FROM {
            // A blob that happens to exist already is merely stored twice.
            let objects: Vec<(ObjectType, &[u8])> = self
                .unwritten
                .iter()
                .map(|(_, data)| (ObjectType::Blob, data.as_slice()))
                .collect();
            write_pack(self.repo, &objects)?;
        } else {
            let odb = self.repo.odb().git_ctx("opening the object database")?;
            for (_, data) in &self.unwritten {
                odb.write(ObjectType::Blob, data)
                    .git_ctx("writing a blob")?;
            }
        }
        self.unwritten.clear();
        self.unwritten_bytes = 0;
        Ok(())
    }

    /// Whether a clean filter may apply to `rel`: an attributes file that could match it, or
    /// `core.autocrlf`.
    fn may_filter(&mut self, rel: &str) -> Result<bool> {
        if self.global_may_filter()? {
            return Ok(true);
        }
        let mut dir = String::new();
        let mut parts = rel.split('/').peekable();
        while let Some(part) = parts.next() {
            if self.dir_has_attributes(&dir) {
                return Ok(true);
            }
            if parts.peek().is_none() {
                break;
            }
            if !dir.is_empty() {
                dir.push('/');
            }
            dir.push_str(part);
        }
        Ok(false)
    }

    fn dir_has_attributes(&mut self, dir: &str) -> bool {
        if let Some(known) = self.dirs.get(dir) {
            return *known;
        }
        let rel = if dir.is_empty() {
            ".gitattributes".to_string()
        } else {
            format!("{dir}/.gitattributes")
        };
        let found = std::fs::symlink_metadata(self.worktree.join(&rel)).is_ok()
            || self
                .trees
                .iter()
                .any(|tree| tree.get_path(Path::new(&rel)).is_ok());
        self.dirs.insert(dir.to_string(), found);
        found
    }

    fn global_may_filter(&mut self) -> Result<bool> {
        if let Some(known) = self.global {
            return Ok(known);
        }
        let config = self
            .repo
            .config()
            .git_ctx("reading the git configuration")?;
        let autocrlf = match config.get_bool("core.autocrlf") {
            Ok(on) => on,
            Err(e) if e.code() == ErrorCode::NotFound => false,
            // `input` or anything else libgit2 understands better than we do.
            Err(_) => true,
        };
        let attributes_file = config.get_entry("core.attributesFile").is_ok();
        let found = autocrlf
            || attributes_file
            || global_attribute_files(self.repo)
                .iter()
                .any(|p| std::fs::symlink_metadata(p).is_ok());
        self.global = Some(found);
        Ok(found)
    }
}

/// The attributes files libgit2 reads for every path besides `.gitattributes`.
fn global_attribute_files(repo: &Repository) -> Vec<PathBuf> {
    let mut files = vec![
        repo.commondir().join("info/attributes"),
        repo.path().join("info/attributes"),
        PathBuf::from("/etc/gitattributes"),
    ];
    let xdg = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")));
    if let Some(dir) = xdg {
        files.push(dir.join("git/attributes"));
    }
    files
}
