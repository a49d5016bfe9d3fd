//! The PostgreSQL store: claims, renewals and reservations as single statements on one table, judged by
//! the database's clock (`now()`), with a per-node fencing counter.
//!
//! The schema (default `snowmint`; `?schema=NAME` in the URL picks another) is created on first use if
//! missing, under an advisory lock so that many processes starting at once create it once:
//!
//! ```sql
//! CREATE SCHEMA IF NOT EXISTS snowmint;
//! CREATE TABLE IF NOT EXISTS snowmint.sequencers (
//!     name            text   PRIMARY KEY,
//!     layout          text   NOT NULL,   -- canonical layout text (snowmint_coord::layout_text)
//!     nodes           bigint NOT NULL,   -- node IDs 0..nodes
//!     incarnation     bigint NOT NULL,   -- from snowmint.incarnations: new on every (re-)creation
//!     created_unix_ms bigint NOT NULL
//! );
//! CREATE SEQUENCE IF NOT EXISTS snowmint.incarnations;
//! CREATE TABLE IF NOT EXISTS snowmint.floors (   -- per name, raised by each destroy, never deleted
//!     name  text   PRIMARY KEY,
//!     floor bigint NOT NULL                      -- the value floor (u64 bits)
//! );
//! CREATE TABLE IF NOT EXISTS snowmint.nodes (
//!     sequencer     text        NOT NULL,
//!     node_id       bigint      NOT NULL,
//!     holder        text,                 -- NULL: free; else the holder, U+001F, the claim's nonce
//!     token         bigint      NOT NULL, -- fencing counter: +1 on every claim, never reset
//!     expires_at    timestamptz,          -- by the database's clock
//!     resv_position bigint,               -- reservation (u64 bits), kept across release and expiry
//!     resv_layout   bigint,
//!     resv_until_ms bigint,
//!     PRIMARY KEY (sequencer, node_id)
//! );
//! CREATE TABLE IF NOT EXISTS snowmint.rows (  -- range allocation (crate::range): one row per counter
//!     key   text PRIMARY KEY,
//!     value text NOT NULL
//! );
//! ```
//!
//! - **Claim**: one statement takes the first row of the sequencer whose holder is NULL or expired
//!   (`expires_at <= now()`), `FOR UPDATE SKIP LOCKED` so concurrent claimers never wait on each other,
//!   increments its `token` and sets `expires_at = now() + ttl`; when no such row exists it inserts the
//!   first missing node ID at or after `start` (token 1). The fencing token is the row's `token`.
//! - **Renewal**: `UPDATE … SET expires_at = now() + ttl WHERE token = $token AND expires_at > now()`.
//! - **Reservation**: `UPDATE … SET resv_… WHERE token = $token AND expires_at > now()` — a holder whose
//!   claim expired or was taken writes nothing and gets `LEASE_LOST`. Under the same layout
//!   fingerprint the statement keeps the larger position and end time (`CASE`, compared as unsigned
//!   64-bit: `# (1 << 63)` flips the sign bit), so a stale write — delayed, say queued on a connection
//!   the client gave up on, or re-sent after a higher one — matches the row, changes nothing and
//!   reports success (the stored reservation covers it): one statement, atomic with the token check.
//!   Committed before it returns (PostgreSQL's default `synchronous_commit = on`).
//! - **Rows**: compare-and-set is `UPDATE … SET value = $new WHERE key = $key AND value = $expected`
//!   (`INSERT … ON CONFLICT DO NOTHING` for an absent row); one statement, so atomic, and committed
//!   before it returns. The statement answers the value the row holds after it, so that a re-send
//!   that finds the caller's own new text reports it written.
//! - **Destroy** is one transaction: lock the `sequencers` row of the incarnation (`FOR UPDATE`; none:
//!   nothing happens), end every claim of the name (which waits for any reservation in flight, and makes
//!   every later renewal and reservation of those claims fail), read the reservations, raise the name's
//!   `floors` row ([`crate::store::floor_after`]) and delete the `sequencers` row. A claim takes the
//!   `sequencers` row of its incarnation `FOR SHARE` in the same statement, so no holder of a destroyed
//!   incarnation claims or reserves after its floor was computed. Node rows (tokens, reservations) stay.
//!   A record's floor is its name's `floors` row (which changes only when the live record is destroyed).
//!
//! A statement whose connection breaks, or whose answer does not come within the request timeout, is
//! sent again (at most two sends, none begun once the connect timeout and two request timeouts have
//! passed: `Resend` in `coord/src/stores/remote.rs`; after a timeout on a second connection — the store keeps
//! two once a statement has timed out, the one whose answer is late draining beside the other, so a
//! re-send never waits behind a late answer — else on a new connection), though an earlier send may
//! have been committed (or still be, later, on the connection given up on). A connection whose
//! answer was late is known to be draining until an empty query sent after the late statement is
//! answered (answers come in order): no statement is sent behind it while it drains (the second
//! connection is used, or a new one when that one drains too). Each statement is one
//! round trip (`query_typed`: parse, bind and execute sent at once), on a new connection too. A
//! statement's first send waits a quarter of the answer timeout (`crate::stores::remote::first_answer_timeout`),
//! its re-send the whole. A login is several answers: a call makes up to three connection attempts
//! (apart from its two sends, within the same budget), each, on a real database, logins on threads of
//! their own, one more every quarter of the answer timeout while none has completed and at once after
//! one failed unanswered, six at most (the first to complete used, the next kept as the second
//! connection); under `sslmode=prefer` a server that said no to TLS once is not asked again by this
//! process (one answer fewer per login); once a login or an answer was late, a missing second
//! connection is opened in the background after an answer. So
//! answers that are held back or lost now and then cost a re-send, not the claim or the keeper round. Every write is safe so (the re-send rule of [`crate::store`]): renewals,
//! releases and reservations are conditional on the fencing token and write the same values again (a
//! reservation never below the stored one);
//! a row's re-send finds its own text; a sequencer record's re-send finds the record it created (same
//! configuration); a claim's re-send finds the claim it made: the `holder` column holds the holder's
//! description and, after a `U+001F`, the claim's nonce.
//!
//! **TLS** (rustls, `coord/src/stores/tls.rs`) with libpq's parameters and meanings: `sslmode` = `disable` (plain),
//! `prefer` (the default: TLS when the server offers it, else plain), `require` (TLS, the certificate
//! not checked — unless `sslrootcert` names a root file: then as `verify-ca`), `verify-ca` (the chain
//! up to `sslrootcert`), `verify-full` (the chain and the host name); `sslrootcert=PATH` (or `system`:
//! the Mozilla roots, and `verify-full` by default, as libpq 16); without it `verify-ca`/`verify-full`
//! read `~/.postgresql/root.crt` as libpq does. A root file given to `prefer` checks the chain too.
//! `sslcert`/`sslkey` offer a client certificate. Passwords go by whatever the server asks
//! (SCRAM-SHA-256 with channel binding over TLS, or MD5/plain); the password is never in a message.
//!
//! Every statement runs under [`PostgresStore::REQUEST_TIMEOUT`] (once a claim was asked for, a quarter
//! of the shortest TTL, at least 200 ms, as etcd's answer timeout) (a server that stops answering, even a
//! stopped one whose kernel still accepts connections, cannot hang a caller), and a call sends its
//! statement at most twice (above), so it ends within the connect timeout and two request
//! timeouts plus one more send's connect and request timeouts.
//!
//! Statements go through [`backend::Connect`] ("run this store statement with these parameters on a
//! connection"; tokio-postgres by default); the deterministic simulation runs this store — its re-send on
//! a new connection, its timeouts, how it reads each answer, its error messages — over an in-memory
//! database with the statements' semantics through the same seam (`sim/src/postgres.rs`).

#[doc(hidden)] // the simulation's seam (sim/src/postgres.rs)
pub mod backend;
mod sql;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use snowmint::ErrorCode;
use tokio_postgres::config::SslMode;
use tokio_postgres::error::SqlState;

use backend::{Connect, Connection, Failure, Param, Row, Statement, Value};

use crate::stores::tls::{client_config, Verify};

