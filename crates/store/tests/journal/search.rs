//! The history: the full-text index filled as events are written and by the migration, snippets,
//! every filter token, dates, sorting and paging.

use crate::support::{checkpoint, event, finished, journal, message, new_task, usage};
use bosun_protocol::{
    AssistantMessage, CallId, CheckFailure, CheckFinished, CheckScope, CheckStatus, ErrorEvent,
    EventMsg, MergeOutcome, ReviewComment, ReviewEvent, TaskId, TaskStatus, ToolCallBegin,
    ToolCallEnd, ToolCallStatus,
};
use bosun_store::{HistoryPage, HistoryQuery, SnippetPart, Sort, Store, StoreError};
use pretty_assertions::assert_eq;
use time::OffsetDateTime;
use time::macros::datetime;

/// Local time in the tests: UTC+1, Monday 2026-11-30 12:00.
const NOW: OffsetDateTime = datetime!(2026-11-30 12:00 +1);

fn q(text: &str) -> HistoryQuery {
    HistoryQuery::parse(text, NOW).unwrap()
}

fn ids(page: &HistoryPage) -> Vec<&str> {
    page.hits.iter().map(|h| h.task.id.as_str()).collect()
}

fn search(store: &Store, text: &str) -> Vec<String> {
    ids(&store.history(&q(text)).unwrap())
        .into_iter()
        .map(String::from)
        .collect()
}

fn run_command(call: &str, command: &str) -> EventMsg {
    EventMsg::ToolCallBegin(ToolCallBegin {
        call_id: CallId::from(call),
        tool: "run_command".into(),
        args: serde_json::json!({"command": command, "timeout_secs": 60}),
        recovered: false,
    })
}

fn output(call: &str, out: &str, error: Option<&str>) -> EventMsg {
    EventMsg::ToolCallEnd(ToolCallEnd {
        call_id: CallId::from(call),
        status: if error.is_some() {
            ToolCallStatus::Error
        } else {
            ToolCallStatus::Success
        },
        exit_code: Some(i32::from(error.is_some())),
        error: error.map(String::from),
        output: out.into(),
        duration_ms: 12,
    })
}

fn comment(body: &str) -> EventMsg {
    EventMsg::Review(ReviewEvent::Comment {
        comment: ReviewComment {
            id: 1,
            path: "src/lib.rs".into(),
            start_line: 1,
            end_line: 2,
            checkpoint: None,
            quote: "fn a()".into(),
            body: body.into(),
            created_at: "2026-11-30T03:00:00.000Z".into(),
            sent_at: None,
            resolved: false,
        },
    })
}

fn check(summary: &str, failure: &str) -> EventMsg {
    EventMsg::CheckFinished(CheckFinished {
        check_id: "test".into(),
        name: "cargo test".into(),
        status: CheckStatus::Failed,
        exit_code: Some(101),
        duration_ms: 1000,
        summary: summary.into(),
        failures: vec![CheckFailure {
            path: None,
            line: None,
            message: failure.into(),
            before_task: false,
        }],
        required: true,
        scope: CheckScope::Full,
        only_before_task: false,
    })
}

fn merge() -> EventMsg {
    EventMsg::Review(ReviewEvent::Merge {
        outcome: MergeOutcome {
            branch: "main".into(),
            created: false,
            commits: vec!["c".into()],
            files: 1,
            hunks: 1,
            left_out: 0,
            checked_out: false,
            worktree: "/w".into(),
            worktree_bytes: 0,
        },
        override_checks: None,
        checks: Vec::new(),
    })
}

/// Appends `msgs` as the task's events 1, 2, ….
fn task(store: &Store, id: &str, created_at: &str, repo: &str, model: &str, msgs: Vec<EventMsg>) {
    let mut t = new_task(id, created_at);
    t.repo = repo.into();
    t.model = model.into();
    store.create_task(&t).unwrap();
    for (i, msg) in msgs.into_iter().enumerate() {
        store.append_event(&event(id, i as u64 + 1, msg)).unwrap();
    }
}

