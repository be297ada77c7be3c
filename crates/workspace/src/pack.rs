//! Many new objects at once go into one pack file (with its index, written by libgit2's indexer,
//! which checks every object) instead of a loose file each: a checkpoint of a hundred files
//! creates two files rather than a hundred.

use crate::error::{GitContext, IoContext, Result};
use flate2::Compression;
use flate2::write::ZlibEncoder;
use git2::{ObjectType, Repository};
use std::io::Write;

/// Writes `objects` (kind, content) into the repository as one pack.
pub(crate) fn write_pack(repo: &Repository, objects: &[(ObjectType, &[u8])]) -> Result<()> {
    let count = u32::try_from(objects.len()).unwrap_or(u32::MAX);
    let total: usize = objects.iter().map(|(_, data)| data.len()).sum();
    let mut pack = Vec::with_capacity(total / 2 + 64);
    pack.extend_from_slice(b"PACK");
    pack.extend_from_slice(&2u32.to_be_bytes());
    pack.extend_from_slice(&count.to_be_bytes());
    for (kind, data) in objects.iter().take(count as usize) {
        push_header(&mut pack, *kind, data.len());
        let mut encoder = ZlibEncoder::new(&mut pack, Compression::fast());
        encoder
            .write_all(data)
            .and_then(|()| encoder.finish().map(|_| ()))
            .io_ctx("compress objects for a pack in", repo.path())?;
    }
    let digest = sha1_smol::Sha1::from(&pack).digest().bytes();
    pack.extend_from_slice(&digest);
    let odb = repo.odb().git_ctx("opening the object database")?;
    let mut writer = odb.packwriter().git_ctx("starting a pack")?;
    writer
        .write_all(&pack)
        .io_ctx("write a pack into", repo.path())?;
    writer.commit().git_ctx("writing a pack")?;
    Ok(())
}

/// An object's pack entry header: its type and size, 4 then 7 bits a byte.
fn push_header(pack: &mut Vec<u8>, kind: ObjectType, size: usize) {
    let kind: u8 = match kind {
        ObjectType::Commit => 1,
        ObjectType::Tree => 2,
        ObjectType::Tag => 4,
        _ => 3,
    };
    let mut rest = size >> 4;
    let mut byte = (kind << 4) | (size & 0x0f) as u8;
    while rest > 0 {
        pack.push(byte | 0x80);
        byte = (rest & 0x7f) as u8;
        rest >>= 7;
    }
    pack.push(byte);
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn every_object_size_reads_back_from_the_pack() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = Repository::init(tmp.path()).unwrap();
        let sizes = [0usize, 1, 15, 16, 127, 128, 2047, 2048, 70_000, 300_000];
        let contents: Vec<Vec<u8>> = sizes
            .iter()
            .map(|&n| (0..n).map(|i| (i * 7 % 251) as u8).collect())
            .collect();
        let objects: Vec<(ObjectType, &[u8])> = contents
            .iter()
            .map(|c| (ObjectType::Blob, c.as_slice()))
            .collect();
        write_pack(&repo, &objects).unwrap();
        for content in &contents {
            let id = git2::Oid::hash_object(ObjectType::Blob, content).unwrap();
            assert_eq!(repo.find_blob(id).unwrap().content(), content.as_slice());
        }
        let packs = std::fs::read_dir(tmp.path().join(".git/objects/pack"))
            .unwrap()
            .count();
        assert_eq!(packs, 2, "one pack and its index");
    }
}
