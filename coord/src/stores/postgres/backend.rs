//! How the PostgreSQL store reaches its database: the [`Connect`] seam, at the level of "run this store
//! statement with these parameters on a connection". [`Driver`] (the default) is tokio-postgres over TCP
//! or TLS; the deterministic simulation plugs in an in-memory database instead
//! (`sim/src/postgres.rs`: each [`Statement`]'s semantics over in-memory tables, judged
//! by a simulated `now()`, faults drawn from a seed), so that the store's own code — its re-send on a
//! new connection after a broken one, its timeouts, how it reads each statement's answer, its error
//! messages — runs unchanged against it.
//!
//! The seam sits above the wire protocol and the SQL on purpose: simulating either would be a second
//! PostgreSQL. The statements' texts are exercised by the real-server tests only
//! (`coord/tests/servers.rs`, `lost_answers.rs`); what a simulated backend implements is what each
//! statement is documented to do (the store's module documentation). Answers are rows of
//! [`Value`]s: one small vector per answered row, on statements that run once per claim, keeper round
//! or range take (never per ID).

use std::fmt::Debug;
use std::sync::Arc;
use std::time::Duration;

use tokio_postgres::error::SqlState;
use tokio_postgres::types::{ToSql, Type};

use super::sql;
use crate::stores::process_local::ProcessLocal;

/// The store's statements (their texts: the store's `sql` module; `{S}` is the schema).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)] // each is named after its text in the store's module
pub enum Statement {
    /// `$1` sequencer, `$2` node count, `$3` start, `$4` holder with the claim's nonce, `$5` TTL (ms),
    /// `$6` incarnation; answers `node_id, token, expires (ms)` of the claim found (`mine`), taken or
    /// inserted.
    Claim,
    /// [`Statement::Claim`] as it was before a re-send found the claim it made (`mine` finds nothing:
    /// its condition is `false`): the planted defect `PgClaimResendTakesAnother` (never sent without the
    /// feature `planted-defects`).
    #[doc(hidden)]
    ClaimWithoutMine,
    /// `$1` the lock's key ([`Connection::query_serialized`]).
    ClaimLock,
    HeldCount,
    Renew,
    Release,
    Reserve,
    LowerReservation,
    Reservation,
    Holders,
    CreateSequencer,
    Sequencer,
    Sequencers,
    DestroyLock,
    DestroyClaims,
    DestroyReservations,
    DestroyFloor,
    Destroy,
    SchemaState,
    CreateSchema,
    Row,
    InsertRow,
    UpdateRow,
    Begin,
    Commit,
    Rollback,
}

impl Statement {
    /// The statement's text, `{S}` standing for the quoted schema.
    pub fn text(self) -> &'static str {
        match self {
            Statement::Claim => sql::CLAIM,
            // (`mine`'s condition replaced by `false` where it is sent.)
            Statement::ClaimWithoutMine => sql::CLAIM,
            Statement::ClaimLock => sql::CLAIM_LOCK,
            Statement::HeldCount => sql::HELD_COUNT,
            Statement::Renew => sql::RENEW,
            Statement::Release => sql::RELEASE,
            Statement::Reserve => sql::RESERVE,
            Statement::LowerReservation => sql::LOWER_RESERVATION,
            Statement::Reservation => sql::RESERVATION,
            Statement::Holders => sql::HOLDERS,
            Statement::CreateSequencer => sql::CREATE_SEQUENCER,
            Statement::Sequencer => sql::SEQUENCER,
            Statement::Sequencers => sql::SEQUENCERS,
            Statement::DestroyLock => sql::DESTROY_LOCK,
            Statement::DestroyClaims => sql::DESTROY_CLAIMS,
            Statement::DestroyReservations => sql::DESTROY_RESERVATIONS,
            Statement::DestroyFloor => sql::DESTROY_FLOOR,
            Statement::Destroy => sql::DESTROY,
            Statement::SchemaState => sql::SCHEMA_STATE,
            Statement::CreateSchema => sql::CREATE_SCHEMA,
            Statement::Row => sql::ROW,
            Statement::InsertRow => sql::INSERT_ROW,
            Statement::UpdateRow => sql::UPDATE_ROW,
            Statement::Begin => "BEGIN",
            Statement::Commit => "COMMIT",
            Statement::Rollback => "ROLLBACK",
        }
    }

    /// Sent as a simple-query batch (no parameters, no rows).
    fn batch(self) -> bool {
        matches!(
            self,
            Statement::CreateSchema | Statement::Begin | Statement::Commit | Statement::Rollback
        )
    }
}