/// Four tasks with every kind of searchable event (times are UTC).
///
/// | task | started | repo | model | status | cost | events of note |
/// |---|---|---|---|---|---|---|
/// | a | 2026-11-30T10:00 | /src/app | gpt-5 | completed | 0.9 | cargo build output `linker_failure`, checkpoints src/lib.rs + src/main.rs |
/// | b | 2026-11-25T08:00 | /src/web | claude-sonnet | failed | 0.1 | error message, check failure, review comment, merged |
/// | c | 2026-11-10T00:00 | /src/app | claude-opus | running | 2.5 | assistant text, remove worktree |
/// | d | 2026-08-01T00:00 | /src/tools | gpt-5 | checks_failed | 0.0 | follow-up only |
fn journal_of_four(store: &Store) {
    task(
        store,
        "a",
        "2026-11-30T10:00:00.000Z",
        "/src/app",
        "gpt-5",
        vec![
            message("Make the build pass"),
            run_command("c1", "cargo build --release"),
            output(
                "c1",
                "error: linker_failure in crate zeta-core\nexit 1",
                None,
            ),
            checkpoint(1, &["src/lib.rs"], Some("c1")),
            checkpoint(2, &["src/lib.rs", "src/main.rs"], None),
            usage("gpt-5", 1000, 100, 0.9, true),
            finished(TaskStatus::Completed, "Fixed the linker flags"),
        ],
    );
    task(
        store,
        "b",
        "2026-11-25T08:00:00.000Z",
        "/src/web",
        "claude-sonnet",
        vec![
            message("Port the navigation"),
            EventMsg::Error(ErrorEvent {
                code: "model_error".into(),
                message: "upstream quota exhausted".into(),
            }),
            check(
                "1 test failed: router_redirects",
                "assertion failed: redirect to /login",
            ),
            usage("claude-sonnet", 100, 10, 0.1, true),
            finished(TaskStatus::Failed, "stopped"),
            comment("please rename this handler to dispatch"),
            merge(),
        ],
    );
    task(
        store,
        "c",
        "2026-11-10T00:00:00.000Z",
        "/src/app",
        "claude-opus",
        vec![
            message("Explain the cache"),
            EventMsg::AssistantMessage(AssistantMessage {
                text: "The cache evicts the oldest entry first; see the build notes.".into(),
            }),
            usage("claude-opus", 5000, 500, 2.5, true),
            EventMsg::Review(ReviewEvent::RemoveWorktree { freed_bytes: 10 }),
        ],
    );
    task(
        store,
        "d",
        "2026-08-01T00:00:00.000Z",
        "/src/tools",
        "gpt-5",
        vec![
            message("Add a build flag"),
            message("also document the build flag"),
            finished(TaskStatus::ChecksFailed, "checks failed"),
        ],
    );
}

fn four() -> (tempfile::TempDir, Store) {
    let (dir, _path, store) = journal();
    journal_of_four(&store);
    (dir, store)
}

#[test]
fn a_word_of_a_command_s_output_finds_its_task_at_that_event() {
    let (_dir, store) = four();
    let page = store.history(&q("linker_failure")).unwrap();
    assert_eq!(ids(&page), ["a"]);
    assert_eq!(page.total, 1);
    assert_eq!(page.hits[0].seq, Some(3));
    assert_eq!(page.hits[0].kind.as_deref(), Some("tool_call_end"));
}

#[test]
fn every_kind_of_text_is_searchable() {
    let (_dir, store) = four();
    for (word, task, seq) in [
        ("navigation", "b", 1),       // the prompt
        ("document", "d", 2),         // a follow-up
        ("evicts", "c", 2),           // assistant text
        ("release", "a", 2),          // a command's arguments
        ("run_command", "a", 2),      // the tool's name
        ("main.rs", "a", 5),          // a path of a checkpoint
        ("quota", "b", 2),            // an error message
        ("router_redirects", "b", 3), // a check's summary
        ("login", "b", 3),            // a check's failure
        ("dispatch", "b", 6),         // a review comment
        ("flags", "a", 7),            // the task's final summary
    ] {
        let page = store.history(&q(word)).unwrap();
        assert_eq!(ids(&page), [task], "{word}");
        assert_eq!(page.hits[0].seq, Some(seq), "{word}");
    }
}

#[test]
fn events_appended_later_are_found() {
    let (_dir, store) = four();
    assert_eq!(search(&store, "afterthought"), Vec::<String>::new());
    store
        .append_event(&event("d", 4, message("an afterthought")))
        .unwrap();
    let page = store.history(&q("afterthought")).unwrap();
    assert_eq!(ids(&page), ["d"]);
    assert_eq!(page.hits[0].seq, Some(4));
}

#[test]
fn a_deleted_task_leaves_the_index() {
    let (_dir, store) = four();
    store.delete_task(&TaskId::from("a")).unwrap();
    assert_eq!(search(&store, "linker_failure"), Vec::<String>::new());
}

