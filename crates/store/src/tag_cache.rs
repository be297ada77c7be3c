//! The repository map's tag cache: tags as the map's crate serialises them (JSON text), keyed
//! by (git blob id, language, tags version), so every worktree and task of a repository — and
//! every repository with the same file — shares them, and only changed files are parsed again.

use crate::{Store, StoreError, now_rfc3339};
use rusqlite::params;
use std::collections::HashMap;

impl Store {
    /// The cached tags of `blobs` (each `(blob id, language)`) at `version`, by blob id.
    pub fn cached_tags(
        &self,
        blobs: &[(String, String)],
        version: u32,
    ) -> Result<HashMap<String, String>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(
            "SELECT tags FROM tag_cache WHERE blob = ?1 AND language = ?2 AND version = ?3",
        )?;
        let mut out = HashMap::new();
        for (blob, language) in blobs {
            let found: Option<String> = stmt
                .query_row(params![blob, language, version], |r| r.get(0))
                .map(Some)
                .or_else(|e| match e {
                    rusqlite::Error::QueryReturnedNoRows => Ok(None),
                    e => Err(e),
                })?;
            if let Some(tags) = found {
                out.insert(blob.clone(), tags);
            }
        }
        Ok(out)
    }

    /// Keeps the tags of each `(blob id, language, tags JSON)` at `version`, in one transaction.
    pub fn cache_tags(
        &self,
        entries: &[(String, String, String)],
        version: u32,
    ) -> Result<(), StoreError> {
        if entries.is_empty() {
            return Ok(());
        }
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        {
            let now = now_rfc3339();
            let mut stmt = tx.prepare_cached(
                "INSERT OR REPLACE INTO tag_cache (blob, language, version, tags, used_at)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )?;
            for (blob, language, tags) in entries {
                stmt.execute(params![blob, language, version, tags, now])?;
            }
        }
        tx.commit()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn tags_are_kept_by_blob_language_and_version() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("bosun.db")).unwrap();
        let key = ("b1".to_string(), "python".to_string());
        assert!(
            store
                .cached_tags(std::slice::from_ref(&key), 1)
                .unwrap()
                .is_empty()
        );
        store
            .cache_tags(&[("b1".into(), "python".into(), "[1]".into())], 1)
            .unwrap();
        let got = store.cached_tags(std::slice::from_ref(&key), 1).unwrap();
        assert_eq!(got.get("b1").map(String::as_str), Some("[1]"));
        // Another version or language is another entry.
        assert!(
            store
                .cached_tags(std::slice::from_ref(&key), 2)
                .unwrap()
                .is_empty()
        );
        assert!(
            store
                .cached_tags(&[("b1".into(), "rust".into())], 1)
                .unwrap()
                .is_empty()
        );
    }
}
