//! The journal's schema, as an ordered list of steps. Step `i` takes the schema from version `i` to
//! `i + 1` (tracked in `PRAGMA user_version`) and runs in its own transaction, so a crash mid-upgrade
//! leaves the previous version intact. Never edit a released step: append a new one.

use crate::StoreError;
use rusqlite::{Connection, TransactionBehavior};
use std::path::Path;

const STEPS: &[&str] = &[
    // 1: tasks, their events, checkpoints and token usage.
    r#"
    CREATE TABLE tasks (
        id                  TEXT PRIMARY KEY NOT NULL,
        repo                TEXT NOT NULL,
        prompt              TEXT NOT NULL,
        status              TEXT NOT NULL DEFAULT 'running',
        summary             TEXT,
        created_at          TEXT NOT NULL,
        updated_at          TEXT NOT NULL,
        finished_at         TEXT,
        provider            TEXT NOT NULL,
        model               TEXT NOT NULL,
        base_commit         TEXT NOT NULL,
        branch              TEXT NOT NULL,
        worktree            TEXT NOT NULL,
        input_tokens        INTEGER NOT NULL DEFAULT 0,
        output_tokens       INTEGER NOT NULL DEFAULT 0,
        cached_input_tokens INTEGER NOT NULL DEFAULT 0,
        cache_write_tokens  INTEGER NOT NULL DEFAULT 0,
        cost_usd            REAL NOT NULL DEFAULT 0,
        priced              INTEGER NOT NULL DEFAULT 1,
        tool_calls          INTEGER NOT NULL DEFAULT 0,
        last_seq            INTEGER NOT NULL DEFAULT 0,
        owner_pid           INTEGER NOT NULL,
        owner_started       INTEGER,
        max_steps           INTEGER NOT NULL,
        max_cost_usd        REAL
    ) STRICT;
    CREATE INDEX tasks_by_created ON tasks(created_at);
    CREATE INDEX tasks_by_status ON tasks(status);

    CREATE TABLE events (
        id      INTEGER PRIMARY KEY,
        task_id TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
        seq     INTEGER NOT NULL,
        type    TEXT NOT NULL,
        ts      TEXT NOT NULL,
        json    TEXT NOT NULL,
        UNIQUE (task_id, seq)
    ) STRICT;
    CREATE INDEX events_by_type ON events(task_id, type);
    CREATE INDEX events_by_ts ON events(ts);

    CREATE TABLE checkpoints (
        task_id    TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
        n          INTEGER NOT NULL,
        commit_id  TEXT NOT NULL,
        files      TEXT NOT NULL,
        call_id    TEXT,
        seq        INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (task_id, n)
    ) STRICT;

    CREATE TABLE usage (
        task_id             TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
        seq                 INTEGER NOT NULL,
        model               TEXT NOT NULL,
        input_tokens        INTEGER NOT NULL,
        output_tokens       INTEGER NOT NULL,
        cached_input_tokens INTEGER NOT NULL,
        cache_write_tokens  INTEGER NOT NULL,
        cost_usd            REAL NOT NULL,
        priced              INTEGER NOT NULL,
        ts                  TEXT NOT NULL,
        PRIMARY KEY (task_id, seq)
    ) STRICT;
    CREATE INDEX usage_by_ts ON usage(ts);
    CREATE INDEX usage_by_model ON usage(model);
    "#,
    // 2: the result of a task's checks (passed | failed | error | none), for lists and filters;
    // filled from the events of journals written before it.
    r#"
    ALTER TABLE tasks ADD COLUMN checks TEXT;
    UPDATE tasks SET checks = (
        SELECT CASE
            WHEN EXISTS (SELECT 1 FROM json_each(json_extract(e.json, '$.checks')) c
                         WHERE json_extract(c.value, '$.required') AND
                               json_extract(c.value, '$.status') IN ('failed', 'timed_out') AND
                               NOT json_extract(c.value, '$.only_before_task'))
                THEN 'failed'
            WHEN json_array_length(json_extract(e.json, '$.checks')) > 0 THEN 'passed'
        END
        FROM events e WHERE e.task_id = tasks.id AND e.type = 'task_finished'
        ORDER BY e.seq DESC LIMIT 1
    );
    "#,
    // 3: what the history view lists and searches. `review_state` (unreviewed | in_review |
    // reviewed | merged | discarded) and `files_changed` (distinct paths over the checkpoints) on
    // the task; `number`, the task's stable number in this journal; `search`, an FTS5 table with
    // one row per event that has text, whose rowid is `number << 24 | seq` (so a match names its
    // task without a lookup, and a task's rows are one rowid range), kept by `append_in` and
    // emptied by triggers when an event or a task goes. Each row's text is its parts joined by
    // newlines and cut at 16 384 characters (see `search::event_text`, which must agree with the
    // backfill below). Tool output deltas are not indexed: `tool_call_end` carries the output as
    // the model saw it.
    r#"
    ALTER TABLE tasks ADD COLUMN review_state TEXT NOT NULL DEFAULT 'unreviewed';
    ALTER TABLE tasks ADD COLUMN files_changed INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE tasks ADD COLUMN number INTEGER;
    UPDATE tasks SET number = rowid;
    CREATE UNIQUE INDEX tasks_by_number ON tasks(number);

    CREATE VIRTUAL TABLE search USING fts5(
        text, task_id UNINDEXED, seq UNINDEXED, kind UNINDEXED,
        tokenize = 'unicode61 remove_diacritics 2'
    );
    CREATE TRIGGER events_leave_search AFTER DELETE ON events BEGIN
        DELETE FROM search
        WHERE rowid = (SELECT number FROM tasks WHERE id = old.task_id) * 16777216 + old.seq;
    END;
    CREATE TRIGGER tasks_leave_search AFTER DELETE ON tasks BEGIN
        DELETE FROM search
        WHERE rowid BETWEEN old.number * 16777216 AND old.number * 16777216 + 16777215;
    END;

    INSERT INTO search (rowid, text, task_id, seq, kind)
    SELECT number * 16777216 + seq, text, task_id, seq, type FROM (
        SELECT t.number, e.task_id, e.seq, e.type, substr(CASE e.type
            WHEN 'user_message' THEN json_extract(e.json, '$.text')
            WHEN 'assistant_message' THEN json_extract(e.json, '$.text')
            WHEN 'tool_call_begin' THEN concat_ws(char(10), json_extract(e.json, '$.tool'),
                (SELECT group_concat(a.value, char(10)) FROM json_tree(e.json, '$.args') a
                 WHERE a.type = 'text'))
            WHEN 'tool_call_end' THEN concat_ws(char(10), json_extract(e.json, '$.output'),
                json_extract(e.json, '$.error'))
            WHEN 'checkpoint_created' THEN
                (SELECT group_concat(f.value, char(10)) FROM json_each(e.json, '$.files') f)
            WHEN 'error' THEN json_extract(e.json, '$.message')
            WHEN 'review' THEN json_extract(e.json, '$.comment.body')
            WHEN 'check_finished' THEN concat_ws(char(10), json_extract(e.json, '$.name'),
                json_extract(e.json, '$.summary'),
                (SELECT group_concat(json_extract(f.value, '$.message'), char(10))
                 FROM json_each(e.json, '$.failures') f))
            WHEN 'task_finished' THEN json_extract(e.json, '$.summary')
        END, 1, 16384) AS text
        FROM events e JOIN tasks t ON t.id = e.task_id
        WHERE e.seq < 16777216
    ) WHERE text IS NOT NULL AND text != '';

    UPDATE tasks SET files_changed = (
        SELECT count(DISTINCT f.value) FROM checkpoints c, json_each(c.files) f
        WHERE c.task_id = tasks.id
    );
    UPDATE tasks SET review_state = coalesce((
        SELECT CASE
            WHEN EXISTS (SELECT 1 FROM events m WHERE m.task_id = tasks.id AND m.type = 'review'
                         AND json_extract(m.json, '$.action') = 'merge') THEN 'merged'
            WHEN json_extract(e.json, '$.action') = 'remove_worktree' THEN 'discarded'
            ELSE 'in_review'
        END
        FROM events e WHERE e.task_id = tasks.id AND e.type = 'review'
        ORDER BY e.seq DESC LIMIT 1
    ), 'unreviewed');
    "#,
    // 4: tasks archived out of the lists, and tasks whose transcript was removed (`bosun delete`, the
    // retention setting) while their row and usage rows stay.
    r#"
    CREATE TABLE task_marks (
        task_id                   TEXT PRIMARY KEY NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
        archived_at               TEXT,
        transcript_removed_at     TEXT,
        transcript_removed_by     TEXT,
        transcript_removed_reason TEXT
    ) STRICT;
    "#,
    // 5: disjoint token classes, nullable cost, rates and latency on usage; per-task counters for
    // the metrics; budget reservations. Until 4, `input_tokens` counted the cached and
    // cache-written tokens too: usage rows, task totals and the `usage` events' JSON are rewritten
    // to the uncached count, and an unpriced response's cost becomes null (it was 0). `usage`
    // keeps each response's cost by token class and what caching saved (from its rates; null
    // when it has none), so the dashboards add columns instead of parsing rates. STRICT columns
    // cannot lose NOT NULL, so `usage` is rebuilt.
    r#"
    CREATE TABLE usage_v5 (
        task_id               TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
        seq                   INTEGER NOT NULL,
        model                 TEXT NOT NULL,
        input_tokens          INTEGER NOT NULL,
        output_tokens         INTEGER NOT NULL,
        cached_input_tokens   INTEGER NOT NULL,
        cache_write_tokens    INTEGER NOT NULL,
        cache_write_1h_tokens INTEGER NOT NULL DEFAULT 0,
        reasoning_tokens      INTEGER NOT NULL DEFAULT 0,
        cost_usd              REAL,
        priced                INTEGER NOT NULL,
        reported              INTEGER NOT NULL DEFAULT 0,
        rates                 TEXT,
        latency_ms            INTEGER,
        cost_input            REAL,
        cost_cache_read       REAL,
        cost_cache_write      REAL,
        cost_cache_write_1h   REAL,
        cost_output           REAL,
        cost_reasoning        REAL,
        savings_usd           REAL,
        ts                    TEXT NOT NULL,
        repo                  TEXT NOT NULL DEFAULT '',
        PRIMARY KEY (task_id, seq)
    ) STRICT;
    INSERT INTO usage_v5 (task_id, seq, model, input_tokens, output_tokens, cached_input_tokens,
        cache_write_tokens, cost_usd, priced, ts, repo)
    SELECT u.task_id, u.seq, u.model,
        max(0, u.input_tokens - u.cached_input_tokens - u.cache_write_tokens),
        u.output_tokens, u.cached_input_tokens, u.cache_write_tokens,
        CASE WHEN u.priced THEN u.cost_usd END, u.priced, u.ts, coalesce(t.repo, '')
    FROM usage u LEFT JOIN tasks t ON t.id = u.task_id;
    DROP TABLE usage;
    ALTER TABLE usage_v5 RENAME TO usage;
    CREATE INDEX usage_by_ts ON usage(ts, cost_usd);
    CREATE INDEX usage_by_model ON usage(model);
    CREATE INDEX usage_unpriced ON usage(model) WHERE cost_usd IS NULL;

    -- The usage added up per UTC hour, repository and model, kept by triggers: the dashboards
    -- read it for whole hours (every time zone's midnight is a whole hour or a quarter of one;
    -- the parts of a period that are not whole hours come from `usage` itself).
    CREATE TABLE usage_hourly (
        hour                  TEXT NOT NULL,
        repo                  TEXT NOT NULL,
        model                 TEXT NOT NULL,
        responses             INTEGER NOT NULL DEFAULT 0,
        unpriced              INTEGER NOT NULL DEFAULT 0,
        cost_usd              REAL NOT NULL DEFAULT 0,
        cost_input            REAL NOT NULL DEFAULT 0,
        cost_cache_read       REAL NOT NULL DEFAULT 0,
        cost_cache_write      REAL NOT NULL DEFAULT 0,
        cost_cache_write_1h   REAL NOT NULL DEFAULT 0,
        cost_output           REAL NOT NULL DEFAULT 0,
        cost_reasoning        REAL NOT NULL DEFAULT 0,
        reported_usd          REAL NOT NULL DEFAULT 0,
        unsplit_usd           REAL NOT NULL DEFAULT 0,
        savings_usd           REAL NOT NULL DEFAULT 0,
        input_tokens          INTEGER NOT NULL DEFAULT 0,
        cached_input_tokens   INTEGER NOT NULL DEFAULT 0,
        cache_write_tokens    INTEGER NOT NULL DEFAULT 0,
        cache_write_1h_tokens INTEGER NOT NULL DEFAULT 0,
        output_tokens         INTEGER NOT NULL DEFAULT 0,
        reasoning_tokens      INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (hour, repo, model)
    ) STRICT, WITHOUT ROWID;
    INSERT INTO usage_hourly
    SELECT substr(ts, 1, 13), repo, model, count(*), count(*) - count(cost_usd), total(cost_usd),
        total(cost_input), total(cost_cache_read), total(cost_cache_write),
        total(cost_cache_write_1h), total(cost_output), total(cost_reasoning),
        total(CASE WHEN reported THEN cost_usd END),
        total(CASE WHEN rates IS NULL AND NOT reported THEN cost_usd END), total(savings_usd),
        sum(input_tokens), sum(cached_input_tokens), sum(cache_write_tokens),
        sum(cache_write_1h_tokens), sum(output_tokens), sum(reasoning_tokens)
    FROM usage GROUP BY 1, 2, 3;
    CREATE TRIGGER usage_into_hourly AFTER INSERT ON usage BEGIN
        INSERT INTO usage_hourly VALUES (substr(new.ts, 1, 13), new.repo, new.model, 1,
            new.cost_usd IS NULL, coalesce(new.cost_usd, 0), coalesce(new.cost_input, 0),
            coalesce(new.cost_cache_read, 0), coalesce(new.cost_cache_write, 0),
            coalesce(new.cost_cache_write_1h, 0), coalesce(new.cost_output, 0),
            coalesce(new.cost_reasoning, 0),
            CASE WHEN new.reported THEN coalesce(new.cost_usd, 0) ELSE 0 END,
            CASE WHEN new.rates IS NULL AND NOT new.reported THEN coalesce(new.cost_usd, 0)
                ELSE 0 END,
            coalesce(new.savings_usd, 0), new.input_tokens, new.cached_input_tokens,
            new.cache_write_tokens, new.cache_write_1h_tokens, new.output_tokens,
            new.reasoning_tokens)
        ON CONFLICT (hour, repo, model) DO UPDATE SET
            responses = responses + excluded.responses, unpriced = unpriced + excluded.unpriced,
            cost_usd = cost_usd + excluded.cost_usd, cost_input = cost_input + excluded.cost_input,
            cost_cache_read = cost_cache_read + excluded.cost_cache_read,
            cost_cache_write = cost_cache_write + excluded.cost_cache_write,
            cost_cache_write_1h = cost_cache_write_1h + excluded.cost_cache_write_1h,
            cost_output = cost_output + excluded.cost_output,
            cost_reasoning = cost_reasoning + excluded.cost_reasoning,
            reported_usd = reported_usd + excluded.reported_usd,
            unsplit_usd = unsplit_usd + excluded.unsplit_usd,
            savings_usd = savings_usd + excluded.savings_usd,
            input_tokens = input_tokens + excluded.input_tokens,
            cached_input_tokens = cached_input_tokens + excluded.cached_input_tokens,
            cache_write_tokens = cache_write_tokens + excluded.cache_write_tokens,
            cache_write_1h_tokens = cache_write_1h_tokens + excluded.cache_write_1h_tokens,
            output_tokens = output_tokens + excluded.output_tokens,
            reasoning_tokens = reasoning_tokens + excluded.reasoning_tokens;
    END;
    CREATE TRIGGER usage_out_of_hourly AFTER DELETE ON usage BEGIN
        UPDATE usage_hourly SET responses = responses - 1,
            unpriced = unpriced - (old.cost_usd IS NULL),
            cost_usd = cost_usd - coalesce(old.cost_usd, 0),
            cost_input = cost_input - coalesce(old.cost_input, 0),
            cost_cache_read = cost_cache_read - coalesce(old.cost_cache_read, 0),
            cost_cache_write = cost_cache_write - coalesce(old.cost_cache_write, 0),
            cost_cache_write_1h = cost_cache_write_1h - coalesce(old.cost_cache_write_1h, 0),
            cost_output = cost_output - coalesce(old.cost_output, 0),
            cost_reasoning = cost_reasoning - coalesce(old.cost_reasoning, 0),
            reported_usd = reported_usd
                - CASE WHEN old.reported THEN coalesce(old.cost_usd, 0) ELSE 0 END,
            unsplit_usd = unsplit_usd - CASE WHEN old.rates IS NULL AND NOT old.reported
                THEN coalesce(old.cost_usd, 0) ELSE 0 END,
            savings_usd = savings_usd - coalesce(old.savings_usd, 0),
            input_tokens = input_tokens - old.input_tokens,
            cached_input_tokens = cached_input_tokens - old.cached_input_tokens,
            cache_write_tokens = cache_write_tokens - old.cache_write_tokens,
            cache_write_1h_tokens = cache_write_1h_tokens - old.cache_write_1h_tokens,
            output_tokens = output_tokens - old.output_tokens,
            reasoning_tokens = reasoning_tokens - old.reasoning_tokens
        WHERE hour = substr(old.ts, 1, 13) AND repo = old.repo AND model = old.model;
        DELETE FROM usage_hourly
        WHERE hour = substr(old.ts, 1, 13) AND repo = old.repo AND model = old.model
            AND responses <= 0;
    END;

    ALTER TABLE tasks ADD COLUMN cache_write_1h_tokens INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE tasks ADD COLUMN reasoning_tokens INTEGER NOT NULL DEFAULT 0;
    UPDATE tasks SET input_tokens = max(0, input_tokens - cached_input_tokens - cache_write_tokens);

    UPDATE events SET json = json_set(json,
        '$.input_tokens', max(0, json_extract(json, '$.input_tokens')
            - coalesce(json_extract(json, '$.cached_input_tokens'), 0)
            - coalesce(json_extract(json, '$.cache_write_tokens'), 0)),
        '$.cost_usd', CASE WHEN json_extract(json, '$.priced') THEN json_extract(json, '$.cost_usd') END)
    WHERE type = 'usage';

    CREATE TABLE task_metrics (
        task_id                   TEXT PRIMARY KEY NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
        user_messages             INTEGER NOT NULL DEFAULT 0,
        approvals_asked           INTEGER NOT NULL DEFAULT 0,
        denials                   INTEGER NOT NULL DEFAULT 0,
        requests_for_changes      INTEGER NOT NULL DEFAULT 0,
        hunks_rejected            INTEGER NOT NULL DEFAULT 0,
        hunks_unrejected          INTEGER NOT NULL DEFAULT 0,
        unknown_tools             INTEGER NOT NULL DEFAULT 0,
        model_errors              INTEGER NOT NULL DEFAULT 0,
        last_call_denied          INTEGER NOT NULL DEFAULT 0,
        checks_first_round_failed INTEGER NOT NULL DEFAULT 0,
        imported                  INTEGER NOT NULL DEFAULT 0
    ) STRICT;
    INSERT INTO task_metrics (task_id, user_messages, approvals_asked, denials,
        requests_for_changes, hunks_rejected, hunks_unrejected, unknown_tools, model_errors,
        last_call_denied, checks_first_round_failed)
    SELECT t.id,
        (SELECT count(*) FROM events e WHERE e.task_id = t.id AND e.type = 'user_message'
            AND coalesce(json_extract(e.json, '$.origin'), '') != 'checks'),
        (SELECT count(*) FROM events e WHERE e.task_id = t.id AND e.type = 'approval_requested'),
        (SELECT count(*) FROM events e WHERE e.task_id = t.id AND e.type = 'approval_resolved'
            AND json_extract(e.json, '$.decision') = 'deny'),
        (SELECT count(*) FROM events e WHERE e.task_id = t.id AND e.type = 'review'
            AND json_extract(e.json, '$.action') = 'request_changes'),
        (SELECT coalesce(sum(json_array_length(e.json, '$.hunks')), 0) FROM events e
            WHERE e.task_id = t.id AND e.type = 'review' AND json_extract(e.json, '$.action') = 'reject'),
        (SELECT coalesce(sum(json_array_length(e.json, '$.hunks')), 0) FROM events e
            WHERE e.task_id = t.id AND e.type = 'review' AND json_extract(e.json, '$.action') = 'unreject'),
        (SELECT count(*) FROM events e WHERE e.task_id = t.id AND e.type = 'tool_call_end'
            AND json_extract(e.json, '$.error') LIKE 'there is no tool named %'),
        (SELECT count(*) FROM events e WHERE e.task_id = t.id AND e.type = 'error'
            AND json_extract(e.json, '$.code')
                IN ('model_error', 'rate_limited', 'model_timeout', 'response_too_large')),
        coalesce((SELECT json_extract(e.json, '$.status') = 'denied' FROM events e
            WHERE e.task_id = t.id AND e.type = 'tool_call_end' ORDER BY e.seq DESC LIMIT 1), 0),
        EXISTS (SELECT 1 FROM events f JOIN events s ON s.task_id = f.task_id
                AND s.type = 'check_started'
                AND json_extract(s.json, '$.check_id') = json_extract(f.json, '$.check_id')
            WHERE f.task_id = t.id AND f.type = 'check_finished'
                AND coalesce(json_extract(f.json, '$.required'), 1)
                AND json_extract(f.json, '$.status') IN ('failed', 'timed_out')
                AND NOT coalesce(json_extract(f.json, '$.only_before_task'), 0)
                AND json_extract(s.json, '$.round') = 1)
    FROM tasks t;

    CREATE TABLE budget_reservations (
        id          INTEGER PRIMARY KEY,
        task_id     TEXT NOT NULL,
        repo        TEXT NOT NULL,
        amount_usd  REAL NOT NULL,
        pid         INTEGER NOT NULL,
        pid_started INTEGER,
        created_at  TEXT NOT NULL
    ) STRICT;
    "#,
    // 6: the repository map's tags, shared by every worktree and task: keyed by the file's git
    // blob id, its language and the tags' version.
    r#"
    CREATE TABLE tag_cache (
        blob     TEXT NOT NULL,
        language TEXT NOT NULL,
        version  INTEGER NOT NULL,
        tags     TEXT NOT NULL,
        used_at  TEXT NOT NULL,
        PRIMARY KEY (blob, language, version)
    ) STRICT, WITHOUT ROWID;
    "#,
    // 7: memory per repository: what Bosun learned across tasks (`verification`,
    // `failed_approach`, `co_change`) and what the user wrote (`convention`), keyed by the
    // repository as `task_started.repo` has it. The same kind and text again is the same row
    // (`seen` counts the tasks it came from); at most 50 rows per repository, the oldest unpinned
    // going first. A deleted memory is deleted. `source_task` is not a foreign key: a memory
    // outlives the task it came from.
    r#"
    CREATE TABLE memories (
        id          INTEGER PRIMARY KEY,
        repo        TEXT NOT NULL,
        kind        TEXT NOT NULL,
        text        TEXT NOT NULL,
        pinned      INTEGER NOT NULL DEFAULT 0,
        seen        INTEGER NOT NULL DEFAULT 1,
        created_at  TEXT NOT NULL,
        updated_at  TEXT NOT NULL,
        source_task TEXT,
        UNIQUE (repo, kind, text)
    ) STRICT;
    CREATE INDEX memories_by_repo ON memories(repo, updated_at);
    "#,
    // 8: sub-agents: a child task (a `delegate` call or a plan node) names its parent, the role
    // whose model ran it and its depth (the user's task is 0). Lists, history and statistics
    // count top-level tasks; costs include children.
    r#"
    ALTER TABLE tasks ADD COLUMN parent_task_id TEXT;
    ALTER TABLE tasks ADD COLUMN role TEXT;
    ALTER TABLE tasks ADD COLUMN depth INTEGER NOT NULL DEFAULT 0;
    CREATE INDEX tasks_by_parent ON tasks(parent_task_id);
    "#,
    // 9: batches: a persistent queue of tasks (`bosun batch`) or the runs of a comparison
    // (`bosun compare`). An item is `queued`, then `started` with its task's id written before
    // the task exists (a crash between the two never runs it twice), then `done`. A batch is
    // finished when every item is done; otherwise it runs while its owner lives, and is
    // interrupted (resumable) when the owner died.
    r#"
    CREATE TABLE batches (
        id            TEXT PRIMARY KEY NOT NULL,
        kind          TEXT NOT NULL,
        name          TEXT NOT NULL,
        concurrency   INTEGER NOT NULL,
        spec          TEXT NOT NULL,
        created_at    TEXT NOT NULL,
        finished_at   TEXT,
        owner_pid     INTEGER NOT NULL,
        owner_started INTEGER
    ) STRICT;
    CREATE INDEX batches_by_created ON batches(created_at);

    CREATE TABLE batch_items (
        batch_id    TEXT NOT NULL REFERENCES batches(id) ON DELETE CASCADE,
        n           INTEGER NOT NULL,
        label       TEXT,
        spec        TEXT NOT NULL,
        state       TEXT NOT NULL DEFAULT 'queued',
        task_id     TEXT,
        error       TEXT,
        started_at  TEXT,
        finished_at TEXT,
        PRIMARY KEY (batch_id, n)
    ) STRICT;
    CREATE INDEX batch_items_by_task ON batch_items(task_id);
    "#,
    // 10: other agents' sessions (Claude Code, Codex) read into the journal, read-only. `source`
    // names where a task came from (`claude-code`, `codex`; null for Bosun's own): such a task's
    // spend shows in the costs but counts toward no budget, and the statistics leave it out (its
    // `task_metrics.imported`). `import_files` remembers how far each session file was read (the
    // byte after its last complete line, and the reader's state there), so a re-scan reads only
    // what is new; `import_responses` the model responses already counted (Claude Code copies a
    // resumed session's messages into the new file).
    r#"
    ALTER TABLE tasks ADD COLUMN source TEXT;
    CREATE TABLE import_files (
        path       TEXT PRIMARY KEY NOT NULL,
        source     TEXT NOT NULL,
        task_id    TEXT NOT NULL,
        offset     INTEGER NOT NULL,
        lines      INTEGER NOT NULL DEFAULT 0,
        malformed  INTEGER NOT NULL DEFAULT 0,
        state      TEXT NOT NULL DEFAULT '{}',
        updated_at TEXT NOT NULL
    ) STRICT;
    CREATE TABLE import_responses (
        key TEXT PRIMARY KEY NOT NULL
    ) STRICT, WITHOUT ROWID;
    "#,
];