#[test]
fn the_snippet_marks_the_words() {
    let (_dir, store) = four();
    let page = store.history(&q("quota")).unwrap();
    assert_eq!(
        page.hits[0].snippet,
        vec![
            SnippetPart {
                text: "upstream ".into(),
                hit: false
            },
            SnippetPart {
                text: "quota".into(),
                hit: true
            },
            SnippetPart {
                text: " exhausted".into(),
                hit: false
            },
        ]
    );
}

#[test]
fn words_must_all_occur_and_a_phrase_in_order() {
    let (_dir, store) = four();
    assert_eq!(search(&store, "build"), ["a", "c", "d"]);
    assert_eq!(search(&store, "build flag"), ["d"]);
    assert_eq!(search(&store, "\"the build flag\""), ["d"]);
    assert_eq!(search(&store, "\"flag build\""), Vec::<String>::new());
    assert_eq!(search(&store, "buil*"), ["a", "c", "d"]);
}

#[test]
fn hostile_queries_are_words_not_syntax_errors() {
    let (_dir, store) = four();
    for text in [
        "\"",
        "*",
        "NEAR(",
        "-x",
        "a OR b",
        "\"unclosed",
        "foo-bar",
        "'",
        "(",
        ")",
        "^",
        "AND",
        "\"x:y\"",
    ] {
        store
            .history(&q(text))
            .unwrap_or_else(|e| panic!("{text}: {e}"));
    }
    assert_eq!(search(&store, "zeta-core"), ["a"]);
}

#[test]
fn each_filter_token() {
    let (_dir, store) = four();
    assert_eq!(search(&store, "repo:app"), ["a", "c"]);
    assert_eq!(search(&store, "repo:WEB"), ["b"]);
    assert_eq!(search(&store, "status:failed"), ["b"]);
    assert_eq!(search(&store, "status:running,checks_failed"), ["c", "d"]);
    assert_eq!(search(&store, "model:claude"), ["b", "c"]);
    assert_eq!(search(&store, "cost>0.5"), ["a", "c"]);
    assert_eq!(search(&store, "cost<0.5"), ["b", "d"]);
    assert_eq!(search(&store, "cost>0.5 cost<1"), ["a"]);
    assert_eq!(search(&store, "file:main.rs"), ["a"]);
    assert_eq!(search(&store, "file:src/"), ["a"]);
    assert_eq!(search(&store, "has:unreviewed"), ["a", "d"]);
    assert_eq!(search(&store, "build repo:app"), ["a", "c"]);
    assert_eq!(search(&store, "model:gpt build status:completed"), ["a"]);
}

#[test]
fn review_state_and_files_changed_follow_the_events() {
    let (_dir, store) = four();
    let state = |id: &str| store.task(&TaskId::from(id)).unwrap();
    assert_eq!(
        (state("a").review_state.as_str(), state("a").files_changed),
        ("unreviewed", 2)
    );
    assert_eq!(state("b").review_state, "merged");
    assert_eq!(state("c").review_state, "discarded");
    store
        .append_event(&event("d", 4, comment("looks fine")))
        .unwrap();
    assert_eq!(state("d").review_state, "in_review");
    store
        .set_review_state(&TaskId::from("d"), "reviewed")
        .unwrap();
    assert_eq!(state("d").review_state, "reviewed");
    assert!(matches!(
        store.set_review_state(&TaskId::from("d"), "done"),
        Err(StoreError::BadQuery(m)) if m.contains("in_review")
    ));
    // Removing the worktree after a merge keeps it merged.
    store
        .append_event(&event(
            "b",
            8,
            EventMsg::Review(ReviewEvent::RemoveWorktree { freed_bytes: 1 }),
        ))
        .unwrap();
    assert_eq!(state("b").review_state, "merged");
}