use crate::base::defect::{Defect, Hook};
use crate::base::error::{Error, Result};
use crate::base::store::{
    Claim, ClaimRequest, HeldBy, NodeState, Reservation, SequencerConfig, SequencerRecord, Store,
};
use crate::stores::process_local::ProcessLocal;
use crate::stores::remote::Created;

/// A PostgreSQL database as a [`Store`].
#[derive(Debug)]
pub struct PostgresStore {
    /// The quoted schema (for messages).
    schema: String,
    described: String,
    connect_timeout: Duration,
    request_timeout: Duration,
    /// The shortest claim TTL asked of this store, ms (0: none yet); see [`PostgresStore::answer_timeout`].
    shortest_ttl_ms: std::sync::atomic::AtomicU64,
    /// The open connection (`None`: opened on the next call). Dropped before `connect`. In a process
    /// forked after the store was opened: neither used nor dropped ([`ProcessLocal`]).
    conn: ProcessLocal<Mutex<Option<Box<dyn Connection>>>>,
    /// A second connection: the one a statement timed out on, kept while its late answer drains, to
    /// which the next timeout's re-send goes ([`PostgresStore::with_client`]). Locked inside `conn`.
    spare: ProcessLocal<Slot>,
    /// A spare connection is being opened in the background ([`PostgresStore::refill_spare`]).
    refilling: Arc<std::sync::atomic::AtomicBool>,
    /// How many times [`Store::idle`] closed the connections (changed under the spare's lock): a
    /// connection opened in the background is kept only if none did since its opening began
    /// ([`keep_spare`]).
    idled: Arc<std::sync::atomic::AtomicU64>,
    /// A statement's answer was late on this store once (then it keeps a spare connection).
    late: std::sync::atomic::AtomicBool,
    /// When a statement was last answered on this store's connections (`None`: not since opened).
    answered_at: Mutex<Option<std::time::Instant>>,
    /// How connections are opened ([`backend::Driver`], or a simulated database).
    connect: Arc<dyn Connect>,
    /// A defect planted on purpose (feature `planted-defects`, the simulation's own tests).
    defect: Hook,
}

/// Whether the server of the driver URL `key` (password and TLS parameters included) answered a TLS
/// request of `sslmode=prefer` with "no", shared by the stores of `key` in this process
/// ([`backend::Driver`]: later logins do not ask again). At most 64 keys are remembered (others get a
/// flag of their own); the keys never leave this table.
fn plain_flag(key: &str) -> Arc<std::sync::atomic::AtomicBool> {
    static PLAIN: Mutex<Vec<(String, Arc<std::sync::atomic::AtomicBool>)>> = Mutex::new(Vec::new());
    let mut flags = PLAIN.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, f)) = flags.iter().find(|(k, _)| k == key) {
        return f.clone();
    }
    let flag = Arc::new(std::sync::atomic::AtomicBool::new(false));
    if flags.len() < 64 {
        flags.push((key.to_string(), flag.clone()));
    }
    flag
}

/// One unit of work on a connection.
/// A connection slot shared with the threads that open connections ahead of need.
type Slot = Arc<Mutex<Option<Box<dyn Connection>>>>;

/// Keeps `c`, a connection opened in the background (a hedged login that lost its race, a refilled
/// spare), as the store's spare: when there is none and the store was not idled since its opening
/// began (`idled` was `epoch` then, [`Store::idle`]); else closes it. Kept after an idle, a login
/// completed late would hold a connection nothing uses: a shared lease's member that is not its keeper
/// holds none (measured before: 16 of 64 joined database backends held one on a loaded host).
fn keep_spare(
    spare: &Slot,
    idled: &std::sync::atomic::AtomicU64,
    epoch: u64,
    c: Box<dyn Connection>,
) {
    let mut slot = spare.lock().unwrap_or_else(|p| p.into_inner());
    if idled.load(std::sync::atomic::Ordering::SeqCst) == epoch
        && slot.as_ref().is_none_or(|s| s.is_closed())
    {
        *slot = Some(c);
    } else {
        drop(slot);
        c.close();
    }
}

/// Connection attempts of one call at most ([`PostgresStore::with_client`]).
const CONNECT_TRIES: u32 = 3;

/// Logins of one connection attempt at most ([`PostgresStore::connect_hedged`]).
const LOGINS: u32 = 6;

/// One piece of work on a connection, given how long to wait for each answer.
trait Operation<T>:
    Fn(&mut dyn Connection, Duration) -> std::result::Result<T, Failure> + Sync
{
}

impl<T, F: Fn(&mut dyn Connection, Duration) -> std::result::Result<T, Failure> + Sync> Operation<T>
    for F
{
}

/// Separates the holder's description from the claim's nonce in the `holder` column.
const CLAIM_MARK: char = '\u{1f}';

/// A reservation from its three columns (`resv_position, resv_layout, resv_until_ms`).
fn reservation_of(row: &Row) -> Reservation {
    Reservation {
        position: int(row, 0) as u64,
        layout_fingerprint: int(row, 1) as u64,
        until_unix_ms: int(row, 2) as u64,
    }
}

/// Column `i` of an answered row, as the statement's text types it (a mismatch is a defect of this
/// module: it panics, as the driver's typed access did).
fn opt_int(row: &Row, i: usize) -> Option<i64> {
    match &row[i] {
        Value::Int(v) => Some(*v),
        Value::Null => None,
        other => panic!("column {i}: {other:?} is not a bigint"),
    }
}

fn int(row: &Row, i: usize) -> i64 {
    opt_int(row, i).unwrap_or_else(|| panic!("column {i}: NULL, not a bigint"))
}

fn opt_text(row: &Row, i: usize) -> Option<&str> {
    match &row[i] {
        Value::Text(v) => Some(v),
        Value::Null => None,
        other => panic!("column {i}: {other:?} is not text"),
    }
}

fn text(row: &Row, i: usize) -> &str {
    opt_text(row, i).unwrap_or_else(|| panic!("column {i}: NULL, not text"))
}

fn opt_boolean(row: &Row, i: usize) -> Option<bool> {
    match &row[i] {
        Value::Bool(v) => Some(*v),
        Value::Null => None,
        other => panic!("column {i}: {other:?} is not a boolean"),
    }
}

fn boolean(row: &Row, i: usize) -> bool {
    opt_boolean(row, i).unwrap_or_else(|| panic!("column {i}: NULL, not a boolean"))
}

/// A value as PostgreSQL `bigint` (u64 bits kept: positions may use all 64).
fn big(v: u64) -> i64 {
    v as i64
}

/// Opens the PostgreSQL store of a parsed `postgres://` URL (the node-source dispatch,
/// [`crate::source::open_store`]).
pub fn open(url: &crate::base::url::PostgresUrl) -> Result<std::sync::Arc<dyn Store>> {
    Ok(std::sync::Arc::new(PostgresStore::connect(&url.url)?))
}

impl PostgresStore {
    /// Connection timeout: the whole connection (TCP connect, TLS-less startup and authentication),
    /// one bound. Longer than an answer's: a loaded server (many processes starting at once) takes
    /// seconds to start a backend.
    pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(4);
    /// Timeout for one statement's answer.
    pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(2);

    /// A store on the database of `url` (`postgres://USER[:PASSWORD]@HOST:PORT/DB`, libpq's URL form;
    /// snowmint's own parameters `sequencer`, `ttl` are ignored here, `schema` picks the schema). Connects,
    /// and creates the schema if it is missing, before returning.
    pub fn connect(url: &str) -> Result<PostgresStore> {
        Self::connect_with_timeouts(url, Self::CONNECT_TIMEOUT, Self::REQUEST_TIMEOUT)
    }