/// A statement's parameter (every one is cast in its text: `$n::bigint` or `$n::text`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Param<'a> {
    /// `bigint`.
    Int(i64),
    /// `text`.
    Text(&'a str),
}

/// One column of an answered row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    /// SQL `NULL`.
    Null,
    /// `bigint`.
    Int(i64),
    /// `boolean`.
    Bool(bool),
    /// `text`.
    Text(String),
}

/// One answered row.
pub type Row = Vec<Value>;

/// How a statement (or a connection) failed.
#[derive(Clone, Debug)]
pub enum Failure {
    /// No answer within the timeout (the store drops the connection).
    TimedOut,
    /// The driver's error.
    Error {
        /// The connection is closed.
        closed: bool,
        /// The server's SQLSTATE (`None`: not an answer of the server, e.g. an I/O error).
        code: Option<SqlState>,
        /// The text the store's message carries.
        detail: String,
    },
}

/// One open connection.
pub trait Connection: Send + Debug {
    /// Runs `statement` with `params` within `timeout`, answering its rows.
    fn query(
        &mut self,
        statement: Statement,
        params: &[Param<'_>],
        timeout: Duration,
    ) -> Result<Vec<Row>, Failure>;
    /// Runs `statement` with `params` within `timeout`, answering how many rows it changed.
    fn execute(
        &mut self,
        statement: Statement,
        params: &[Param<'_>],
        timeout: Duration,
    ) -> Result<u64, Failure>;
    /// Runs `statement` as [`Connection::query`] does, in a transaction of its own that first takes
    /// the advisory lock `key` ([`Statement::ClaimLock`]): a send of a statement under the same key
    /// waits until an earlier send's transaction has ended (committed, or rolled back once its
    /// connection closed), and sees what it committed. By default the statement alone: a database
    /// whose statements apply whole, one at a time (the simulated one), needs no lock.
    fn query_serialized(
        &mut self,
        key: i64,
        statement: Statement,
        params: &[Param<'_>],
        timeout: Duration,
    ) -> Result<Vec<Row>, Failure> {
        let _ = key;
        self.query(statement, params, timeout)
    }
    /// The connection is known to be closed.
    fn is_closed(&self) -> bool;
    /// A statement's answer did not come within its timeout and has not come since: a statement sent
    /// on this connection now would be answered only after it ([`Driver`]'s connections watch for it;
    /// `false` by default).
    fn draining(&self) -> bool {
        false
    }
    /// Closes the connection now (dropping it only may leave its socket open until its I/O runs
    /// again). Dropped by default.
    fn close(self: Box<Self>) {}
}

/// Opens connections to the database.
pub trait Connect: Send + Sync + Debug {
    /// A new connection within `timeout`.
    fn connect(&self, timeout: Duration) -> Result<Box<dyn Connection>, Failure>;
    /// Whether connections may be opened on a thread of their own, ahead of need (the store's spare:
    /// [`crate::postgres::PostgresStore`]). `false` by default: a simulated database runs every
    /// connection on the caller's thread, so that a run depends on its seed only.
    fn in_background(&self) -> bool {
        false
    }
}

/// The store's private I/O runtime: shut down in the background when dropped (dropping a runtime
/// blocks, which panics inside a caller's async runtime; this does not). In a process forked after it
/// was built, neither driven nor shut down ([`ProcessLocal`]): its core may have been taken by a thread
/// of the parent's that does not exist there, its epoll instance and sockets are the parent's.
#[derive(Debug)]
struct Runtime(ProcessLocal<Option<tokio::runtime::Runtime>>);

impl Runtime {
    fn get(&self) -> Result<&tokio::runtime::Runtime, Failure> {
        match self.0.get() {
            Some(r) => Ok(r.as_ref().expect("the runtime lives until drop")),
            None => Err(Failure::Error {
                closed: true,
                code: None,
                detail: crate::stores::process_local::FORKED.into(),
            }),
        }
    }
}

/// `work` on `runtime`, from this thread; from a thread whose thread-local storage is being torn down
/// (a process ending through `exit()` while objects are still dropped: uWSGI's workers give their
/// generator back then), which cannot enter a runtime (`block_on` would panic), from a thread of its
/// own, so that a lease is still given back.
fn block_on<F: std::future::Future + Send>(
    runtime: &tokio::runtime::Runtime,
    work: F,
) -> Result<F::Output, Failure>
where
    F::Output: Send,
{
    if !tokio::runtime::Handle::try_current().is_err_and(|e| e.is_thread_local_destroyed()) {
        return Ok(runtime.block_on(work));
    }
    std::thread::scope(|s| s.spawn(|| runtime.block_on(work)).join()).map_err(|_| Failure::Error {
        closed: true,
        code: None,
        detail: "this thread is ending, and a thread to finish its work failed".into(),
    })
}

impl Drop for Runtime {
    fn drop(&mut self) {
        if let Some(runtime) = self.0.get_mut().and_then(Option::take) {
            runtime.shutdown_background();
        }
    }
}

/// The schema: quoted (for `{S}`) and as named.
#[derive(Debug)]
struct Schema {
    quoted: String,
    name: String,
}

/// tokio-postgres on a runtime of its own (current-thread): TCP, or TLS by rustls.
#[derive(Debug)]
pub struct Driver {
    config: tokio_postgres::Config,
    tls: Arc<rustls::ClientConfig>,
    schema: Arc<Schema>,
    runtime: Arc<Runtime>,
    /// Under `sslmode=prefer`, the server answered a login's TLS request with "no" (shared by the
    /// stores of this database in the process): later logins do not ask again ([`Connect::connect`]).
    plain: Arc<std::sync::atomic::AtomicBool>,
}

/// A TLS connector that notes whether the server agreed to TLS (its handshake began).
struct Noting<T> {
    inner: T,
    used: Arc<std::sync::atomic::AtomicBool>,
}

impl<S, T: tokio_postgres::tls::MakeTlsConnect<S>> tokio_postgres::tls::MakeTlsConnect<S>
    for Noting<T>
{
    type Stream = T::Stream;
    type TlsConnect = Noting<T::TlsConnect>;
    type Error = T::Error;

    fn make_tls_connect(&mut self, domain: &str) -> Result<Self::TlsConnect, Self::Error> {
        Ok(Noting {
            inner: self.inner.make_tls_connect(domain)?,
            used: self.used.clone(),
        })
    }
}

impl<S, T: tokio_postgres::tls::TlsConnect<S>> tokio_postgres::tls::TlsConnect<S> for Noting<T> {
    type Stream = T::Stream;
    type Error = T::Error;
    type Future = T::Future;

    fn connect(self, stream: S) -> Self::Future {
        self.used.store(true, std::sync::atomic::Ordering::Relaxed);
        self.inner.connect(stream)
    }
}

impl Driver {
    /// A driver for `config` with the TLS configuration `tls` (used unless `sslmode=disable`), on the
    /// tables of `schema` (its name; quoted here).
    ///
    /// `plain`: whether the server answered a TLS request of `sslmode=prefer` with "no" (shared by the
    /// drivers of one database in the process).
    pub(super) fn new(
        config: tokio_postgres::Config,
        tls: Arc<rustls::ClientConfig>,
        schema: &str,
        plain: Arc<std::sync::atomic::AtomicBool>,
    ) -> std::io::Result<Driver> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        Ok(Driver {
            config,
            tls,
            schema: Arc::new(Schema {
                quoted: super::sql::quoted(schema),
                name: schema.to_string(),
            }),
            runtime: Arc::new(Runtime(ProcessLocal::new(Some(runtime)))),
            plain,
        })
    }
}

/// The driver's error as a [`Failure`]: the server's message and SQLSTATE, or the chain of causes.
fn failure(e: &tokio_postgres::Error) -> Failure {
    let detail = match e.as_db_error() {
        Some(db) => format!("{} (SQLSTATE {})", db.message(), db.code().code()),
        None => {
            let mut text = e.to_string();
            let mut source = std::error::Error::source(e);
            while let Some(s) = source {
                text = format!("{text}: {s}");
                source = s.source();
            }
            text
        }
    };
    Failure::Error {
        closed: e.is_closed(),
        code: e.code().cloned(),
        detail,
    }
}

impl Connect for Driver {
    fn in_background(&self) -> bool {
        true
    }

    fn connect(&self, timeout: Duration) -> Result<Box<dyn Connection>, Failure> {
        use std::sync::atomic::Ordering;
        let runtime = self.runtime.get()?;
        // `sslmode=prefer` asks the server for TLS at every login, one more answer each (which may
        // come late). Once the server has said no, later logins go without asking: what `prefer`
        // would end with anyway (it offers no protection against a server, or a link, that says no).
        let prefer = self.config.get_ssl_mode() == tokio_postgres::config::SslMode::Prefer;
        let plain_config;
        let config = if prefer && self.plain.load(Ordering::Relaxed) {
            plain_config = {
                let mut c = self.config.clone();
                c.ssl_mode(tokio_postgres::config::SslMode::Disable);
                c
            };
            &plain_config
        } else {
            &self.config
        };
        let used = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let tls = Noting {
            inner: tokio_postgres_rustls::MakeRustlsConnect::new((*self.tls).clone()),
            used: used.clone(),
        };
        let connected = block_on(runtime, async {
            tokio::time::timeout(timeout, config.connect(tls)).await
        })?;
        match connected {
            Ok(Ok((client, connection))) => {
                if prefer && !used.load(Ordering::Relaxed) {
                    self.plain.store(true, Ordering::Relaxed);
                }
                let io = runtime.spawn(async move {
                    let _ = connection.await;
                });
                Ok(Box::new(DriverConnection {
                    client: Arc::new(client),
                    draining: Arc::new(std::sync::atomic::AtomicBool::new(false)),
                    schema: self.schema.clone(),
                    runtime: self.runtime.clone(),
                    io,
                }))
            }
            Ok(Err(e)) => Err(failure(&e)),
            Err(_) => Err(Failure::TimedOut),
        }
    }
}

/// One tokio-postgres connection.
#[derive(Debug)]
struct DriverConnection {
    client: Arc<tokio_postgres::Client>,
    /// A statement timed out, and the empty query sent after it has not been answered yet
    /// ([`DriverConnection::watch`]).
    draining: Arc<std::sync::atomic::AtomicBool>,
    schema: Arc<Schema>,
    runtime: Arc<Runtime>,
    /// The task that runs the connection's I/O on the (current-thread) runtime.
    io: tokio::task::JoinHandle<()>,
}

impl DriverConnection {
    fn text(&self, statement: Statement) -> String {
        let text = statement.text().replace("{S}", &self.schema.quoted);
        match statement {
            Statement::CreateSchema => {
                text.replace("SCHEMA_NAME", &self.schema.name.replace('\'', "''"))
            }
            Statement::ClaimWithoutMine => text.replace(sql::MINE, "false"),
            _ => text,
        }
    }
}

/// Runs `work` within `timeout` on `runtime`.
fn run<T: Send>(
    runtime: &Runtime,
    timeout: Duration,
    work: impl std::future::Future<Output = Result<T, tokio_postgres::Error>> + Send,
) -> Result<T, Failure> {
    match block_on(runtime.get()?, async {
        tokio::time::timeout(timeout, work).await
    })? {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(failure(&e)),
        Err(_) => Err(Failure::TimedOut),
    }
}

/// The parameters with their types (`bigint`, `text`), as `query_typed` takes them: a statement is one
/// round trip (parse, bind, execute and sync sent at once, an unnamed statement), on a new connection
/// too. Each round trip is one more answer that may come late (or be lost): a statement prepared
/// first took two on each connection, and a re-send after a broken connection paid them again.
fn typed<'a>(params: &'a [Param<'a>]) -> [(&'a (dyn ToSql + Sync), Type); 8] {
    std::array::from_fn(|i| match params.get(i) {
        Some(Param::Int(v)) => (v as &(dyn ToSql + Sync), Type::INT8),
        Some(Param::Text(v)) => (v as &(dyn ToSql + Sync), Type::TEXT),
        None => (&0i64 as &(dyn ToSql + Sync), Type::INT8),
    })
}

/// `BEGIN`, the advisory lock `key` (`lock`, [`Statement::ClaimLock`]'s text), the statement `text`,
/// `COMMIT`: sent at once, one round trip, as [`typed`] makes one statement one. Whatever the client
/// then does (a timeout, a closed connection), the server has the whole transaction and ends it:
/// committed, or rolled back on an error or a connection closed before it was all read; the lock goes
/// with it.
pub(crate) async fn serialized(
    client: &tokio_postgres::Client,
    lock: &str,
    key: i64,
    text: &str,
    params: &[(&(dyn ToSql + Sync), Type)],
) -> Result<Vec<tokio_postgres::Row>, tokio_postgres::Error> {
    // Each future sends its messages when first polled; `try_join4` polls all four in order at once.
    let (_, _, rows, _) = futures_util::future::try_join4(
        client.batch_execute("BEGIN"),
        client.query_typed(lock, &[(&key, Type::INT8)]),
        client.query_typed(text, params),
        client.batch_execute("COMMIT"),
    )
    .await?;
    Ok(rows)
}

impl DriverConnection {
    /// After a statement timed out: answers come in order, so an empty query sent now is answered
    /// only after the late answer; until it is, the connection is [`Connection::draining`] (the store
    /// sends elsewhere rather than wait behind it). Driven by this store's runtime, as its statements
    /// and logins are.
    fn watch<T>(&self, result: &Result<T, Failure>) {
        use std::sync::atomic::Ordering;
        if !matches!(result, Err(Failure::TimedOut)) || self.draining.swap(true, Ordering::AcqRel) {
            return;
        }
        let Ok(runtime) = self.runtime.get() else {
            return;
        };
        let (client, draining) = (self.client.clone(), self.draining.clone());
        runtime.spawn(async move {
            let _ = client.simple_query("").await;
            draining.store(false, Ordering::Release);
        });
    }
}

impl Connection for DriverConnection {
    fn draining(&self) -> bool {
        self.draining.load(std::sync::atomic::Ordering::Acquire)
    }