#[test]
fn dates_are_local_days_ages_or_rfc3339_times() {
    let (_dir, store) = four();
    // Now is 2026-11-30 11:00 UTC.
    assert_eq!(search(&store, "since:7d"), ["a", "b"]);
    assert_eq!(search(&store, "since:2w"), ["a", "b"]);
    assert_eq!(search(&store, "since:3w"), ["a", "b", "c"]);
    assert_eq!(search(&store, "since:3m"), ["a", "b", "c"]);
    assert_eq!(search(&store, "since:4m"), ["a", "b", "c", "d"]);
    assert_eq!(search(&store, "until:3m"), ["d"]);
    assert_eq!(search(&store, "until:7d"), ["c", "d"]);
    // c started at 2026-11-10 00:00 UTC = 01:00 local, on the 10th.
    assert_eq!(search(&store, "since:2026-11-10"), ["a", "b", "c"]);
    assert_eq!(search(&store, "since:2026-11-11"), ["a", "b"]);
    // until: a date includes that (local) day.
    assert_eq!(search(&store, "until:2026-11-10"), ["c", "d"]);
    assert_eq!(search(&store, "until:2026-11-09"), ["d"]);
    assert_eq!(
        search(&store, "since:2026-11-10 until:2026-11-25"),
        ["b", "c"]
    );
    // An RFC 3339 time: until includes that instant.
    assert_eq!(
        search(&store, "until:2026-11-25T08:00:00Z"),
        ["b", "c", "d"]
    );
    assert_eq!(
        search(&store, "since:2026-11-25T09:00:00+01:00"),
        ["a", "b"]
    );
    assert_eq!(search(&store, "since:2026-11-25T08:00:00.001Z"), ["a"]);
}

#[test]
fn three_months_ago_is_a_calendar_date() {
    let q = HistoryQuery::parse("since:3m until:1m", datetime!(2026-05-31 10:00 UTC)).unwrap();
    assert_eq!(q.since.as_deref(), Some("2026-02-28T10:00:00.000Z"));
    assert_eq!(q.until.as_deref(), Some("2026-04-30T10:00:00.000Z"));
}

#[test]
fn bad_tokens_are_errors_that_say_what_exists() {
    let err = |text: &str| match HistoryQuery::parse(text, NOW) {
        Err(StoreError::BadQuery(m)) => m,
        other => panic!("{text}: {other:?}"),
    };
    let m = err("build foo:bar");
    assert!(
        m.contains("unknown filter `foo:`") && m.contains("repo:") && m.contains("has:unreviewed"),
        "{m}"
    );
    let m = err("status:done");
    assert!(
        m.contains("`done`") && m.contains("checks_failed") && m.contains("max_steps"),
        "{m}"
    );
    assert!(err("since:yesterday").contains("7d"));
    assert!(err("cost>cheap").contains("cost>0.5"));
    assert!(err("has:bugs").contains("has:unreviewed"));
    assert!(err("repo:").contains("needs a value"));
    // In quotes, a colon is part of a word.
    assert_eq!(q("\"std::io\" foo").words, ["std::io", "foo"]);
    assert_eq!(q("file:\"my file.rs\"").file.as_deref(), Some("my file.rs"));
}

#[test]
fn sorted_by_date_cost_or_duration() {
    let (_dir, store) = four();
    let sorted = |sort: Sort| {
        let mut query = q("");
        query.sort = sort;
        ids(&store.history(&query).unwrap())
            .into_iter()
            .map(String::from)
            .collect::<Vec<_>>()
    };
    assert_eq!(sorted(Sort::Date), ["a", "b", "c", "d"]);
    assert_eq!(sorted(Sort::Cost), ["c", "a", "b", "d"]);
    // Durations: a and d finished at their last event's ts (2026-11-30T03:15:07, 03:15:03
    // in the support's clock), b at 03:15:05; c is running (its last event, 03:15:04).
    let by_duration = sorted(Sort::Duration);
    assert_eq!(by_duration.len(), 4);
    let duration = |id: &str| {
        let t = store.task(&TaskId::from(id)).unwrap();
        let end = t.finished_at.unwrap_or(t.updated_at);
        let parse = |s: &str| {
            OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339).unwrap()
        };
        parse(&end) - parse(&t.created_at)
    };
    let durations: Vec<_> = by_duration.iter().map(|id| duration(id)).collect();
    assert!(
        durations.windows(2).all(|w| w[0] >= w[1]),
        "{by_duration:?}: {durations:?}"
    );
}

#[test]
fn pages_count_the_whole_set_and_facets_cover_it() {
    let (_dir, store) = four();
    let mut query = q("");
    query.limit = 2;
    let first = store.history(&query).unwrap();
    query.offset = 2;
    let second = store.history(&query).unwrap();
    query.offset = 4;
    let past = store.history(&query).unwrap();
    assert_eq!(
        (ids(&first), ids(&second), ids(&past)),
        (vec!["a", "b"], vec!["c", "d"], vec![])
    );
    assert_eq!((first.total, second.total, past.total), (4, 4, 4));
    let counts = |f: &[bosun_store::FacetCount]| {
        f.iter()
            .map(|c| (c.value.clone(), c.count))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        counts(&first.facets.repos),
        [
            ("/src/app".into(), 2),
            ("/src/tools".into(), 1),
            ("/src/web".into(), 1)
        ]
    );
    assert_eq!(
        counts(&first.facets.models),
        [
            ("gpt-5".into(), 2),
            ("claude-opus".into(), 1),
            ("claude-sonnet".into(), 1)
        ]
    );
    let filtered = store.history(&q("repo:app")).unwrap();
    assert_eq!(
        counts(&filtered.facets.statuses),
        [("completed".into(), 1), ("running".into(), 1)]
    );
    // Without words a hit has no event.
    assert_eq!((first.hits[0].seq, first.hits[0].snippet.len()), (None, 0));
}