    /// [`PostgresStore::connect`] with other timeouts.
    pub fn connect_with_timeouts(
        url: &str,
        connect_timeout: Duration,
        request_timeout: Duration,
    ) -> Result<PostgresStore> {
        let (base, params) = url.split_once('?').unwrap_or((url, ""));
        let mut schema = "snowmint".to_string();
        let mut passed = Vec::new();
        let mut sslmode = "prefer".to_string();
        let mut files = crate::base::url::TlsFiles::default();
        let mut system_roots = false;
        let mut tls_params = Vec::new();
        for param in params.split('&').filter(|p| !p.is_empty()) {
            let path = |value: &str| -> Result<Option<std::path::PathBuf>> {
                crate::base::url::percent_decode(value)
                    .map(|v| Some(v.into()))
                    .ok_or_else(|| {
                        Error::invalid(format!(
                            "{}: bad %-escape in {param:?}",
                            crate::base::error::redact_secrets(url)
                        ))
                    })
            };
            if param.starts_with("ssl") && !param.starts_with("sslnegotiation=") {
                tls_params.push(param);
            }
            match param.split_once('=').unwrap_or((param, "")) {
                ("sslmode", value) => sslmode = value.to_string(),
                ("sslrootcert", "system") => system_roots = true,
                ("sslrootcert", value) => files.ca = path(value)?,
                ("sslcert", value) => files.cert = path(value)?,
                ("sslkey", value) => files.key = path(value)?,
                ("schema", value) => {
                    let ok = (1..=63).contains(&value.len())
                        && value
                            .bytes()
                            .all(|b| b.is_ascii_alphanumeric() || b == b'_')
                        && !value.as_bytes()[0].is_ascii_digit();
                    if !ok {
                        return Err(Error::invalid(format!(
                            "{}: schema {value:?} is not 1 to 63 letters, digits and underscores (not starting \
                             with a digit)",
                            crate::base::error::redact_secrets(url)
                        )));
                    }
                    schema = value.to_string();
                }
                ("sequencer" | "ttl", _) => {}
                _ => passed.push(param),
            }
        }
        let libpq_url = if passed.is_empty() {
            base.to_string()
        } else {
            format!("{base}?{}", passed.join("&"))
        };
        // What messages show: the URL the driver gets and the TLS parameters, without the password.
        let described =
            crate::base::error::redact_secrets(&match (passed.is_empty(), tls_params.is_empty()) {
                (_, true) => libpq_url.clone(),
                (true, false) => format!("{base}?{}", tls_params.join("&")),
                (false, false) => format!("{libpq_url}&{}", tls_params.join("&")),
            });
        let mut config: tokio_postgres::Config = libpq_url
            .parse()
            .map_err(|e| Error::invalid(format!("{described}: not a PostgreSQL URL: {e}")))?;
        if system_roots && sslmode == "prefer" && !params.contains("sslmode=") {
            sslmode = "verify-full".into();
        }
        let (mode, verify) = match sslmode.as_str() {
            "disable" => (SslMode::Disable, Verify::Nothing),
            "prefer" | "require" if files.ca.is_none() && !system_roots => {
                (if sslmode == "prefer" { SslMode::Prefer } else { SslMode::Require }, Verify::Nothing)
            }
            "prefer" => (SslMode::Prefer, Verify::Chain),
            "require" | "verify-ca" => (SslMode::Require, Verify::Chain),
            "verify-full" => (SslMode::Require, Verify::Full),
            other => {
                return Err(Error::invalid(format!(
                    "{described}: sslmode={other:?} is not one of disable, prefer, require, verify-ca, verify-full"
                )))
            }
        };
        if verify != Verify::Nothing && files.ca.is_none() && !system_roots {
            // libpq's default root file.
            let default = std::env::var_os("HOME")
                .map(|h| std::path::Path::new(&h).join(".postgresql/root.crt"))
                .filter(|p| p.exists())
                .ok_or_else(|| {
                    Error::invalid(format!(
                        "{described}: sslmode={sslmode} checks the server's certificate and needs root \
                         certificates: give sslrootcert=PATH (or sslrootcert=system), or put them in \
                         ~/.postgresql/root.crt"
                    ))
                })?;
            files.ca = Some(default);
        }
        config.ssl_mode(mode);
        let tls = client_config(&files, verify).map_err(|e| e.context(&described))?;
        if config.get_application_name().is_none() {
            config.application_name("snowmint");
        }
        config.connect_timeout(connect_timeout);
        let plain = plain_flag(&format!("{libpq_url}\n{sslmode}\n{}", tls_params.join("&")));
        let driver = backend::Driver::new(config, tls, &schema, plain).map_err(|e| {
            Error::unavailable(format!("{described}: cannot start an I/O runtime: {e}"))
        })?;
        let described = match (schema.as_str(), described.contains('?')) {
            ("snowmint", _) => described,
            (_, false) => format!("{described}?schema={schema}"),
            (_, true) => format!("{described}&schema={schema}"),
        };
        Self::open_through(
            Arc::new(driver),
            described,
            &schema,
            connect_timeout,
            request_timeout,
        )
    }

    /// [`PostgresStore::connect_with_timeouts`] over the connections `connect` opens (a simulated
    /// database in the deterministic simulation), on the schema `snowmint`; `described` is the store's
    /// name in messages.
    #[doc(hidden)]
    pub fn connect_through(
        connect: Arc<dyn Connect>,
        described: &str,
        connect_timeout: Duration,
        request_timeout: Duration,
    ) -> Result<PostgresStore> {
        Self::open_through(
            connect,
            described.to_string(),
            "snowmint",
            connect_timeout,
            request_timeout,
        )
    }

    fn open_through(
        connect: Arc<dyn Connect>,
        described: String,
        schema: &str,
        connect_timeout: Duration,
        request_timeout: Duration,
    ) -> Result<PostgresStore> {
        let store = PostgresStore {
            schema: sql::quoted(schema),
            described,
            connect_timeout,
            request_timeout,
            shortest_ttl_ms: std::sync::atomic::AtomicU64::new(0),
            answered_at: Mutex::new(None),
            conn: ProcessLocal::new(Mutex::new(None)),
            spare: ProcessLocal::new(Arc::new(Mutex::new(None))),
            refilling: Arc::new(std::sync::atomic::AtomicBool::new(false)),
            idled: Arc::new(std::sync::atomic::AtomicU64::new(0)),
            late: std::sync::atomic::AtomicBool::new(false),
            connect,
            defect: Hook::NONE,
        };
        store.ensure_schema(schema)?;
        Ok(store)
    }

    /// This store with a defect planted (feature `planted-defects`, the simulation's own tests).
    #[cfg(feature = "planted-defects")]
    pub fn plant(self, defect: Defect) -> PostgresStore {
        PostgresStore {
            defect: Hook::planted(defect),
            ..self
        }
    }

    /// [`Store::reserve`] with `statement` ([`Statement::Reserve`] or [`Statement::LowerReservation`]).
    fn write_reservation(
        &self,
        statement: Statement,
        claim: &Claim,
        reservation: &Reservation,
    ) -> Result<()> {
        let params = [
            Param::Text(&claim.sequencer),
            Param::Int(big(claim.node_id)),
            Param::Int(big(claim.token)),
            Param::Int(big(reservation.position)),
            Param::Int(big(reservation.layout_fingerprint)),
            Param::Int(big(reservation.until_unix_ms)),
        ];
        let updated = self.with_client("writing a reservation", |c, timeout| {
            c.execute(statement, &params, timeout)
        })?;
        if updated == 1 {
            Ok(())
        } else {
            Err(self.lost(claim, "is no longer held; the reservation was not written"))
        }
    }

    fn ensure_schema(&self, name: &str) -> Result<()> {
        let state = self.with_client("reading the schema", |c, timeout| {
            c.query(Statement::SchemaState, &[Param::Text(name)], timeout)
        })?;
        let row = state
            .first()
            .ok_or_else(|| self.unreadable("no answer about the schema"))?;
        let (exists, owner, usage, create) = (
            boolean(row, 0),
            text(row, 1).to_string(),
            boolean(row, 2),
            boolean(row, 3),
        );
        let (user, database, tables) = (
            text(row, 4).to_string(),
            text(row, 5).to_string(),
            boolean(row, 6),
        );
        if exists && !usage {
            return Err(self.foreign_schema(name, &owner, &user, &database, "USAGE"));
        }
        if tables {
            return Ok(());
        }
        if exists && !create {
            return Err(self.foreign_schema(name, &owner, &user, &database, "CREATE"));
        }
        self.with_client("creating the schema", |c, _| {
            c.execute(Statement::CreateSchema, &[], self.request_timeout)
        })
        .map(|_| ())
        .map_err(|e| {
            if e.code() == ErrorCode::StoreUnavailable && e.message().contains("permission denied") {
                Error::unavailable(format!(
                    "{}: role {user} may not create the schema {name} in database {database}: {}; create it \
                     once as a role that may (the README lists the statements), or ask for GRANT CREATE ON \
                     DATABASE {database} TO {user}",
                    self.described,
                    e.message()
                ))
            } else {
                e
            }
        })
    }

