//! The statements, with `{S}` standing for the quoted schema.

/// `$4` is the holder with this claim's nonce: a re-send of the statement after it was committed
/// finds the claim it made (`mine`) and takes nothing more.
pub const CLAIM: &str = "
WITH live AS (
    SELECT 1 FROM {S}.sequencers WHERE name = $1::text AND incarnation = $6::bigint FOR SHARE
), mine AS (
    SELECT node_id, token, expires_at FROM {S}.nodes
    WHERE sequencer = $1::text AND holder = $4::text AND expires_at > now()
), free AS (
    SELECT node_id FROM {S}.nodes
    WHERE EXISTS (SELECT 1 FROM live)
      AND sequencer = $1::text AND node_id < $2::bigint AND (holder IS NULL OR expires_at <= now())
      AND NOT EXISTS (SELECT 1 FROM mine)
    ORDER BY (node_id - $3::bigint + $2::bigint) % $2::bigint
    LIMIT 1 FOR UPDATE SKIP LOCKED
), taken AS (
    UPDATE {S}.nodes n SET holder = $4::text, token = n.token + 1,
        expires_at = now() + $5::bigint * interval '1 millisecond'
    FROM free WHERE n.sequencer = $1::text AND n.node_id = free.node_id
    RETURNING n.node_id, n.token, n.expires_at
), fresh AS (
    INSERT INTO {S}.nodes (sequencer, node_id, holder, token, expires_at)
    SELECT $1::text, s.g, $4::text, 1, now() + $5::bigint * interval '1 millisecond'
    FROM (SELECT generate_series($3::bigint, $2::bigint - 1)
          UNION ALL SELECT generate_series(0, $3::bigint - 1)) AS s(g)
    WHERE NOT EXISTS (SELECT 1 FROM taken) AND NOT EXISTS (SELECT 1 FROM mine) AND EXISTS (SELECT 1 FROM live)
      AND NOT EXISTS (SELECT 1 FROM {S}.nodes x WHERE x.sequencer = $1::text AND x.node_id = s.g)
    LIMIT 1
    ON CONFLICT DO NOTHING
    RETURNING node_id, token, expires_at
)
SELECT node_id, token, (extract(epoch FROM expires_at) * 1000)::bigint FROM mine
UNION ALL
SELECT node_id, token, (extract(epoch FROM expires_at) * 1000)::bigint FROM taken
UNION ALL
SELECT node_id, token, (extract(epoch FROM expires_at) * 1000)::bigint FROM fresh";

/// The transaction-level advisory lock a claim's statement is sent under (`$1`: a hash of the claim's
/// nonce), in a transaction of its own ([`super::backend::serialized`]): a re-send of the claim waits
/// until its first send's transaction has ended, so the claim statement's snapshot, taken after the
/// lock, sees what that send committed, and `mine` finds it. Without it, a re-send sent while its first
/// send was still uncommitted (a commit slowed by a loaded disk past the first send's wait) saw neither
/// that claim nor its row (locked, skipped) and took a second node ID, held by nobody until its TTL.
pub const CLAIM_LOCK: &str = "SELECT 1 FROM (SELECT pg_advisory_xact_lock($1::bigint)) AS l";

/// The condition by which [`CLAIM`]'s `mine` finds the claim this holder string made (replaced by
/// `false` in the planted `ClaimWithoutMine`).
pub const MINE: &str = "holder = $4::text AND expires_at > now()";

pub const HELD_COUNT: &str = "
SELECT count(*) FROM {S}.nodes
WHERE sequencer = $1::text AND node_id < $2::bigint AND holder IS NOT NULL AND expires_at > now()";

pub const RENEW: &str = "
UPDATE {S}.nodes SET expires_at = now() + $4::bigint * interval '1 millisecond'
WHERE sequencer = $1::text AND node_id = $2::bigint AND token = $3::bigint
  AND holder IS NOT NULL AND expires_at > now()
RETURNING (extract(epoch FROM expires_at) * 1000)::bigint";

pub const RELEASE: &str = "
UPDATE {S}.nodes SET holder = NULL, expires_at = NULL
WHERE sequencer = $1::text AND node_id = $2::bigint AND token = $3::bigint AND holder IS NOT NULL";

