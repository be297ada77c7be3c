//! The merge gate: the task's checks run on the tree a merge would write (the base plus the
//! accepted hunks, composed as the merge composes them), in a check directory of their own;
//! a required check with a failure the base did not have refuses the merge unless the user
//! overrides it with a reason, which the journal keeps.

use super::Reviewer;
use crate::CoreError;
use crate::checks::{self, end_checks, task_plan};
use bosun_protocol::{CheckScope, ChecksReport, MergeOutcome, MergeRequest};
use std::path::{Path, PathBuf};

impl Reviewer {
    pub(crate) fn gate_report_path(&self) -> PathBuf {
        self.home
            .join("cache")
            .join("merge-checks")
            .join(format!("{}.json", self.task))
    }

    /// The tree a merge would write now.
    fn accepted_tree_id(&self) -> Result<String, CoreError> {
        let ledger = self.ledger()?;
        Ok(self.history()?.accepted_tree(&ledger.accepted)?.tree)
    }

    /// The last checks of the tree a merge would write; `stale` when the accepted hunks changed
    /// since. None when they never ran (or the task has no checks).
    pub fn merge_checks(&self) -> Result<Option<ChecksReport>, CoreError> {
        let Ok(text) = std::fs::read_to_string(self.gate_report_path()) else {
            return Ok(None);
        };
        let Ok(mut report) = serde_json::from_str::<ChecksReport>(&text) else {
            return Ok(None);
        };
        report.stale = report.tree != self.accepted_tree_id()?;
        Ok(Some(report))
    }

    /// Runs the task's checks on the tree a merge would write, journaling them (scope
    /// `accepted`), and keeps the report for [`Reviewer::merge_checks`].
    pub async fn run_merge_checks(&self) -> Result<ChecksReport, CoreError> {
        let row = self.ensure_stopped()?;
        let plan = task_plan(&self.home, &self.store, &row)?;
        let checks = end_checks(&plan);
        let tree = self.accepted_tree_id()?;
        if checks.is_empty() {
            return Err(checks::no_checks(&row, plan.source));
        }
        let changed = checks::changed_files(&self.store, &row.id)?;
        let spec = checks::RoundSpec {
            checks: &checks,
            tree: &tree,
            round: 0,
            scope: CheckScope::Accepted,
            changed: &changed,
            slot: checks::run::merge_slot(row.id.as_str()),
        };
        let results = checks::run_outside_task(&self.home, &self.store, &row, &spec).await?;
        let report = ChecksReport {
            blocked: checks::blocking(&results),
            tree,
            checks: results,
            stale: false,
        };
        let path = self.gate_report_path();
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let tmp = path.with_extension("json.tmp");
        if let Ok(json) = serde_json::to_vec(&report)
            && std::fs::write(&tmp, json).is_ok()
        {
            let _ = std::fs::rename(&tmp, &path);
        }
        Ok(report)
    }

    /// Merges as [`Reviewer::merge`] does, behind the gate: the checks of the accepted tree run
    /// first (unless they already ran on this very tree), and a blocking failure refuses the
    /// merge (`checks_failed`) unless `req.override_checks` gives a reason.
    pub async fn merge_gated(&self, req: &MergeRequest) -> Result<MergeOutcome, CoreError> {
        let row = self.ensure_stopped()?;
        let plan = task_plan(&self.home, &self.store, &row)?;
        if end_checks(&plan).is_empty() {
            return self.merge_with(req, Vec::new(), None, None);
        }
        let report = match self.merge_checks()? {
            Some(r) if !r.stale => r,
            _ => self.run_merge_checks().await?,
        };
        let reason = req
            .override_checks
            .as_deref()
            .map(str::trim)
            .filter(|r| !r.is_empty());
        if report.blocked {
            let Some(reason) = reason else {
                return Err(CoreError::Review {
                    code: "checks_failed",
                    message: blocked_message(&report, Path::new(&row.repo)),
                });
            };
            let tree = report.tree.clone();
            return self.merge_with(req, report.checks, Some(reason.to_string()), Some(&tree));
        }
        let tree = report.tree.clone();
        self.merge_with(req, report.checks, None, Some(&tree))
    }
}

impl Reviewer {
    /// Whether the task's latest merge went ahead over failing checks.
    pub fn merge_overrode(&self) -> Result<bool, CoreError> {
        let events = self.store.events_of_kinds(&self.task, &["review"])?;
        Ok(events
            .iter()
            .rev()
            .find_map(|e| match &e.msg {
                bosun_protocol::EventMsg::Review(bosun_protocol::ReviewEvent::Merge {
                    override_checks,
                    ..
                }) => Some(override_checks.is_some()),
                _ => None,
            })
            .unwrap_or(false))
    }
}

/// Why a merge was refused: the failing checks and their failures, and how to override.
fn blocked_message(report: &ChecksReport, _repo: &Path) -> String {
    let mut out =
        String::from("the merge is refused: a required check fails on the accepted changes");
    for c in report.checks.iter().filter(|c| c.blocks()) {
        out.push_str(&format!("\n  ✗ {} — {}", c.name, c.summary));
        for f in c.failures.iter().filter(|f| !f.before_task).take(10) {
            out.push_str(&format!("\n    {}", checks::run::failure_lines(f)));
        }
    }
    out.push_str("\nfix it (accept or reject other hunks, or send the task a follow-up), or merge anyway with --override-checks REASON (the reason is kept in the journal)");
    out
}