#[test]
fn the_migration_indexes_an_existing_journal_as_appending_does() {
    let (_dir, path, store) = journal();
    journal_of_four(&store);
    drop(store);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let dump = |conn: &rusqlite::Connection| {
        let mut stmt = conn
            .prepare("SELECT rowid, text, task_id, seq, kind FROM search ORDER BY rowid")
            .unwrap();
        stmt.query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, i64>(3)?,
                r.get::<_, String>(4)?,
            ))
        })
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap()
    };
    let states = |conn: &rusqlite::Connection| {
        let mut stmt = conn
            .prepare("SELECT id, review_state, files_changed FROM tasks ORDER BY id")
            .unwrap();
        stmt.query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, i64>(2)?,
            ))
        })
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap()
    };
    let live = (dump(&conn), states(&conn));
    assert!(live.0.len() > 15, "{live:?}");
    // Back to schema 2: the same events, no index, no new columns (and no step 4's marks, no
    // step 5's metrics, reservations and token columns, no step 6's tag cache, no step 7's
    // memories, no step 8's sub-agent columns, no step 9's batches, no step 10's imports).
    conn.execute_batch(
        "DROP TABLE import_responses; DROP TABLE import_files; ALTER TABLE tasks DROP COLUMN source;
         DROP TABLE batch_items; DROP TABLE batches; DROP INDEX tasks_by_parent; ALTER TABLE tasks DROP COLUMN parent_task_id;
         ALTER TABLE tasks DROP COLUMN role; ALTER TABLE tasks DROP COLUMN depth;
         DROP TABLE memories; DROP TABLE tag_cache; DROP TABLE task_metrics; DROP TABLE budget_reservations;
         DROP TRIGGER usage_into_hourly; DROP TRIGGER usage_out_of_hourly; DROP TABLE usage_hourly;
         ALTER TABLE tasks DROP COLUMN cache_write_1h_tokens; ALTER TABLE tasks DROP COLUMN reasoning_tokens;
         DROP TABLE task_marks; DROP TRIGGER events_leave_search; DROP TRIGGER tasks_leave_search; DROP TABLE search;
         DROP INDEX tasks_by_number; ALTER TABLE tasks DROP COLUMN number;
         ALTER TABLE tasks DROP COLUMN review_state; ALTER TABLE tasks DROP COLUMN files_changed;
         PRAGMA user_version = 2;",
    )
    .unwrap();
    drop(conn);
    let store = Store::open(&path).unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    assert_eq!((dump(&conn), states(&conn)), live);
    assert_eq!(search(&store, "linker_failure"), ["a"]);
}

#[test]
fn a_task_written_without_a_number_is_given_one_when_indexed() {
    let (_dir, path, store) = journal();
    journal_of_four(&store);
    // As a writer that predates `tasks.number` (an import) would leave it.
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(
        "INSERT INTO tasks (id, repo, prompt, created_at, updated_at, provider, model, base_commit,
             branch, worktree, owner_pid, max_steps)
         VALUES ('e', '/src/app', 'p', '2026-11-30T11:00:00.000Z', '2026-11-30T11:00:00.000Z',
             'x', 'm', 'b', 'bosun/e', '/w/e', 1, 5);",
    )
    .unwrap();
    store
        .append_event(&event("e", 1, message("imported walrus")))
        .unwrap();
    assert_eq!(search(&store, "walrus"), ["e"]);
    let number: i64 = conn
        .query_row("SELECT number FROM tasks WHERE id = 'e'", [], |r| r.get(0))
        .unwrap();
    assert_eq!(number, 5);
    // Deleting one event takes its row out of the index.
    conn.execute("DELETE FROM events WHERE task_id = 'e' AND seq = 1", [])
        .unwrap();
    assert_eq!(search(&store, "walrus"), Vec::<String>::new());
}