    fn foreign_schema(
        &self,
        name: &str,
        owner: &str,
        user: &str,
        database: &str,
        missing: &str,
    ) -> Error {
        Error::unavailable(format!(
            "{}: the schema {name} in database {database} belongs to role {owner}, and role {user} has no {missing} \
             privilege on it (the snowmint tables are missing or unusable): ask its owner for GRANT USAGE, CREATE \
             ON SCHEMA {name} TO {user}, or pick another schema with ?schema=NAME",
            self.described
        ))
    }

    fn unreadable(&self, what: impl std::fmt::Display) -> Error {
        Error::unavailable(format!("{}: unreadable data: {what}", self.described))
    }

    /// Runs `op` on a connection (connecting first if needed). After a connection found broken, or an
    /// answer that did not come within the request timeout, `op` is sent again
    /// ([`crate::stores::remote::Resend`]: at most two sends, none begun after the connect timeout and two
    /// request timeouts have passed): after a first timeout on the same connection, else on a new one;
    /// so is a connection attempt that timed out or could not reach the server.
    /// `op` is one statement (safe to send again: the module documentation); the destroy transaction
    /// ([`PostgresStore::with_client_once`]) is sent again only when a kept connection was found broken.
    ///
    /// Called from inside an async runtime (a caller's tokio worker), the work runs on a scoped thread of
    /// its own: the store's private runtime cannot block inside another one.
    fn with_client<T: Send>(&self, what: &str, op: impl Operation<T>) -> Result<T> {
        self.on_client(what, &op, true)
    }

    /// [`PostgresStore::with_client`] for work that is not one statement: no re-send after a timeout.
    fn with_client_once<T: Send>(&self, what: &str, op: impl Operation<T>) -> Result<T> {
        self.on_client(what, &op, false)
    }

    fn on_client<T: Send>(&self, what: &str, op: &impl Operation<T>, resend: bool) -> Result<T> {
        if tokio::runtime::Handle::try_current().is_ok() {
            return std::thread::scope(|s| {
                s.spawn(|| self.with_client_here(what, op, resend)).join()
            })
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        }
        self.with_client_here(what, op, resend)
    }

    fn with_client_here<T>(&self, what: &str, op: &impl Operation<T>, resend: bool) -> Result<T> {
        let Some(conn) = self.conn.get() else {
            return Err(Error::unavailable(format!(
                "{}: {what}: {}",
                self.described,
                crate::stores::process_local::FORKED
            )));
        };
        let mut conn = conn.lock().unwrap_or_else(|p| p.into_inner());
        let mut sends =
            crate::stores::remote::Resend::new(self.connect_timeout + self.answer_timeout() * 2);
        // The old rule, kept for work that is not one statement: one re-send, after a kept
        // connection was found broken.
        let mut resent_broken = false;
        // A statement's first send waits a shorter time ([`crate::stores::remote::first_answer_timeout`]):
        // a held answer costs a re-send on another connection sooner.
        let mut first_send = resend;
        // Connection attempts: a login is several answers, each able to be held back, so a new
        // connection fails far more often than a statement; its attempts are counted apart from the
        // statement's sends ([`CONNECT_TRIES`] at most, none begun once the call's budget has passed).
        // Each waits the whole connect timeout, longer than an answer's: a login with one answer
        // held back past the answer timeout may still complete (waiting half of it, measured, made
        // more logins fail).
        let mut connects = 0;
        loop {
            let fresh = conn.is_none();
            if fresh {
                connects += 1;
                match self.open(self.connect_timeout) {
                    Ok(c) => *conn = Some(c),
                    // Not reached (no answer in time, refused, reset): a fault of the way, tried again.
                    Err((e, unreached)) => {
                        if resend && unreached && connects < CONNECT_TRIES && sends.in_budget() {
                            continue;
                        }
                        return Err(e);
                    }
                }
            }
            if !fresh && resend && conn.as_ref().is_some_and(|c| c.draining()) {
                // This connection is still behind a late answer: the statement goes on the second
                // connection when that one is not (the drained one becomes the second).
                if let Some(spare) = self.spare.get() {
                    let mut spare = spare.lock().unwrap_or_else(|p| p.into_inner());
                    if spare
                        .as_ref()
                        .is_some_and(|s| !s.is_closed() && !s.draining())
                    {
                        std::mem::swap(&mut *conn, &mut *spare);
                    }
                }
            }
            let c = conn.as_mut().expect("connected above");
            if fresh {
                *self.answered_at.lock().unwrap_or_else(|p| p.into_inner()) =
                    Some(std::time::Instant::now());
            }
            let timeout = if std::mem::take(&mut first_send) {
                crate::stores::remote::first_answer_timeout(self.answer_timeout())
            } else {
                self.answer_timeout()
            };
            let error = match op(&mut **c, timeout) {
                Ok(v) => {
                    *self.answered_at.lock().unwrap_or_else(|p| p.into_inner()) =
                        Some(std::time::Instant::now());
                    if resend {
                        self.refill_spare();
                    }
                    return Ok(v);
                }
                Err(Failure::Error {
                    closed,
                    code,
                    detail,
                }) => {
                    let broken = closed || c.is_closed() || code.is_none();
                    let error = self.db_error(what, code.as_ref(), &detail);
                    if !broken {
                        return Err(error);
                    }
                    *conn = None;
                    if !resend && !fresh && !resent_broken {
                        resent_broken = true;
                        continue;
                    }
                    error
                }
                Err(Failure::TimedOut) => {
                    self.late.store(true, std::sync::atomic::Ordering::Relaxed);
                    // Its answer is late, not lost (or the connection is half-open). Sent again on
                    // the same connection, the statement's answer comes only after the late one: on
                    // a link that holds answers back, after the hold, and any later call's too. So
                    // the re-send goes on the second connection (hedged), and this one, its late
                    // answer draining (the driver reads and drops it), becomes the second: with a
                    // share `p` of answers late, a call fails with about `p²` and waits one answer
                    // timeout, not the hold. The first time there is no second connection, one is
                    // made. A transaction's connection is dropped; so are both once the store has had
                    // no answer for longer than a call's budget (a half-open connection to a server
                    // gone, which would otherwise be swapped in again and again).
                    let silent = self
                        .answered_at
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .is_none_or(|t| {
                            t.elapsed() > self.connect_timeout + self.answer_timeout() * 2
                        });
                    let spare = self.spare.get();
                    let mut spare = spare.map(|s| s.lock().unwrap_or_else(|p| p.into_inner()));
                    if !resend || c.is_closed() || silent {
                        *conn = None;
                        if silent {
                            if let Some(spare) = spare.as_mut() {
                                **spare = None;
                            }
                        }
                    } else if let Some(spare) = spare.as_mut() {
                        // The second connection, unless it is itself still behind a late answer
                        // (then a new connection: its login costs less than waiting out the hold);
                        // the second connection kept is the one behind a late answer for longer.
                        match spare.take().filter(|s| !s.is_closed()) {
                            Some(other) if !other.draining() => {
                                **spare = conn.replace(other);
                            }
                            Some(older) => {
                                **spare = Some(older);
                                *conn = None;
                            }
                            None => **spare = conn.take(),
                        }
                    }
                    Error::unavailable(format!(
                        "{}: {what}: no answer within {} ms",
                        self.described,
                        timeout.as_millis()
                    ))
                }
            };
            if !(resend && sends.again()) {
                return Err(error);
            }
        }
    }