/// The schema version this build of Bosun writes.
pub const SCHEMA_VERSION: u32 = STEPS.len() as u32;

/// Brings the journal up to [`SCHEMA_VERSION`], one step per transaction. Safe to race with other
/// processes opening the same file: each step re-reads the version under the write lock.
pub(crate) fn migrate(conn: &mut Connection, path: &Path) -> Result<(), StoreError> {
    migrate_to(conn, path, SCHEMA_VERSION)
}

/// Creates (or brings up) the journal at `path` at schema `version` only, without opening it as a
/// [`crate::Store`]: for tests of the migrations, which need journals written by older Bosuns.
#[doc(hidden)]
pub fn create_at_version(path: &Path, version: u32) -> Result<(), StoreError> {
    let open_err = |source| StoreError::Open {
        path: path.to_path_buf(),
        source,
    };
    let mut conn = Connection::open(path).map_err(open_err)?;
    migrate_to(&mut conn, path, version.min(SCHEMA_VERSION))
}

fn migrate_to(conn: &mut Connection, path: &Path, target: u32) -> Result<(), StoreError> {
    loop {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let found: u32 = tx.pragma_query_value(None, "user_version", |r| r.get(0))?;
        if found > SCHEMA_VERSION {
            return Err(StoreError::NewerSchema {
                path: path.to_path_buf(),
                found,
                supported: SCHEMA_VERSION,
            });
        }
        let Some(step) = STEPS.get(found as usize).filter(|_| found < target) else {
            return Ok(());
        };
        let fail = |source: rusqlite::Error| StoreError::Migration {
            path: path.to_path_buf(),
            step: found + 1,
            source,
        };
        tx.execute_batch(step).map_err(fail)?;
        tx.pragma_update(None, "user_version", found + 1)
            .map_err(fail)?;
        tx.commit().map_err(fail)?;
    }
}