pub const RESERVE: &str = "
UPDATE {S}.nodes SET
    resv_position = CASE WHEN resv_layout = $5::bigint
        AND (resv_position # (1::bigint << 63)) > ($4::bigint # (1::bigint << 63))
        THEN resv_position ELSE $4::bigint END,
    resv_until_ms = CASE WHEN resv_layout = $5::bigint
        AND (resv_until_ms # (1::bigint << 63)) > ($6::bigint # (1::bigint << 63))
        THEN resv_until_ms ELSE $6::bigint END,
    resv_layout = $5::bigint
WHERE sequencer = $1::text AND node_id = $2::bigint AND token = $3::bigint
  AND holder IS NOT NULL AND expires_at > now()";

/// [`super::Store::lower_reservation`]: the same write without the "never lower" guard.
pub const LOWER_RESERVATION: &str = "
UPDATE {S}.nodes SET resv_position = $4::bigint, resv_layout = $5::bigint, resv_until_ms = $6::bigint
WHERE sequencer = $1::text AND node_id = $2::bigint AND token = $3::bigint
  AND holder IS NOT NULL AND expires_at > now()";

pub const RESERVATION: &str = "
SELECT resv_position, resv_layout, resv_until_ms FROM {S}.nodes
WHERE sequencer = $1::text AND node_id = $2::bigint AND resv_position IS NOT NULL";

pub const HOLDERS: &str = "
SELECT node_id, holder, token, (extract(epoch FROM expires_at) * 1000)::bigint, expires_at > now(),
       resv_position, resv_layout, resv_until_ms
FROM {S}.nodes
WHERE sequencer = $1::text AND ((holder IS NOT NULL AND expires_at > now()) OR resv_position IS NOT NULL)
ORDER BY node_id";

pub const CREATE_SEQUENCER: &str = "
WITH ins AS (
    INSERT INTO {S}.sequencers (name, layout, nodes, incarnation, created_unix_ms)
    VALUES ($1::text, $2::text, $3::bigint, nextval('{S}.incarnations'), $4::bigint)
    ON CONFLICT (name) DO NOTHING
    RETURNING name, layout, nodes, incarnation, created_unix_ms
)
SELECT ins.*, coalesce((SELECT f.floor FROM {S}.floors f WHERE f.name = ins.name), 0) FROM ins";

pub const SEQUENCER: &str = "
SELECT s.name, s.layout, s.nodes, s.incarnation, s.created_unix_ms, coalesce(f.floor, 0)
FROM {S}.sequencers s LEFT JOIN {S}.floors f ON f.name = s.name WHERE s.name = $1::text";

pub const SEQUENCERS: &str = "
SELECT s.name, s.layout, s.nodes, s.incarnation, s.created_unix_ms, coalesce(f.floor, 0)
FROM {S}.sequencers s LEFT JOIN {S}.floors f ON f.name = s.name ORDER BY s.name COLLATE \"C\"";

/// Destroy, step 1 (in a transaction): the record of the incarnation, locked.
pub const DESTROY_LOCK: &str = "
SELECT s.name, s.layout, s.nodes, s.incarnation, s.created_unix_ms, coalesce(f.floor, 0)
FROM {S}.sequencers s LEFT JOIN {S}.floors f ON f.name = s.name
WHERE s.name = $1::text AND s.incarnation = $2::bigint FOR UPDATE OF s";

/// Destroy, step 2: end every claim of the name.
pub const DESTROY_CLAIMS: &str =
    "UPDATE {S}.nodes SET holder = NULL, expires_at = NULL WHERE sequencer = $1::text AND holder IS NOT NULL";

/// Destroy, step 3: the reservations.
pub const DESTROY_RESERVATIONS: &str = "
SELECT resv_position, resv_layout, resv_until_ms FROM {S}.nodes
WHERE sequencer = $1::text AND resv_position IS NOT NULL";

/// Destroy, step 4: the raised floor.
pub const DESTROY_FLOOR: &str = "
INSERT INTO {S}.floors (name, floor) VALUES ($1::text, $2::bigint)
ON CONFLICT (name) DO UPDATE SET floor = excluded.floor";

/// Destroy, step 5: the record.
pub const DESTROY: &str =
    "DELETE FROM {S}.sequencers WHERE name = $1::text AND incarnation = $2::bigint";

/// The schema's state: does it exist, its owner, may we use it and create in it, do the tables exist.
pub const SCHEMA_STATE: &str = "
SELECT n.oid IS NOT NULL, coalesce(pg_get_userbyid(n.nspowner), ''),
       coalesce(has_schema_privilege(n.oid, 'USAGE'), false), coalesce(has_schema_privilege(n.oid, 'CREATE'), false),
       current_user::text, current_database()::text,
       CASE WHEN n.oid IS NOT NULL AND has_schema_privilege(n.oid, 'USAGE') THEN
         to_regclass(format('%I.nodes', $1::text)) IS NOT NULL
         AND to_regclass(format('%I.sequencers', $1::text)) IS NOT NULL
         AND to_regclass(format('%I.incarnations', $1::text)) IS NOT NULL
         AND to_regclass(format('%I.rows', $1::text)) IS NOT NULL
         AND to_regclass(format('%I.floors', $1::text)) IS NOT NULL
       ELSE false END
FROM (SELECT 1) one LEFT JOIN pg_namespace n ON n.nspname = $1::text";

pub const CREATE_SCHEMA: &str = "
BEGIN;
SELECT pg_advisory_xact_lock(hashtext('snowmint schema ' || 'SCHEMA_NAME'));
CREATE SCHEMA IF NOT EXISTS {S};
CREATE TABLE IF NOT EXISTS {S}.sequencers (
    name            text   PRIMARY KEY,
    layout          text   NOT NULL,
    nodes           bigint NOT NULL,
    incarnation     bigint NOT NULL,
    created_unix_ms bigint NOT NULL
);
CREATE SEQUENCE IF NOT EXISTS {S}.incarnations;
CREATE TABLE IF NOT EXISTS {S}.floors (
    name  text   PRIMARY KEY,
    floor bigint NOT NULL
);
CREATE TABLE IF NOT EXISTS {S}.nodes (
    sequencer     text        NOT NULL,
    node_id       bigint      NOT NULL,
    holder        text,
    token         bigint      NOT NULL,
    expires_at    timestamptz,
    resv_position bigint,
    resv_layout   bigint,
    resv_until_ms bigint,
    PRIMARY KEY (sequencer, node_id)
);
CREATE TABLE IF NOT EXISTS {S}.rows (
    key   text PRIMARY KEY,
    value text NOT NULL
);
COMMIT;";

pub const ROW: &str = "SELECT value FROM {S}.rows WHERE key = $1::text";

/// Creates a row; answers the value it holds after the statement (the new one if written). On a
/// conflict the row is locked and its newest value answered (`DO UPDATE` to the same value): a re-send
/// that waited on its own first send, still uncommitted, answers that send's value, where a `SELECT`
/// beside a `DO NOTHING` would read the statement's snapshot, older than the first send's commit
/// (`stores::postgres`'s test `a_resend_behind_its_uncommitted_first_send_answers_the_write`).
pub const INSERT_ROW: &str = "
INSERT INTO {S}.rows AS r (key, value) VALUES ($1::text, $2::text)
ON CONFLICT (key) DO UPDATE SET value = r.value RETURNING r.value";

/// Compare-and-set of a row; answers the value it holds after the statement (the new one if written,
/// nothing if there is no row). The comparison is made on the row's newest version, locked (an
/// `UPDATE` that waited on another writer compares what that one committed), so a re-send that waited
/// on its own first send answers that send's value; a `SELECT` beside the `UPDATE` would read the
/// statement's older snapshot ([`INSERT_ROW`]).
pub const UPDATE_ROW: &str = "
UPDATE {S}.rows SET value = CASE WHEN value = $2::text THEN $3::text ELSE value END
WHERE key = $1::text RETURNING value";

/// A schema name quoted for SQL.
pub(super) fn quoted(schema: &str) -> String {
    format!("\"{}\"", schema.replace('"', "\"\""))
}