    /// After an answer, once an answer was late on this store, when there is no spare connection: one is opened on a thread of its own (a
    /// real database only, [`Connect::in_background`]; one at a time), so that a statement whose
    /// answer is late is sent again at once on a connection already logged in, rather than on a new
    /// one whose login (several answers, each able to be late) the call would wait for. A spare that
    /// cannot be opened is given up on (the next answer tries again).
    fn refill_spare(&self) {
        use std::sync::atomic::Ordering;
        if !self.connect.in_background() || !self.late.load(Ordering::Relaxed) {
            return;
        }
        let Some(spare) = self.spare.get() else {
            return;
        };
        if spare
            .try_lock()
            .map_or(true, |s| s.as_ref().is_some_and(|c| !c.is_closed()))
        {
            return;
        }
        if self.refilling.swap(true, Ordering::AcqRel) {
            return;
        }
        let (spare, refilling, idled) = (spare.clone(), self.refilling.clone(), self.idled.clone());
        let epoch = idled.load(Ordering::SeqCst);
        let (connect, timeout) = (self.connect.clone(), self.connect_timeout);
        let spawned = std::thread::Builder::new()
            .name("snowmint-pg-spare".into())
            .spawn(move || {
                if let Ok(c) = connect.connect(timeout) {
                    keep_spare(&spare, &idled, epoch, c);
                }
                refilling.store(false, Ordering::Release);
            });
        if spawned.is_err() {
            self.refilling.store(false, Ordering::Release);
        }
    }

    /// A new connection within `timeout`: on a real database ([`Connect::in_background`]) logins on
    /// threads of their own, the first to complete used: one, then another each quarter of the answer
    /// timeout (0.5 s) while none has completed, and another at once when one failed without an
    /// answer of the server (no answer, refused, reset), [`LOGINS`] at most. A login is several
    /// answers (three with SCRAM once the TLS request is not sent again): with a share `p` of them
    /// late, a login is late with `1 - (1 - p)^3` (two in three at 30 %), so logins begun one after
    /// another find one whose answers all come in time far sooner than the connect timeout a late one
    /// costs (measured, `coord/tests/liveness.rs`: 20/25/30 % held back, a second login only after
    /// 1 s: 53–67/46–52/42–44 % of the time minting; logins every 0.5 s, six at most, with the
    /// changes beside them: 86–89/50–76/73–74 %). The first login that completes after another was
    /// used is kept as the spare; the others are closed. A healthy server's logins are one each; one
    /// slower than 0.5 s to log in (a loaded server, a fleet starting at once) gets up to six per
    /// attempt, each closed as soon as another was used. Elsewhere one login on this thread.
    fn connect_hedged(
        &self,
        timeout: Duration,
    ) -> std::result::Result<Box<dyn Connection>, Failure> {
        let Some(spare) = self.spare.get().filter(|_| self.connect.in_background()) else {
            return self.connect.connect(timeout);
        };
        let (tx, rx) = std::sync::mpsc::channel();
        let start = std::time::Instant::now();
        let deadline = start + timeout + Duration::from_millis(100);
        let hedge = crate::stores::remote::first_answer_timeout(self.answer_timeout());
        let (mut begun, mut failed, mut next_at) = (0u32, 0u32, start);
        let mut last = Failure::TimedOut;
        loop {
            let now = std::time::Instant::now();
            if begun == 1 && now >= next_at {
                // A login late or failed: this store keeps a spare connection from now on
                // ([`PostgresStore::refill_spare`]), as after a late answer.
                self.late.store(true, std::sync::atomic::Ordering::Relaxed);
            }
            if begun < LOGINS && now >= next_at && now < start + timeout {
                let (tx, connect, spare) = (tx.clone(), self.connect.clone(), spare.clone());
                let idled = self.idled.clone();
                let epoch = idled.load(std::sync::atomic::Ordering::SeqCst);
                let spawned = std::thread::Builder::new()
                    .name("snowmint-pg-login".into())
                    .spawn(move || {
                        let c = connect.connect(timeout);
                        if let Err(std::sync::mpsc::SendError(Ok(c))) = tx.send(c) {
                            // Another login was used: this one becomes the spare when there is
                            // none (and the store was not idled meanwhile).
                            keep_spare(&spare, &idled, epoch, c);
                        }
                    });
                match spawned {
                    Ok(_) => begun += 1,
                    Err(_) if begun == 0 => return self.connect.connect(timeout),
                    Err(_) => begun = LOGINS,
                }
                next_at = now + hedge;
            }
            if failed >= begun && (begun >= LOGINS || now >= start + timeout) {
                return Err(last);
            }
            let until = if begun < LOGINS && failed < begun {
                next_at.min(deadline)
            } else {
                deadline
            };
            match rx.recv_timeout(until.saturating_duration_since(now)) {
                Ok(Ok(c)) => return Ok(c),
                // The server answered with an error (authentication, a missing database): final.
                Ok(Err(e @ Failure::Error { code: Some(_), .. })) => return Err(e),
                Ok(Err(e)) => {
                    last = e;
                    failed += 1;
                    next_at = std::time::Instant::now();
                }
                Err(_) if std::time::Instant::now() >= deadline => return Err(last),
                Err(_) => {}
            }
        }
    }

    /// A new connection; on failure, the error and whether the server was not reached (no answer in
    /// time, or no SQLSTATE: refused, reset), which a re-send may get past.
    fn open(&self, timeout: Duration) -> std::result::Result<Box<dyn Connection>, (Error, bool)> {
        match self.connect_hedged(timeout) {
            Ok(c) => Ok(c),
            Err(Failure::Error { code, detail, .. }) => Err((
                self.db_error("connecting", code.as_ref(), &detail),
                code.is_none(),
            )),
            Err(Failure::TimedOut) => Err((
                Error::unavailable(format!(
                    "{}: connecting: no answer within {} ms",
                    self.described,
                    timeout.as_millis()
                )),
                true,
            )),
        }
    }

    fn db_error(&self, what: &str, code: Option<&SqlState>, detail: &str) -> Error {
        let hint = if code == Some(&SqlState::INSUFFICIENT_PRIVILEGE) {
            format!(
                " (the role lacks a privilege on the schema {} or its tables)",
                self.schema
            )
        } else {
            String::new()
        };
        Error::unavailable(format!("{}: {what}: {detail}{hint}", self.described))
    }

