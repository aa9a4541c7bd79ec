//! The statements conversations run, and what they share.

// Each turn's statements are one statement each (prepared once per connection), so
// that a turn pays a round trip per step of its own, not per table it touches. Data-
// modifying CTEs run as one statement, so each is all or none.

/// Whether the turn recorded running in `running_turns` (as `r`) is one whose replica
/// stopped: nobody holds its conversation's lock (an advisory lock on a `bigint` shows in
/// `pg_locks` as its high half in `classid`, its low half in `objid`, and `objsubid` 1).
/// A live turn holds its lock from before it is recorded running until after it is not.
macro_rules! abandoned {
    () => {
        "NOT EXISTS (
             SELECT 1 FROM pg_locks
             WHERE locktype = 'advisory' AND granted AND objsubid = 1
               AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
               AND ((classid::BIGINT << 32) | objid::BIGINT)
                   = hashtextextended('conversation:' || r.conversation, 0)
         )"
    };
}

/// The conversations whose running turn a stopped replica left: `$1` one of them, or
/// null for all.
pub(super) const ABANDONED: &str = concat!(
    "SELECT r.conversation FROM running_turns r
     WHERE ($1::TEXT IS NULL OR r.conversation = $1) AND ",
    abandoned!()
);

/// Takes a conversation's lock, or answers false: `$1` the conversation.
pub(super) const TRY_LOCK: &str =
    "SELECT pg_try_advisory_lock(hashtextextended('conversation:' || $1, 0))";

/// Lets a conversation's lock go: `$1` the conversation.
pub(super) const UNLOCK: &str =
    "SELECT pg_advisory_unlock(hashtextextended('conversation:' || $1, 0))";

/// The tail of [`BEGIN_TURN`] and [`SETTLE_LEFT_BEHIND`]: the turn a stopped replica left
/// (`left_behind`, its replica) recorded interrupted (`$2` the stop), the actions it left
/// performing marked unknown (`$3` the detail), never to be run again; answers how many
/// of each.
macro_rules! settle_left_behind {
    () => {
        "interrupted AS (
             INSERT INTO turns (conversation, stop, input_tokens, output_tokens, cost_usd,
                                model_requests, replica)
             SELECT $1, $2, 0, 0, 0, 0, replica FROM left_behind
             RETURNING 1
         ),
         unknown AS (
             UPDATE actions SET state = 'unknown', detail = $3
             WHERE conversation = $1 AND state = 'performing'
             RETURNING 1
         )
         SELECT (SELECT count(*) FROM interrupted), (SELECT count(*) FROM unknown)"
    };
}

/// Under the conversation `$1`'s lock, settles what a turn whose replica stopped left and
/// records the turn `$4` of replica `$5` as running.
pub(super) const BEGIN_TURN: &str = concat!(
    "WITH left_behind AS (
         SELECT replica FROM running_turns WHERE conversation = $1
     ),
     running AS (
         INSERT INTO running_turns (conversation, turn, replica) VALUES ($1, $4, $5)
         ON CONFLICT (conversation) DO UPDATE
             SET turn = excluded.turn, replica = excluded.replica, started_at = now()
     ),
     ",
    settle_left_behind!()
);

/// [`BEGIN_TURN`] without a turn to begin: what a stopped replica left of `$1`, settled.
pub(super) const SETTLE_LEFT_BEHIND: &str = concat!(
    "WITH left_behind AS (
         DELETE FROM running_turns WHERE conversation = $1 RETURNING replica
     ),
     ",
    settle_left_behind!()
);

/// Records how the turn `$9` of `$1` ended and the state it left, and that it no longer
/// runs: `$2` its stop, `$3` and `$4` its tokens, `$5` its cost, `$6` its requests, `$7`
/// the replica, `$8` the state.
/// The end of a turn that keeps its trace: `$1` the conversation, `$2` the turn (its
/// holder's id), `$3` to `$8` its record, `$9` the conversation's state then.
pub(super) const END_TURN: &str = "WITH recorded AS (
         INSERT INTO turns (conversation, stop, input_tokens, output_tokens, cost_usd,
                            model_requests, replica)
         VALUES ($1, $3, $4, $5, $6, $7, $8)
     ),
     stated AS (
         INSERT INTO states (conversation, body) VALUES ($1, $9)
         ON CONFLICT (conversation) DO UPDATE SET body = excluded.body
     )
     DELETE FROM running_turns WHERE conversation = $1 AND turn = $2";

/// The end of a tool call outside a turn (`engine call --conversation`): `$1` the
/// conversation, `$2` the holder's id, `$3` the conversation's state; no turn is recorded.
pub(super) const END_CALL: &str = "WITH stated AS (
         INSERT INTO states (conversation, body) VALUES ($1, $3)
         ON CONFLICT (conversation) DO UPDATE SET body = excluded.body
     )
     DELETE FROM running_turns WHERE conversation = $1 AND turn = $2";

/// [`END_TURN`] for a turn that keeps no trace: `$1` the conversation, `$2` the turn.
pub(super) const END_TURN_UNRECORDED: &str =
    "DELETE FROM running_turns WHERE conversation = $1 AND turn = $2";

/// Stores the messages `$3` at positions `$2`, `$2 + 1`, ... of `$1`, unless a position
/// holds another message already, or `$2` is past the end (a gap): then none. A position
/// holding the same message keeps it. Answers the first position holding another
/// message, if any, and whether `$2` was past the end.
pub(super) const APPEND: &str = "WITH new AS (
         SELECT $2::INTEGER + (position - 1)::INTEGER AS seq, body
         FROM unnest($3::TEXT[]) WITH ORDINALITY AS steps(body, position)
     ),
     clashes AS (
         SELECT new.seq FROM new
         JOIN messages ON messages.conversation = $1 AND messages.seq = new.seq
         WHERE messages.body <> new.body
     ),
     gap AS (
         SELECT $2 > COALESCE(max(seq) + 1, 0) AS past_the_end
         FROM messages WHERE conversation = $1
     ),
     added AS (
         INSERT INTO messages (conversation, seq, body)
         SELECT $1, seq, body FROM new
         WHERE NOT EXISTS (SELECT 1 FROM clashes) AND NOT (SELECT past_the_end FROM gap)
         ON CONFLICT (conversation, seq) DO NOTHING
     )
     SELECT (SELECT min(seq) FROM clashes), (SELECT past_the_end FROM gap)";

/// Makes `$2` and `$3` the owners of `$1` if it has none: answers its owners, or no row
/// when another claim committed the owners after this statement's snapshot.
pub(super) const CLAIM: &str = "WITH claimed AS (
         INSERT INTO owners (conversation, agent, subscriber) VALUES ($1, $2, $3)
         ON CONFLICT (conversation) DO NOTHING
         RETURNING agent, subscriber
     )
     SELECT agent, subscriber FROM claimed
     UNION ALL
     SELECT agent, subscriber FROM owners WHERE conversation = $1";