    fn close(self: Box<Self>) {
        // The I/O task cancelled, then run until it has ended (its socket closed): the runtime is
        // current-thread, so only a call that enters it runs the task. Not from inside a runtime
        // (entering this one there would panic): then the task ends when this runtime runs next.
        let DriverConnection {
            client,
            runtime,
            io,
            ..
        } = *self;
        drop(client);
        io.abort();
        if tokio::runtime::Handle::try_current().is_err() {
            if let Ok(r) = runtime.get() {
                let _ = block_on(r, async {
                    let _ = tokio::time::timeout(Duration::from_millis(200), io).await;
                });
            }
        }
    }

    fn query(
        &mut self,
        statement: Statement,
        args: &[Param<'_>],
        timeout: Duration,
    ) -> Result<Vec<Row>, Failure> {
        let text = self.text(statement);
        let typed = typed(args);
        let rows = run(
            &self.runtime,
            timeout,
            self.client.query_typed(&text, &typed[..args.len()]),
        );
        self.watch(&rows);
        rows?.iter().map(row).collect()
    }

    fn query_serialized(
        &mut self,
        key: i64,
        statement: Statement,
        args: &[Param<'_>],
        timeout: Duration,
    ) -> Result<Vec<Row>, Failure> {
        let lock = self.text(Statement::ClaimLock);
        let text = self.text(statement);
        let typed = typed(args);
        let rows = run(
            &self.runtime,
            timeout,
            serialized(&self.client, &lock, key, &text, &typed[..args.len()]),
        );
        self.watch(&rows);
        rows?.iter().map(row).collect()
    }

    fn execute(
        &mut self,
        statement: Statement,
        args: &[Param<'_>],
        timeout: Duration,
    ) -> Result<u64, Failure> {
        if statement.batch() {
            let text = self.text(statement);
            let done = run(&self.runtime, timeout, self.client.batch_execute(&text));
            self.watch(&done);
            return done.map(|()| 0);
        }
        let text = self.text(statement);
        let typed = typed(args);
        let typed = &typed[..args.len()];
        let done = run(&self.runtime, timeout, async {
            let mut rows = std::pin::pin!(
                self.client
                    .query_typed_raw(&text, typed.iter().map(|(v, t)| (*v, t.clone())))
                    .await?
            );
            while futures_util::StreamExt::next(&mut rows)
                .await
                .transpose()?
                .is_some()
            {}
            Ok(rows.rows_affected().unwrap_or(0))
        });
        self.watch(&done);
        done
    }

    fn is_closed(&self) -> bool {
        self.client.is_closed()
    }
}

/// A tokio-postgres row as [`Value`]s (`bigint`, `boolean`, `text` columns).
fn row(r: &tokio_postgres::Row) -> Result<Row, Failure> {
    (0..r.len())
        .map(|i| {
            let ty = r.columns()[i].type_();
            let value = if *ty == Type::INT8 {
                r.try_get::<_, Option<i64>>(i).map(|v| v.map(Value::Int))
            } else if *ty == Type::BOOL {
                r.try_get::<_, Option<bool>>(i).map(|v| v.map(Value::Bool))
            } else {
                r.try_get::<_, Option<String>>(i)
                    .map(|v| v.map(Value::Text))
            };
            value
                .map(|v| v.unwrap_or(Value::Null))
                .map_err(|e| failure(&e))
        })
        .collect()
}
