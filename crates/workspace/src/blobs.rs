//! Blob ids for changed files: the bytes on disk, exactly.
//!
//! No attribute or configuration converts a file on its way into a checkpoint: no end-of-line
//! conversion, no `ident`, no clean filter (Git LFS included: an LFS-tracked file is stored as
//! whatever the worktree holds, the pointer file as checked out). `.gitattributes` is a file the
//! task controls, so letting it choose how content is stored (or which program stores it) would
//! let the task decide what Bosun records; the bytes on disk are what the task did.
//!
//! New blobs are kept in memory (up to a bound) until the checkpoint writes them all at once, and
//! a file whose content is already in the latest checkpoint is never written. Files above
//! [`IN_MEMORY_LIMIT`] are hashed while streaming and, when new, streamed into the object store.

use crate::error::{GitContext, IoContext, Result};
use crate::pack::write_pack;
use git2::{ObjectType, Oid, Repository};
use std::fs::Metadata;
use std::io::{Read, Write};
use std::path::Path;

/// New blobs from which one pack is written rather than a loose object each.
const PACK_FROM: usize = 16;

/// Unwritten blob bytes beyond which they are written early, to bound memory.
const WRITE_AT: usize = 64 << 20;

/// Files above this size are streamed instead of being read into memory.
const IN_MEMORY_LIMIT: u64 = 32 << 20;

const STREAM_CHUNK: usize = 1 << 20;

/// One checkpoint's blob hashing and the new blobs it found.
pub(crate) struct Blobs<'r> {
    repo: &'r Repository,
    worktree: &'r Path,
    /// Blobs hashed but not yet in the object database, and their total size.
    unwritten: Vec<(Oid, Vec<u8>)>,
    unwritten_bytes: usize,
}

impl<'r> Blobs<'r> {
    pub fn new(repo: &'r Repository, worktree: &'r Path) -> Self {
        Blobs {
            repo,
            worktree,
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

    /// The blob id of the file at `rel` (a symlink's target for links), as its bytes on disk.
    /// It is written to the object database by [`Blobs::write`] unless it equals `known`.
    pub fn hash(&mut self, rel: &str, meta: &Metadata, known: Option<Oid>) -> Result<Oid> {
        let abs = self.worktree.join(rel);
        let data = if meta.file_type().is_symlink() {
            use std::os::unix::ffi::OsStrExt;
            let target = std::fs::read_link(&abs).io_ctx("read the symlink", &abs)?;
            target.as_os_str().as_bytes().to_vec()
        } else if meta.len() > IN_MEMORY_LIMIT {
            return self.hash_large(&abs, meta.len(), known);
        } else {
            read_regular(&abs)?
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

    /// A large file: hashed while streaming; streamed into the object store only when new.
    fn hash_large(&mut self, abs: &Path, len: u64, known: Option<Oid>) -> Result<Oid> {
        let mut sha = sha1_smol::Sha1::new();
        sha.update(format!("blob {len}\0").as_bytes());
        let streamed = stream(abs, |chunk| {
            sha.update(chunk);
            Ok(())
        })?;
        let id = if streamed == len {
            Oid::from_bytes(&sha.digest().bytes()).git_ctx("hashing a large file")?
        } else {
            // It changed size while being read: what the store gets below is the truth.
            Oid::ZERO_SHA1
        };
        if known == Some(id) {
            return Ok(id);
        }
        let odb = self.repo.odb().git_ctx("opening the object database")?;
        let size = std::fs::symlink_metadata(abs)
            .io_ctx("read the status of", abs)?
            .len();
        let mut writer = odb
            .writer(
                usize::try_from(size).unwrap_or(usize::MAX),
                ObjectType::Blob,
            )
            .git_ctx("starting a large blob")?;
        let mut written = 0u64;
        stream(abs, |chunk| {
            let take = usize::try_from((size - written).min(chunk.len() as u64)).unwrap_or(0);
            written += take as u64;
            writer
                .write_all(&chunk[..take])
                .io_ctx("write a large blob from", abs)
        })?;
        writer.finalize().git_ctx("writing a large blob")
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
}

/// A regular file's bytes, never through a symlink and never blocking on a FIFO swapped in.
fn read_regular(abs: &Path) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    open_regular(abs)?
        .read_to_end(&mut out)
        .io_ctx("read", abs)?;
    Ok(out)
}

fn open_regular(abs: &Path) -> Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(abs)
        .io_ctx("read", abs)
}

/// Feeds the file to `each` chunk by chunk; returns the bytes read.
fn stream(abs: &Path, mut each: impl FnMut(&[u8]) -> Result<()>) -> Result<u64> {
    let mut file = open_regular(abs)?;
    let mut buf = vec![0u8; STREAM_CHUNK];
    let mut total = 0u64;
    loop {
        let n = file.read(&mut buf).io_ctx("read", abs)?;
        if n == 0 {
            return Ok(total);
        }
        total += n as u64;
        each(&buf[..n])?;
    }
}