    /// Runs a statement and returns its rows.
    fn query(&self, what: &str, statement: Statement, params: &[Param<'_>]) -> Result<Vec<Row>> {
        self.with_client(what, |c, timeout| c.query(statement, params, timeout))
    }

    /// [`PostgresStore::query`] under the advisory lock `key` ([`Connection::query_serialized`]): a
    /// re-send waits for its first send's transaction to end, and sees what it committed.
    fn query_serialized(
        &self,
        what: &str,
        key: i64,
        statement: Statement,
        params: &[Param<'_>],
    ) -> Result<Vec<Row>> {
        self.with_client(what, |c, timeout| {
            c.query_serialized(key, statement, params, timeout)
        })
    }

    /// The answer timeout: [`PostgresStore::REQUEST_TIMEOUT`], or a quarter of the shortest TTL this
    /// store has claimed or renewed with (at least 200 ms), as etcd's: a statement re-sent after a late
    /// answer ([`crate::stores::remote::Resend`]) still lands well inside the claim's TTL.
    fn answer_timeout(&self) -> Duration {
        match self
            .shortest_ttl_ms
            .load(std::sync::atomic::Ordering::Relaxed)
        {
            0 => self.request_timeout,
            ttl => Duration::from_millis(ttl / 4)
                .clamp(Duration::from_millis(200), self.request_timeout),
        }
    }

    fn note_ttl(&self, ttl_ms: u64) {
        let ttl_ms = ttl_ms.max(1);
        let _ = self.shortest_ttl_ms.fetch_update(
            std::sync::atomic::Ordering::Relaxed,
            std::sync::atomic::Ordering::Relaxed,
            |t| (t == 0 || ttl_ms < t).then_some(ttl_ms),
        );
    }

    fn record(row: &Row) -> SequencerRecord {
        SequencerRecord {
            name: text(row, 0).to_string(),
            config: SequencerConfig {
                layout: text(row, 1).to_string(),
                nodes: int(row, 2) as u64,
            },
            incarnation: int(row, 3) as u64,
            created_unix_ms: int(row, 4) as u64,
            floor: int(row, 5) as u64,
        }
    }

    fn lost(&self, claim: &Claim, why: &str) -> Error {
        Error::lease_lost(format!(
            "node ID {} of sequencer {} on {}: the claim (fencing token {}) {why}",
            claim.node_id, claim.sequencer, self.described, claim.token
        ))
    }
}

impl Store for PostgresStore {
    fn describe(&self) -> String {
        self.described.clone()
    }

    fn idle(&self) {
        // The spare is locked inside `conn`; both are opened again by the next call (`with_client`).
        // A login or spare still being opened in the background closes its connection once it
        // completes ([`keep_spare`]: `idled` changed).
        if let Some(conn) = self.conn.get() {
            let mut conn = conn.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(spare) = self.spare.get() {
                let mut spare = spare.lock().unwrap_or_else(|p| p.into_inner());
                self.idled.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                if let Some(c) = spare.take() {
                    c.close();
                }
            }
            if let Some(c) = conn.take() {
                c.close();
            }
        }
    }

    fn create_sequencer(
        &self,
        name: &str,
        config: &SequencerConfig,
        now_unix_ms: u64,
    ) -> Result<SequencerRecord> {
        crate::stores::remote::create_or_existing(&self.described, name, config, || {
            let params = [
                Param::Text(name),
                Param::Text(&config.layout),
                Param::Int(big(config.nodes)),
                Param::Int(big(now_unix_ms)),
            ];
            match self
                .query("creating a sequencer", Statement::CreateSequencer, &params)?
                .first()
            {
                Some(row) => Ok(Created::New(Self::record(row))),
                None => Ok(Created::Exists(self.sequencer(name)?)),
            }
        })
    }

    fn sequencer(&self, name: &str) -> Result<Option<SequencerRecord>> {
        Ok(self
            .query(
                "reading a sequencer",
                Statement::Sequencer,
                &[Param::Text(name)],
            )?
            .first()
            .map(Self::record))
    }

    fn sequencers(&self) -> Result<Vec<SequencerRecord>> {
        Ok(self
            .query("listing sequencers", Statement::Sequencers, &[])?
            .iter()
            .map(Self::record)
            .collect())
    }

    fn destroy_sequencer(&self, name: &str, incarnation: u64) -> Result<bool> {
        let (name, inc) = (Param::Text(name), Param::Int(big(incarnation)));
        // One transaction (module documentation), bounded as a whole by the request timeout; any failure
        // rolls it back, a timeout closes the connection (the server rolls back then).
        let destroyed = self.with_client_once("destroying a sequencer", |c, _| {
            let deadline = std::time::Instant::now() + self.request_timeout;
            let left = || deadline.saturating_duration_since(std::time::Instant::now());
            c.execute(Statement::Begin, &[], left())?;
            let mut steps = || -> std::result::Result<Result<bool>, Failure> {
                let Some(row) = c
                    .query(Statement::DestroyLock, &[name, inc], left())?
                    .into_iter()
                    .next()
                else {
                    return Ok(Ok(false));
                };
                let record = Self::record(&row);
                c.execute(Statement::DestroyClaims, &[name], left())?;
                let stored: Vec<Reservation> = c
                    .query(Statement::DestroyReservations, &[name], left())?
                    .iter()
                    .map(reservation_of)
                    .collect();
                let floor = match crate::base::store::floor_after(&record, stored) {
                    Ok(f) => f,
                    Err(e) => return Ok(Err(e)),
                };
                let floor = Param::Int(big(floor));
                c.execute(Statement::DestroyFloor, &[name, floor], left())?;
                c.execute(Statement::Destroy, &[name, inc], left())?;
                Ok(Ok(true))
            };
            match steps() {
                Ok(Ok(true)) => c.execute(Statement::Commit, &[], left()).map(|_| Ok(true)),
                Err(Failure::TimedOut) => Err(Failure::TimedOut),
                other => {
                    let _ = c.execute(Statement::Rollback, &[], left());
                    other
                }
            }
        })?;
        destroyed
    }

    fn claim(&self, request: &ClaimRequest<'_>) -> Result<Option<Claim>> {
        if request.nodes == 0 {
            return Ok(None);
        }
        let nodes = big(request.nodes);
        let start = big(request.start % request.nodes);
        let ttl = big(request.ttl_ms.max(1));
        self.note_ttl(request.ttl_ms);
        let incarnation = big(request.incarnation);
        // An empty answer is either "every node ID is held" or "a concurrent claimer inserted the row we
        // picked first": count to tell them apart, and try again (bounded; each retry follows another
        // process's successful claim).
        // The claim's identity, stored with the holder (and cut off where holders are read).
        let holder = format!(
            "{}{CLAIM_MARK}{}",
            request.holder,
            crate::base::nonce::fresh(request.now_unix_ms)
        );
        let statement = if self.defect.is(Defect::PgClaimResendTakesAnother) {
            Statement::ClaimWithoutMine
        } else {
            Statement::Claim
        };
        // The claim's lock: its sends, first and re-sent, one after another (sql::CLAIM_LOCK).
        let key = holder
            .bytes()
            .fold(0u64, |h, b| snowmint::mix64(h ^ u64::from(b))) as i64;
        let params = [
            Param::Text(request.sequencer),
            Param::Int(nodes),
            Param::Int(start),
            Param::Text(&holder),
            Param::Int(ttl),
            Param::Int(incarnation),
        ];
        let claimed = claim_until_known(
            || {
                Ok(self
                    .query_serialized("claiming a node ID", key, statement, &params)?
                    .first()
                    .map(|row| Claim {
                        sequencer: request.sequencer.to_string(),
                        node_id: int(row, 0) as u64,
                        token: int(row, 1) as u64,
                        expires_unix_ms: int(row, 2) as u64,
                    }))
            },
            || {
                if self.sequencer(request.sequencer)?.map(|r| r.incarnation)
                    != Some(request.incarnation)
                {
                    return Err(crate::base::store_errors::not_live(
                        &self.described,
                        request.sequencer,
                        request.incarnation,
                    ));
                }
                let held = self
                    .query(
                        "counting held node IDs",
                        Statement::HeldCount,
                        &[Param::Text(request.sequencer), Param::Int(nodes)],
                    )?
                    .first()
                    .map(|r| int(r, 0))
                    .unwrap_or(0);
                Ok(held >= nodes)
            },
        );
        claimed.unwrap_or_else(|| {
            Err(Error::unavailable(format!(
                "{}: claiming a node ID of {}: lost 64 races in a row to concurrent claimers",
                self.described, request.sequencer
            )))
        })
    }

    fn renew(&self, claim: &Claim, ttl_ms: u64, _now_unix_ms: u64) -> Result<Claim> {
        self.note_ttl(ttl_ms);
        let params = [
            Param::Text(&claim.sequencer),
            Param::Int(big(claim.node_id)),
            Param::Int(big(claim.token)),
            Param::Int(big(ttl_ms.max(1))),
        ];
        match self
            .query("renewing a claim", Statement::Renew, &params)?
            .first()
        {
            Some(row) => Ok(Claim {
                expires_unix_ms: int(row, 0) as u64,
                ..claim.clone()
            }),
            None => Err(self.lost(claim, "expired or was taken by another holder")),
        }
    }

    fn release(&self, claim: &Claim) -> Result<()> {
        let params = [
            Param::Text(&claim.sequencer),
            Param::Int(big(claim.node_id)),
            Param::Int(big(claim.token)),
        ];
        self.query("releasing a claim", Statement::Release, &params)?;
        Ok(())
    }

    fn reservation(&self, sequencer: &str, node_id: u64) -> Result<Option<Reservation>> {
        let rows = self.query(
            "reading a reservation",
            Statement::Reservation,
            &[Param::Text(sequencer), Param::Int(big(node_id))],
        )?;
        Ok(rows.first().map(reservation_of))
    }

    fn reserve(&self, claim: &Claim, reservation: &Reservation) -> Result<()> {
        let statement = if self.defect.is(Defect::PgReserveWithoutKeepLarger) {
            Statement::LowerReservation
        } else {
            Statement::Reserve
        };
        self.write_reservation(statement, claim, reservation)
    }

    fn lower_reservation(&self, claim: &Claim, reservation: &Reservation) -> Result<()> {
        self.write_reservation(Statement::LowerReservation, claim, reservation)
    }

    fn holders(&self, sequencer: &str, _now_unix_ms: u64) -> Result<Vec<NodeState>> {
        let rows = self.query(
            "listing holders",
            Statement::Holders,
            &[Param::Text(sequencer)],
        )?;
        Ok(rows
            .iter()
            .map(|row| {
                let live = opt_boolean(row, 4);
                let holder = opt_text(row, 1).map(|h| match h.split_once(CLAIM_MARK) {
                    Some((holder, _nonce)) => holder.to_string(),
                    None => h.to_string(),
                });
                let position = opt_int(row, 5);
                NodeState {
                    node_id: int(row, 0) as u64,
                    claim: match (holder, live) {
                        (Some(holder), Some(true)) => Some(HeldBy {
                            holder,
                            token: int(row, 2) as u64,
                            expires_unix_ms: opt_int(row, 3).unwrap_or(0) as u64,
                        }),
                        _ => None,
                    },
                    reservation: position.map(|p| Reservation {
                        position: p as u64,
                        layout_fingerprint: opt_int(row, 6).unwrap_or(0) as u64,
                        until_unix_ms: opt_int(row, 7).unwrap_or(0) as u64,
                    }),
                }
            })
            .collect())
    }

    fn row(&self, key: &str) -> Result<Option<String>> {
        crate::base::name::check_row_key(key)?;
        Ok(self
            .query("reading a row", Statement::Row, &[Param::Text(key)])?
            .first()
            .map(|r| text(r, 0).to_string()))
    }

    fn swap_row(&self, key: &str, expected: Option<&str>, new: &str) -> Result<bool> {
        crate::base::name::check_row_key(key)?;
        let rows = match expected {
            None => self.query(
                "creating a row",
                Statement::InsertRow,
                &[Param::Text(key), Param::Text(new)],
            )?,
            Some(old) => self.query(
                "compare-and-set of a row",
                Statement::UpdateRow,
                &[Param::Text(key), Param::Text(old), Param::Text(new)],
            )?,
        };
        // Written by this statement, or by an earlier send of it whose answer the dropped connection
        // lost (`new` is this write's own text, with its nonce): the row holds `new` either way.
        Ok(rows.first().is_some_and(|r| text(r, 0) == new))
    }
}

/// The claim's loop (bounded: 64 rounds, `None` when every round lost a race): `claim` sends the claim
/// statement (`Some` claim, or `None`: nothing taken), `full` counts the held node IDs (whether every one
/// is held). An empty claim is either "every node ID is held" or "a concurrent claimer inserted the row
/// this one picked first" (then it tries again, after that other process's successful claim). One full
/// count is not enough to answer `NODE_IDS_EXHAUSTED`: a first send of this very claim that timed out
/// (answers held back; re-sent on another connection) may still have been uncommitted when the re-send's
/// statement took its snapshot, so the re-send found neither that claim (`mine`) nor a free row (the
/// first send's row locked, skipped), and committed before the count's. The count then counts this
/// claim's own node ID as held by another; a claim statement sent after it sees the commit, so only a
/// claim that follows a full count and still takes nothing means every node ID is another's.
fn claim_until_known<T>(
    mut claim: impl FnMut() -> Result<Option<T>>,
    mut full: impl FnMut() -> Result<bool>,
) -> Option<Result<Option<T>>> {
    let mut counted_full = false;
    for _ in 0..64 {
        match claim() {
            Ok(Some(c)) => return Some(Ok(Some(c))),
            Ok(None) if counted_full => return Some(Ok(None)),
            Ok(None) => {}
            Err(e) => return Some(Err(e)),
        }
        match full() {
            Ok(f) => counted_full = f,
            Err(e) => return Some(Err(e)),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A row write re-sent while its first send is still uncommitted (a commit slowed by a loaded disk
    /// outlasting the first send's wait: the re-send goes out on another connection and waits on the
    /// first's row lock) answers what the row holds once the first committed, not what the
    /// statement's older snapshot saw: `swap_row` is `true` for a write that was applied, as the row
    /// contract says. Two sessions on the real server play the two sends. Skipped without a server
    /// (coord/test.sh gives one).
    fn refs(p: &[String]) -> Vec<&(dyn tokio_postgres::types::ToSql + Sync)> {
        p.iter().map(|s| s as _).collect()
    }

    /// A current-thread runtime for two raw sessions playing a statement's two sends.
    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    /// A raw session on the server (its connection driven on the runtime).
    async fn session(base: &str) -> std::sync::Arc<tokio_postgres::Client> {
        let (c, conn) = tokio_postgres::connect(base, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(async move {
            let _ = conn.await;
        });
        std::sync::Arc::new(c)
    }

    #[test]
    fn a_resend_behind_its_uncommitted_first_send_answers_the_write() {
        let Some(base) = std::env::var("SNOWMINT_TEST_POSTGRES_URL")
            .ok()
            .filter(|v| !v.is_empty())
        else {
            eprintln!("no PostgreSQL (SNOWMINT_TEST_POSTGRES_URL): skipped");
            return;
        };
        let schema = format!("resend_{}", std::process::id());
        // Creates the schema and its tables.
        let store = PostgresStore::connect(&format!("{base}?schema={schema}")).unwrap();
        assert_eq!(store.row("warm").unwrap(), None);
        let quoted = sql::quoted(&schema);
        let insert = sql::INSERT_ROW.replace("{S}", &quoted);
        let update = sql::UPDATE_ROW.replace("{S}", &quoted);
        runtime().block_on(async {
            let (first, resend) = (session(&base).await, session(&base).await);
            // (statement, its parameters, what the row holds before) for a creation and a
            // compare-and-set.
            let cases: [(&str, [&str; 3], Option<&str>); 2] = [
                (&insert, ["k1", "v n=1", ""], None),
                (&update, ["k2", "v n=1", "w n=2"], Some("v n=1")),
            ];
            for (text, [key, a, b], before) in cases {
                if let Some(v) = before {
                    first.execute(&insert, &[&key, &v]).await.unwrap();
                }
                let (params, new): (Vec<String>, &str) = match before {
                    None => (vec![key.into(), a.into()], a),
                    Some(_) => (vec![key.into(), a.into(), b.into()], b),
                };
                first.batch_execute("BEGIN").await.unwrap();
                let rows = first.query(text, &refs(&params)).await.unwrap();
                assert_eq!(rows[0].get::<_, String>(0), new, "{key}: the first send");
                let (resend, text) = (resend.clone(), text.to_string());
                let second =
                    tokio::spawn(async move { resend.query(&text, &refs(&params)).await.unwrap() });
                // The re-send now waits on the first send's row.
                tokio::time::sleep(Duration::from_millis(300)).await;
                first.batch_execute("COMMIT").await.unwrap();
                let held: Vec<String> = second.await.unwrap().iter().map(|r| r.get(0)).collect();
                assert_eq!(
                    held,
                    vec![new.to_string()],
                    "{key}: the re-send of a write its first send applied must answer the row's value {new:?}"
                );
            }
            first
                .batch_execute(&format!("DROP SCHEMA {quoted} CASCADE"))
                .await
                .unwrap();
        });
    }

    /// A claim re-sent while its first send is still uncommitted (a commit slowed by a loaded disk
    /// past the first send's wait) answers the first send's claim once it commits, and takes no second
    /// node ID: the re-send waits on the claim's lock ([`backend::serialized`]), and its statement's
    /// snapshot, taken after, sees the first send's commit. Sent without the lock, the re-send took
    /// node ID 1 at once (the first send's row locked and skipped, its claim not yet visible), held by
    /// nobody until its TTL. Two sessions on the real server play the two sends. Skipped without a
    /// server (coord/test.sh gives one).
    #[test]
    fn a_claim_resent_behind_its_uncommitted_first_send_takes_no_second_node_id() {
        let Some(base) = std::env::var("SNOWMINT_TEST_POSTGRES_URL")
            .ok()
            .filter(|v| !v.is_empty())
        else {
            eprintln!("no PostgreSQL (SNOWMINT_TEST_POSTGRES_URL): skipped");
            return;
        };
        let schema = format!("claim_resend_{}", std::process::id());
        let store = PostgresStore::connect(&format!("{base}?schema={schema}")).unwrap();
        let config = crate::base::store::SequencerConfig {
            layout: crate::base::layout::layout_text(&snowmint::Layout::twitter()),
            nodes: 4,
        };
        let quoted = sql::quoted(&schema);
        let claim = sql::CLAIM.replace("{S}", &quoted);
        let lock = sql::CLAIM_LOCK.replace("{S}", &quoted);
        let key = 42i64;
        runtime().block_on(async {
            let (first, resend) = (session(&base).await, session(&base).await);
            let (nodes, start, ttl) = (4i64, 0i64, 60_000i64);
            let rows_of = format!(
                "INSERT INTO {quoted}.nodes (sequencer, node_id, token) \
                 SELECT $1::text, g, 1 FROM generate_series(0, 3) g"
            );
            let node_of = |rows: &[tokio_postgres::Row]| -> Vec<i64> {
                rows.iter().map(|r| r.get::<_, i64>(0)).collect()
            };
            // A sequencer's first claim (no rows yet: the re-send's insert waits on the first's, then
            // takes nothing), and one whose node IDs were all held before (free rows: the re-send,
            // unlocked, skips the first send's locked row and takes the next).
            for (round, earlier) in [(1, false), (2, true)] {
                let holder = format!("h{CLAIM_MARK}n{round}");
                let name = format!("s{round}");
                let record = store.create_sequencer(&name, &config, 0).unwrap();
                let inc = record.incarnation as i64;
                if earlier {
                    first.execute(&rows_of, &[&name]).await.unwrap();
                }
                // The first send: its lock and its claim of node ID 0, not yet committed.
                first.batch_execute("BEGIN").await.unwrap();
                first.execute(&lock, &[&key]).await.unwrap();
                let rows = first
                    .query(&claim, &[&name, &nodes, &start, &holder, &ttl, &inc])
                    .await
                    .unwrap();
                assert_eq!(node_of(&rows), vec![0], "the first send claims node ID 0");
                let second = {
                    let (resend, lock, claim, holder, name) = (
                        resend.clone(),
                        lock.clone(),
                        claim.clone(),
                        holder.clone(),
                        name.clone(),
                    );
                    tokio::spawn(async move {
                        let params: [(&(dyn tokio_postgres::types::ToSql + Sync), _); 6] = [
                            (&name, tokio_postgres::types::Type::TEXT),
                            (&nodes, tokio_postgres::types::Type::INT8),
                            (&start, tokio_postgres::types::Type::INT8),
                            (&holder, tokio_postgres::types::Type::TEXT),
                            (&ttl, tokio_postgres::types::Type::INT8),
                            (&inc, tokio_postgres::types::Type::INT8),
                        ];
                        backend::serialized(&resend, &lock, key, &claim, &params)
                            .await
                            .unwrap()
                    })
                };
                // The re-send now waits on the claim's lock.
                tokio::time::sleep(Duration::from_millis(300)).await;
                first.batch_execute("COMMIT").await.unwrap();
                let answered = second.await.unwrap();
                assert_eq!(
                    node_of(&answered),
                    vec![0],
                    "round {round}: the re-send answers the claim its first send made"
                );
                let held: i64 = first
                    .query_one(
                        &format!("SELECT count(*) FROM {quoted}.nodes WHERE holder = $1"),
                        &[&holder],
                    )
                    .await
                    .unwrap()
                    .get(0);
                assert_eq!(
                    held, 1,
                    "round {round}: one node ID held by the claim, not two"
                );
            }
            first
                .batch_execute(&format!("DROP SCHEMA {quoted} CASCADE"))
                .await
                .unwrap();
        });
    }

    #[test]
    fn a_claim_its_resend_did_not_see_is_found_after_a_full_count() {
        // One node ID. The re-send's statement took its snapshot before the first send (its own claim)
        // committed: it takes nothing; the count, after the commit, finds the node ID held; the next
        // claim statement's `mine` finds the claim.
        let mut sends = 0;
        let got = claim_until_known(
            || {
                sends += 1;
                Ok((sends > 1).then_some(7u64))
            },
            || Ok(true),
        );
        assert_eq!(
            got.unwrap().unwrap(),
            Some(7),
            "the claim's own node ID, not NODE_IDS_EXHAUSTED"
        );
        assert_eq!(sends, 2);
        // Every node ID another's: a claim after the full count takes nothing either.
        let mut sends = 0;
        let got = claim_until_known(
            || {
                sends += 1;
                Ok(None::<u64>)
            },
            || Ok(true),
        );
        assert_eq!(got.unwrap().unwrap(), None);
        assert_eq!(sends, 2);
        // Lost races (the count finds a free node ID): bounded.
        let got = claim_until_known(|| Ok(None::<u64>), || Ok(false));
        assert!(got.is_none(), "64 rounds at most");
    }

    #[test]
    fn passwords_never_reach_messages() {
        assert_eq!(
            crate::base::error::redact_secrets("postgres://u:secret@h:5432/db"),
            "postgres://u:***@h:5432/db"
        );
        assert_eq!(
            crate::base::error::redact_secrets("postgres://u@h/db?x=1"),
            "postgres://u@h/db?x=1"
        );
        assert_eq!(
            crate::base::error::redact_secrets("postgres://h/db"),
            "postgres://h/db"
        );
        let e = PostgresStore::connect("postgres://u:secret@127.0.0.1:1/db?sequencer=s&ttl=3s")
            .unwrap_err();
        assert!(!e.message().contains("secret"), "{e}");
    }

    #[test]
    fn an_unreachable_server_is_store_unavailable_within_the_timeouts() {
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let t0 = std::time::Instant::now();
        let e = PostgresStore::connect(&format!("postgres://u@127.0.0.1:{port}/db?sequencer=s"))
            .unwrap_err();
        assert_eq!(e.code(), ErrorCode::StoreUnavailable);
        assert!(
            e.message()
                .starts_with(&format!("postgres://u@127.0.0.1:{port}/db: ")),
            "{e}"
        );
        assert!(t0.elapsed() < Duration::from_secs(3), "{:?}", t0.elapsed());
        // A server that accepts but never answers (a stopped process): bounded too.
        let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = silent.local_addr().unwrap().port();
        let t0 = std::time::Instant::now();
        let e = PostgresStore::connect_with_timeouts(
            &format!("postgres://u@127.0.0.1:{port}/db"),
            Duration::from_millis(300),
            Duration::from_millis(300),
        )
        .unwrap_err();
        assert_eq!(e.code(), ErrorCode::StoreUnavailable);
        // The connect timeout bounds the connection, as documented (not connect + request).
        assert!(e.message().contains("no answer within 300 ms"), "{e}");
        assert!(t0.elapsed() < Duration::from_secs(2), "{:?}", t0.elapsed());
    }

    #[test]
    fn usable_and_droppable_inside_an_async_runtime() {
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let e =
                PostgresStore::connect(&format!("postgres://u@127.0.0.1:{port}/db")).unwrap_err();
            assert_eq!(e.code(), ErrorCode::StoreUnavailable, "{e}");
        });
    }

    /// The planted claim without `mine` is the claim with `mine`'s condition replaced: it must be there.
    #[test]
    fn the_planted_claim_defect_finds_mine_in_the_claim() {
        assert_eq!(sql::CLAIM.matches(sql::MINE).count(), 1);
    }

    #[test]
    fn bad_urls_are_invalid_arguments() {
        for url in [
            "postgres://u@h:notaport/db",
            "postgres://u@h/db?schema=",
            "postgres://u@h/db?schema=a-b",
            "postgres://u@h/db?schema=1a",
            "postgres://u@h/db?sslmode=verify-all",
            "postgres://u@h/db?sslmode=allow",
            "postgres://u@h/db?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem",
            "postgres://u@h/db?sslcert=/nonexistent/c.pem",
        ] {
            let e = PostgresStore::connect(url).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidArgument, "{url}: {e}");
        }
    }
}
