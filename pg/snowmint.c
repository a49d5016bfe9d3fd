/*
 * snowmint inside PostgreSQL: the extension's C code, over the project's C ABI (libsnowmint.a, linked
 * into snowmint.so). See pg/README.md for what it offers and ARCHITECTURE.md for why it is built this way.
 *
 * One generator per server: with shared_preload_libraries = 'snowmint', the postmaster opens a shared
 * generator whose state word lives in a state file in the data directory
 * (snowmint_shared_generator_open_file); every backend it forks inherits the mapping and mints from the
 * same word, lock-free. The file is the durable high-water mark: a backend killed, a server crash or an
 * immediate restart (even with the clock set back) continues after the last ID any backend minted.
 */
#include "postgres.h"

#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "postmaster/bgworker.h"
#include "port/atomics.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/jsonb.h"
#include "utils/numeric.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "snowmint.h"

PG_MODULE_MAGIC;

void _PG_init(void);

/* ------------------------------------------------------------------------------------------ settings */
static int node_id_guc = -1;
static char *layout_guc = NULL;
static char *state_file_guc = NULL;
static char *sequencer_guc = NULL;
static int max_ahead_ms_guc = 15000;
static int test_clock_offset_ms_guc = 0;
static bool test_functions_guc = false;
static char *store_guc = NULL;
static int flush_interval_ms_guc = 1000;

enum { POLICY_WAIT = 0, POLICY_FAIL = 1, POLICY_STRICT = 2 };
static int policy_guc = POLICY_WAIT;
static const struct config_enum_entry policy_options[] = {
    {"wait", POLICY_WAIT, false}, {"fail", POLICY_FAIL, false}, {"strict", POLICY_STRICT, false}, {NULL, 0, false}};

/* ------------------------------------------------------------------------ the server's generator */
/* Set in the postmaster (shared_preload_libraries) and inherited by every backend it forks. */
static bool preloaded = false;
static snowmint_shared_generator *server_gen = NULL;
static snowmint_layout *server_layout = NULL;
static uint32 server_status = SNOWMINT_RESULT_OK; /* why server_gen is NULL */
static char server_message[1024] = "";
static bool server_ms_clock = true; /* the layout's clock unit (for the test clock offset) */
/* Leased node ID (snowmint.store): the lease source and state file every process of the server opens
 * (snowmint_generator_open_shared: one lease per host, its record in the state file); the background
 * worker claims it and keeps it, each backend joins it on its first mint (backend_gen). */
static bool lease_mode = false;
static char *lease_source = NULL;
static char *state_path = NULL;
static snowmint_options server_opt;
static snowmint_shared_generator *backend_gen = NULL;

/* The last flush of the state file (snowmint.flushed()): a page the postmaster maps (MAP_SHARED,
 * anonymous) before it forks, so every process of the server sees it, across crash resets too. The
 * background worker (the state flusher, or the lease keeper) writes it after each flush that
 * succeeded: `state`, the state word read before the flush (every ID at or below it is on the storage
 * device), `at` its time (a TimestampTz), `flushes` how many. */
typedef struct flush_record {
    pg_atomic_uint64 flushes;
    pg_atomic_uint64 state;
    pg_atomic_uint64 at;
} flush_record;
static flush_record *flushed = NULL;

#define SM_SQLSTATE(code) \
    MAKE_SQLSTATE('S', 'M', '0' + ((code) / 100) % 10, '0' + ((code) / 10) % 10, '0' + (code) % 10)

/* Raises the last failed call's error: SQLSTATE SMnnn (nnn: the project's code number), the message
 * "CODE: detail" (the code's stable name, then the library's detailed message). */
static void pg_attribute_noreturn() sm_raise(uint32 r)
{
    char msg[1024];
    size_t len = 0;
    snowmint_error_info info;
    memset(&info, 0, sizeof info);
    if (snowmint_last_error_message(msg, sizeof msg, &len) != SNOWMINT_RESULT_OK || msg[0] == '\0')
        strlcpy(msg, snowmint_result_message(r), sizeof msg);
    snowmint_last_error_info(&info);
    if (r == SNOWMINT_RESULT_PARSE)
        ereport(ERROR, (errcode(SM_SQLSTATE(r)), errmsg("%s: %s", snowmint_result_name(r), msg),
                        errdetail("position %llu", (unsigned long long) info.position)));
    if (r == SNOWMINT_RESULT_TOO_FAR_AHEAD)
        ereport(ERROR, (errcode(SM_SQLSTATE(r)), errmsg("%s: %s", snowmint_result_name(r), msg),
                        errdetail("retry after %llu ms", (unsigned long long) info.retry_after_ms)));
    ereport(ERROR, (errcode(SM_SQLSTATE(r)), errmsg("%s: %s", snowmint_result_name(r), msg)));
}

static void pg_attribute_noreturn() sm_raise_msg(uint32 r, const char *msg)
{
    ereport(ERROR, (errcode(SM_SQLSTATE(r)), errmsg("%s: %s", snowmint_result_name(r), msg)));
}

#define SM_CHECK(call)                            \
    do {                                          \
        uint32 sm_r_ = (call);                    \
        if (sm_r_ != SNOWMINT_RESULT_OK)          \
            sm_raise(sm_r_);                      \
    } while (0)

static const char *preload_message =
    "snowmint must be loaded when the server starts: add shared_preload_libraries = 'snowmint' to "
    "postgresql.conf (with snowmint.node_id = N, a node ID free in your fleet), then restart the server";

/* ------------------------------------------------------------------------------------------ layouts */
static bool
parse_u64(const char *s, uint64 *out)
{
    char *end = NULL;
    unsigned long long v;
    if (s == NULL || *s < '0' || *s > '9')
        return false;
    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0')
        return false;
    *out = (uint64) v;
    return true;
}

/* A jsonb scalar (a number or a decimal string) as u64; INVALID_LAYOUT naming the key otherwise. */
static uint64
json_u64(JsonbValue *v, const char *key)
{
    char *s = NULL;
    uint64 out;
    if (v->type == jbvString)
        s = pnstrdup(v->val.string.val, v->val.string.len);
    else if (v->type == jbvNumeric)
        s = DatumGetCString(DirectFunctionCall1(numeric_out, NumericGetDatum(v->val.numeric)));
    if (!parse_u64(s, &out))
        sm_raise_msg(SNOWMINT_RESULT_INVALID_LAYOUT,
                     psprintf("invalid layout: %s must be a whole number (a JSON number or a decimal string)", key));
    return out;
}

static char *
json_text(JsonbValue *v, const char *key)
{
    if (v->type != jbvString)
        sm_raise_msg(SNOWMINT_RESULT_INVALID_LAYOUT, psprintf("invalid layout: %s must be a string", key));
    return pnstrdup(v->val.string.val, v->val.string.len);
}

/* A layout from its name ("twitter" …) or its JSON (the conformance vectors' layout spec, which every
 * runtime takes): {"preset": NAME}, {"preset": "hazelcast", "node_id_offset": N},
 * {"preset": "snowcast", "epoch_ms": E, "node_count": C}, or the custom fields. */
static snowmint_layout *
layout_from_text(const char *txt)
{
    snowmint_layout *layout = NULL;
    const char *p = txt;
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    if (*p != '{') {
        SM_CHECK(snowmint_layout_new_preset(txt, &layout));
        return layout;
    }
    {
        Datum jd = DirectFunctionCall1(jsonb_in, CStringGetDatum(txt));
        Jsonb *jb = DatumGetJsonbP(jd);
        JsonbIterator *it;
        JsonbValue v;
        JsonbIteratorToken tok;
        char *key = NULL;
        char *preset = NULL, *order = NULL;
        bool has_offset = false, has_epoch = false, has_count = false, has_custom = false;
        uint64 offset = 0, epoch = 0, count = 0;
        snowmint_layout_config cfg;
        snowmint_layout_config_default(&cfg);
        cfg.node_split_bits = 0;
        if (!JB_ROOT_IS_OBJECT(jb))
            sm_raise_msg(SNOWMINT_RESULT_INVALID_LAYOUT, "invalid layout: give a preset name or a JSON object");
        it = JsonbIteratorInit(&jb->root);
        while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE) {
            if (tok == WJB_KEY) {
                key = pnstrdup(v.val.string.val, v.val.string.len);
                continue;
            }
            if (tok != WJB_VALUE)
                continue;
            if (strcmp(key, "preset") == 0)
                preset = json_text(&v, key);
            else if (strcmp(key, "node_id_offset") == 0)
                has_offset = true, offset = json_u64(&v, key);
            else if (strcmp(key, "epoch_ms") == 0)
                has_epoch = true, epoch = json_u64(&v, key);
            else if (strcmp(key, "node_count") == 0)
                has_count = true, count = json_u64(&v, key);
            else if (strcmp(key, "timestamp_bits") == 0)
                has_custom = true, cfg.timestamp_bits = (uint32) json_u64(&v, key);
            else if (strcmp(key, "node_bits") == 0)
                has_custom = true, cfg.node_bits = (uint32) json_u64(&v, key);
            else if (strcmp(key, "sequence_bits") == 0)
                has_custom = true, cfg.sequence_bits = (uint32) json_u64(&v, key);
            else if (strcmp(key, "tick_ns") == 0)
                has_custom = true, cfg.tick_ns = json_u64(&v, key);
            else if (strcmp(key, "order") == 0)
                has_custom = true, order = json_text(&v, key);
            else if (strcmp(key, "use_sign_bit") == 0) {
                if (v.type != jbvBool)
                    sm_raise_msg(SNOWMINT_RESULT_INVALID_LAYOUT, "invalid layout: use_sign_bit must be true or false");
                has_custom = true;
                cfg.use_sign_bit = v.val.boolean;
            } else
                sm_raise_msg(SNOWMINT_RESULT_INVALID_LAYOUT,
                             psprintf("invalid layout: unknown field \"%s\" (preset, node_id_offset, epoch_ms, "
                                      "node_count, timestamp_bits, node_bits, sequence_bits, order, tick_ns, "
                                      "use_sign_bit)",
                                      key));
        }
        if (preset != NULL) {
            if (has_custom)
                sm_raise_msg(SNOWMINT_RESULT_INVALID_LAYOUT,
                             "invalid layout: give a preset or the custom fields, not both");
            if (strcmp(preset, "snowcast") == 0) {
                if (!has_epoch || !has_count || has_offset)
                    sm_raise_msg(SNOWMINT_RESULT_INVALID_LAYOUT,
                                 "invalid layout: snowcast takes epoch_ms and node_count");
                SM_CHECK(snowmint_layout_new_snowcast(epoch, count, &layout));
            } else if (strcmp(preset, "hazelcast") == 0 && has_offset) {
                if (has_epoch || has_count)
                    sm_raise_msg(SNOWMINT_RESULT_INVALID_LAYOUT, "invalid layout: hazelcast takes node_id_offset only");
                SM_CHECK(snowmint_layout_new_hazelcast(offset, &layout));
            } else {
                if (has_epoch || has_count || has_offset)
                    sm_raise_msg(SNOWMINT_RESULT_INVALID_LAYOUT,
                                 psprintf("invalid layout: preset %s takes no parameters", preset));
                SM_CHECK(snowmint_layout_new_preset(preset, &layout));
            }
            return layout;
        }
        if (has_count)
            sm_raise_msg(SNOWMINT_RESULT_INVALID_LAYOUT, "invalid layout: node_count is for the snowcast preset");
        if (order != NULL)
            SM_CHECK(snowmint_order_from_name(order, &cfg.order));
        if (has_epoch)
            cfg.epoch_ms = epoch;
        cfg.node_id_offset = offset;
        SM_CHECK(snowmint_layout_new(&cfg, &layout));
        return layout;
    }
}

/* The layout a call names (NULL: the server's, snowmint.layout). One parsed layout is cached per backend. */
static char *cached_layout_text = NULL;
static snowmint_layout *cached_layout = NULL;

static const snowmint_layout *
layout_arg(FunctionCallInfo fcinfo, int argno)
{
    char *txt;
    snowmint_layout *l;
    if (PG_NARGS() <= argno || PG_ARGISNULL(argno)) {
        if (server_layout != NULL)
            return server_layout;
        txt = layout_guc != NULL ? layout_guc : "twitter";
    } else
        txt = text_to_cstring(PG_GETARG_TEXT_PP(argno));
    if (cached_layout_text != NULL && strcmp(cached_layout_text, txt) == 0)
        return cached_layout;
    l = layout_from_text(txt);
    if (cached_layout != NULL)
        snowmint_layout_free(cached_layout);
    if (cached_layout_text != NULL)
        pfree(cached_layout_text);
    cached_layout = l;
    cached_layout_text = MemoryContextStrdup(TopMemoryContext, txt);
    return cached_layout;
}

/* ------------------------------------------------------------------------------------------ minting */
static uint64
realtime_unix_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64) ts.tv_sec * 1000000000ULL + (uint64) ts.tv_nsec;
}

/* The server generator's clock when snowmint.test_clock_offset_ms is set (tests only): the system
 * clock moved by that offset, so a test can restart the server with its clock "set back". */
static uint64
offset_clock(void *userdata)
{
    int64 ns = (int64) realtime_unix_ns() + (int64) test_clock_offset_ms_guc * 1000000;
    (void) userdata;
    if (ns < 0)
        ns = 0;
    return server_ms_clock ? (uint64) ns / 1000000 : (uint64) ns;
}

static void
server_flush(int code, Datum arg)
{
    (void) code;
    (void) arg;
    if (server_gen != NULL)
        snowmint_shared_generator_flush(server_gen);
}

/* Writes the state file to the storage device and records it in `flushed`: the state word read first,
 * so every ID at or below it is durable once the flush returns. A fixed node ID's generator through the
 * C ABI's flush (msync MS_SYNC); a leased one's file (the C ABI flushes file-backed fixed generators
 * only) through fdatasync on its path, which on Linux writes back the pages every process dirtied
 * through its mapping, as msync(MS_SYNC) does. A failure is logged (once until a flush succeeds). */
static void
flush_state(snowmint_shared_generator *g)
{
    static bool failing = false;
    uint64 state = 0;
    uint32 r = snowmint_shared_generator_state(g, &state);
    char msg[900] = "";
    if (r == SNOWMINT_RESULT_OK && !lease_mode) {
        r = snowmint_shared_generator_flush(g);
        if (r != SNOWMINT_RESULT_OK)
            snowmint_last_error_message(msg, sizeof msg, NULL);
    } else if (r == SNOWMINT_RESULT_OK) {
        int fd = open(state_path, O_RDONLY | O_CLOEXEC);
        if (fd < 0 || fdatasync(fd) != 0) {
            r = SNOWMINT_RESULT_STATE_FILE_MISMATCH;
            snprintf(msg, sizeof msg, "fdatasync: %m");
        }
        if (fd >= 0)
            close(fd);
    }
    if (r != SNOWMINT_RESULT_OK) {
        if (!failing)
            ereport(LOG, (errmsg("snowmint: cannot flush the state file %s (%s): %s", state_path,
                                 snowmint_result_name(r), msg)));
        failing = true;
        return;
    }
    failing = false;
    pg_atomic_write_u64(&flushed->state, state);
    pg_atomic_write_u64(&flushed->at, (uint64) GetCurrentTimestamp());
    pg_atomic_fetch_add_u64(&flushed->flushes, 1);
}

/* Registers the server's background worker (restarted 1 s after it exits). */
static void
register_worker(const char *function, const char *name, BgWorkerStartTime start)
{
    BackgroundWorker worker;
    memset(&worker, 0, sizeof worker);
    worker.bgw_flags = BGWORKER_SHMEM_ACCESS;
    worker.bgw_start_time = start;
    worker.bgw_restart_time = 1;
    strlcpy(worker.bgw_library_name, "snowmint", BGW_MAXLEN);
    strlcpy(worker.bgw_function_name, function, BGW_MAXLEN);
    strlcpy(worker.bgw_name, name, BGW_MAXLEN);
    strlcpy(worker.bgw_type, name, BGW_MAXLEN);
    RegisterBackgroundWorker(&worker);
}

static void
open_server_generator(void)
{
    snowmint_options opt;
    snowmint_layout_info info;
    char *path;
    uint32 r;

    volatile bool leased = store_guc != NULL && store_guc[0] != '\0';
    if (leased && node_id_guc >= 0) {
        server_status = SNOWMINT_RESULT_INVALID_ARGUMENT;
        strlcpy(server_message, "set either snowmint.node_id (a fixed node ID) or snowmint.store (a leased one), not both",
                sizeof server_message);
        return;
    }
    if (!leased && node_id_guc < 0) {
        server_status = SNOWMINT_RESULT_INVALID_ARGUMENT;
        strlcpy(server_message,
                "no node ID: set snowmint.node_id = N in postgresql.conf (a node ID no other process of your "
                "fleet mints under), or snowmint.store = 'postgres://…' to lease one, and restart the server",
                sizeof server_message);
        return;
    }
    r = snowmint_layout_new_preset("twitter", &server_layout);
    if (layout_guc != NULL) {
        snowmint_layout_free(server_layout);
        server_layout = NULL;
        PG_TRY();
        {
            server_layout = layout_from_text(layout_guc);
        }
        PG_CATCH();
        {
            ErrorData *e = CopyErrorData();
            FlushErrorState();
            server_status = SNOWMINT_RESULT_INVALID_LAYOUT;
            snprintf(server_message, sizeof server_message, "snowmint.layout: %s", e->message);
            return;
        }
        PG_END_TRY();
    }
    (void) r;
    snowmint_layout_get_info(server_layout, &info);
    server_ms_clock = info.clock_unit == SNOWMINT_CLOCK_UNIT_MS;
    snowmint_options_default(&opt);
    /* The wait policy sleeps in next_id's own loop (interruptible: a cancel or statement_timeout ends
     * it), so the library is asked to fail rather than to sleep. */
    opt.policy = policy_guc == POLICY_STRICT ? SNOWMINT_POLICY_STRICT : SNOWMINT_POLICY_FAIL;
    opt.max_ahead_ns = (uint64) max_ahead_ms_guc * 1000000ULL;
    if (test_clock_offset_ms_guc != 0)
        opt.clock = offset_clock;
    path = state_file_guc != NULL && state_file_guc[0] != '\0' ? state_file_guc : "snowmint.state";
    if (path[0] != '/')
        path = psprintf("%s/%s", DataDir, path);
    state_path = MemoryContextStrdup(TopMemoryContext, path);
    server_opt = opt;
    if (leased) {
        const char *seq = sequencer_guc != NULL ? sequencer_guc : "default";
        if (opt.clock != NULL) {
            server_status = SNOWMINT_RESULT_INVALID_ARGUMENT;
            strlcpy(server_message, "snowmint.test_clock_offset_ms cannot move a leased generator's clock",
                    sizeof server_message);
            return;
        }
        lease_source = MemoryContextStrdup(
            TopMemoryContext, psprintf("%s%csequencer=%s", store_guc, strchr(store_guc, '?') ? '&' : '?', seq));
        lease_mode = true;
        register_worker("pgsm_lease_worker_main", "snowmint lease keeper", BgWorkerStart_RecoveryFinished);
        ereport(LOG, (errmsg("snowmint: node ID leased from sequencer '%s' (snowmint.store), state file %s", seq,
                             path)));
        return;
    }
    r = snowmint_shared_generator_open_file(path, server_layout, (uint64) node_id_guc, &opt, &server_gen);
    if (r != SNOWMINT_RESULT_OK) {
        char msg[900];
        server_status = r;
        snowmint_last_error_message(msg, sizeof msg, NULL);
        snprintf(server_message, sizeof server_message, "state file %s: %s", path, msg);
        server_gen = NULL;
        ereport(LOG, (errmsg("snowmint: %s: %s", snowmint_result_name(r), server_message)));
        return;
    }
    on_proc_exit(server_flush, (Datum) 0);
    register_worker("pgsm_flush_worker_main", "snowmint state flusher", BgWorkerStart_PostmasterStart);
    ereport(LOG, (errmsg("snowmint: node ID %d, state file %s (flushed every %d ms)", node_id_guc, path,
                         flush_interval_ms_guc)));
}

/* Opens this process's handle on the leased generator: joins the lease the state file records (the
 * background worker's claim), or claims one when there is none. The library's threads (the keeper that
 * renews the claim, the store's I/O) start with every signal blocked, so that the server's signals
 * (SIGTERM, SIGINT, SIGUSR1, SIGALRM …) stay this process's main thread's. */
static uint32
open_leased(snowmint_shared_generator **out)
{
    sigset_t all, old;
    uint32 r;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    r = snowmint_generator_open_shared(lease_source, state_path, server_layout, &server_opt, out);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return r;
}

static void
close_leased(snowmint_shared_generator *g)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    snowmint_shared_generator_free(g);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* A mint failed with r: a lost lease drops this backend's handle (the next call joins the next lease
 * the worker claims); then the error is raised. */
static void pg_attribute_noreturn() mint_failed(uint32 r)
{
    if (lease_mode && backend_gen != NULL && (r == SNOWMINT_RESULT_LEASE_LOST || r == SNOWMINT_RESULT_SEQUENCER_DESTROYED)) {
        char msg[1024];
        snowmint_last_error_message(msg, sizeof msg, NULL);
        close_leased(backend_gen);
        backend_gen = NULL;
        sm_raise_msg(r, msg);
    }
    sm_raise(r);
}

static snowmint_shared_generator *
require_server(FunctionCallInfo fcinfo, int seq_arg)
{
    if (!preloaded)
        ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE), errmsg("%s", preload_message)));
    if (server_status != SNOWMINT_RESULT_OK)
        sm_raise_msg(server_status, server_message);
    if (seq_arg >= 0 && PG_NARGS() > seq_arg && !PG_ARGISNULL(seq_arg)) {
        char *name = text_to_cstring(PG_GETARG_TEXT_PP(seq_arg));
        const char *mine = sequencer_guc != NULL ? sequencer_guc : "default";
        if (strcmp(name, mine) != 0)
            sm_raise_msg(SNOWMINT_RESULT_SEQUENCER_NOT_FOUND,
                         psprintf("this server mints for sequencer '%s' only (snowmint.sequencer), not '%s'", mine,
                                  name));
    }
    if (!lease_mode)
        return server_gen;
    if (backend_gen == NULL) {
        uint32 r = open_leased(&backend_gen);
        if (r != SNOWMINT_RESULT_OK) {
            backend_gen = NULL;
            sm_raise(r);
        }
    }
    return backend_gen;
}

/* Waits (interruptibly) before a retry of a call that returned TOO_FAR_AHEAD under the wait policy. */
static void
wait_ahead(void)
{
    snowmint_error_info info;
    long ms;
    snowmint_last_error_info(&info);
    ms = info.retry_after_ms == 0 ? 1 : (long) Min(info.retry_after_ms, 100);
    (void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, ms, PG_WAIT_EXTENSION);
    ResetLatch(MyLatch);
    CHECK_FOR_INTERRUPTS();
}

PG_FUNCTION_INFO_V1(pgsm_next_id);
Datum
pgsm_next_id(PG_FUNCTION_ARGS)
{
    uint64 id;
    uint32 r;
    snowmint_shared_generator *g = require_server(fcinfo, 0);
    for (;;) {
        r = snowmint_shared_next_id(g, &id);
        if (likely(r == SNOWMINT_RESULT_OK))
            PG_RETURN_INT64((int64) id);
        if (r == SNOWMINT_RESULT_TOO_FAR_AHEAD && policy_guc == POLICY_WAIT) {
            wait_ahead();
            continue;
        }
        mint_failed(r);
    }
}

PG_FUNCTION_INFO_V1(pgsm_next_ids);
Datum
pgsm_next_ids(PG_FUNCTION_ARGS)
{
    int32 n = PG_GETARG_INT32(0);
    uint64 *buf;
    uint32 r;
    ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
    snowmint_shared_generator *g = require_server(fcinfo, 1);
    if (n < 0 || n > (1 << 24))
        sm_raise_msg(SNOWMINT_RESULT_INVALID_ARGUMENT,
                     psprintf("n is %d: a batch is 0 to 16777216 (2^24) IDs; ask in several calls", n));
    InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
    if (n == 0)
        return (Datum) 0;
    buf = palloc_extended(sizeof(uint64) * (Size) n, MCXT_ALLOC_HUGE);
    for (;;) {
        r = snowmint_shared_next_ids(g, buf, (size_t) n);
        if (r == SNOWMINT_RESULT_OK)
            break;
        if (r == SNOWMINT_RESULT_TOO_FAR_AHEAD && policy_guc == POLICY_WAIT) {
            wait_ahead();
            continue;
        }
        mint_failed(r);
    }
    for (int32 i = 0; i < n; i++) {
        Datum d = Int64GetDatum((int64) buf[i]);
        bool isnull = false;
        tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, &d, &isnull);
    }
    pfree(buf);
    return (Datum) 0;
}

/* snowmint.node_id(): the node ID this server mints under. */
PG_FUNCTION_INFO_V1(pgsm_server_node_id);
Datum
pgsm_server_node_id(PG_FUNCTION_ARGS)
{
    snowmint_shared_generator *g = require_server(fcinfo, -1);
    uint64 node;
    if (!lease_mode)
        PG_RETURN_INT64((int64) node_id_guc);
    SM_CHECK(snowmint_shared_generator_node_id(g, &node));
    PG_RETURN_INT64((int64) node);
}

PG_FUNCTION_INFO_V1(pgsm_require_preload);
Datum
pgsm_require_preload(PG_FUNCTION_ARGS)
{
    if (!preloaded)
        ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE), errmsg("%s", preload_message)));
    PG_RETURN_VOID();
}

/* snowmint.stats(): this backend's view of the server generator's statistics (SPEC §2). */
PG_FUNCTION_INFO_V1(pgsm_stats_fn);
Datum
pgsm_stats_fn(PG_FUNCTION_ARGS)
{
    snowmint_stats s;
    uint64 state;
    TupleDesc tupdesc;
    Datum values[7];
    bool nulls[7] = {false};
    snowmint_shared_generator *g = require_server(fcinfo, -1);
    SM_CHECK(snowmint_shared_generator_stats(g, &s));
    SM_CHECK(snowmint_shared_generator_state(g, &state));
    if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
        elog(ERROR, "return type must be a row type");
    values[0] = Int64GetDatum((int64) s.minted);
    values[1] = Int64GetDatum((int64) s.batches);
    values[2] = Int64GetDatum((int64) s.borrowed_ticks);
    values[3] = Int64GetDatum((int64) s.waits);
    values[4] = Int64GetDatum((int64) s.wait_ns);
    values[5] = Int64GetDatum((int64) s.regressions);
    values[6] = Int64GetDatum((int64) state);
    PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc), values, nulls)));
}

/* ------------------------------------------------------------------------------- reading IDs */
static TimestampTz
unix_to_timestamptz(uint64 unix_ms, uint32 sub_ms_ns)
{
    /* PostgreSQL counts microseconds from 2000-01-01. */
    int64 ms = (int64) unix_ms - (int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY * 1000;
    return (TimestampTz) (ms * 1000 + sub_ms_ns / 1000);
}

PG_FUNCTION_INFO_V1(pgsm_decode_fn);
Datum
pgsm_decode_fn(PG_FUNCTION_ARGS)
{
    uint64 id = (uint64) PG_GETARG_INT64(0);
    const snowmint_layout *layout = layout_arg(fcinfo, 1);
    snowmint_decoded d;
    TupleDesc tupdesc;
    Datum values[7];
    bool nulls[7] = {false};
    SM_CHECK(snowmint_decode(layout, id, &d));
    if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
        elog(ERROR, "return type must be a row type");
    if (d.unix_ms > (uint64) 9223372036854LL) /* beyond timestamptz */
        nulls[0] = true;
    else
        values[0] = TimestampTzGetDatum(unix_to_timestamptz(d.unix_ms, d.sub_ms_ns));
    values[1] = Int64GetDatum((int64) d.node);
    values[2] = Int64GetDatum((int64) d.sequence);
    values[3] = Int64GetDatum((int64) d.timestamp_ticks);
    values[4] = Int64GetDatum((int64) d.unix_ms);
    values[5] = Int32GetDatum((int32) d.sub_ms_ns);
    values[6] = CStringGetTextDatum(d.iso);
    PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc), values, nulls)));
}

static uint64
numeric_arg_u64(FunctionCallInfo fcinfo, int argno, const char *name)
{
    char *s = DatumGetCString(DirectFunctionCall1(numeric_out, PG_GETARG_DATUM(argno)));
    uint64 v;
    if (!parse_u64(s, &v))
        sm_raise_msg(SNOWMINT_RESULT_INVALID_ARGUMENT, psprintf("%s is %s: give a whole number 0 to 2^64-1", name, s));
    return v;
}

PG_FUNCTION_INFO_V1(pgsm_compose_fn);
Datum
pgsm_compose_fn(PG_FUNCTION_ARGS)
{
    uint64 ticks = numeric_arg_u64(fcinfo, 0, "timestamp_ticks");
    uint64 node = numeric_arg_u64(fcinfo, 1, "node");
    uint64 seq = numeric_arg_u64(fcinfo, 2, "sequence");
    const snowmint_layout *layout = layout_arg(fcinfo, 3);
    uint64 id;
    SM_CHECK(snowmint_compose(layout, ticks, node, seq, &id));
    PG_RETURN_INT64((int64) id);
}

PG_FUNCTION_INFO_V1(pgsm_min_id_at_ms_fn);
Datum
pgsm_min_id_at_ms_fn(PG_FUNCTION_ARGS)
{
    uint64 ms = numeric_arg_u64(fcinfo, 0, "unix_ms");
    const snowmint_layout *layout = layout_arg(fcinfo, 1);
    uint64 id;
    SM_CHECK(snowmint_min_id_at_ms(layout, ms, &id));
    PG_RETURN_INT64((int64) id);
}

PG_FUNCTION_INFO_V1(pgsm_min_id_at_fn);
Datum
pgsm_min_id_at_fn(PG_FUNCTION_ARGS)
{
    TimestampTz t = PG_GETARG_TIMESTAMPTZ(0);
    const snowmint_layout *layout = layout_arg(fcinfo, 1);
    int64 unix_us = t + (int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY * USECS_PER_SEC;
    uint64 id;
    if (unix_us < 0)
        sm_raise_msg(SNOWMINT_RESULT_CLOCK_BEFORE_EPOCH, "the time is before 1970");
    SM_CHECK(snowmint_min_id_at_ns(layout, (uint64) unix_us * 1000, &id));
    PG_RETURN_INT64((int64) id);
}

static uint32
encoding_arg(FunctionCallInfo fcinfo, int argno)
{
    uint32 enc;
    char *name = text_to_cstring(PG_GETARG_TEXT_PP(argno));
    SM_CHECK(snowmint_encoding_from_name(name, &enc));
    return enc;
}

PG_FUNCTION_INFO_V1(pgsm_encode_fn);
Datum
pgsm_encode_fn(PG_FUNCTION_ARGS)
{
    uint64 id = (uint64) PG_GETARG_INT64(0);
    uint32 enc = encoding_arg(fcinfo, 1);
    char buf[SNOWMINT_ENCODED_CAPACITY];
    SM_CHECK(snowmint_encode(enc, id, buf, sizeof buf, NULL));
    PG_RETURN_TEXT_P(cstring_to_text(buf));
}

PG_FUNCTION_INFO_V1(pgsm_parse_fn);
Datum
pgsm_parse_fn(PG_FUNCTION_ARGS)
{
    char *s = text_to_cstring(PG_GETARG_TEXT_PP(0));
    char *form = text_to_cstring(PG_GETARG_TEXT_PP(1));
    uint64 id;
    if (strcmp(form, "any") == 0)
        SM_CHECK(snowmint_parse_any(s, &id));
    else {
        uint32 enc;
        SM_CHECK(snowmint_encoding_from_name(form, &enc));
        SM_CHECK(snowmint_parse(enc, s, &id));
    }
    PG_RETURN_INT64((int64) id);
}

PG_FUNCTION_INFO_V1(pgsm_layout_info_fn);
Datum
pgsm_layout_info_fn(PG_FUNCTION_ARGS)
{
    const snowmint_layout *layout = layout_arg(fcinfo, 0);
    snowmint_layout_info i;
    char *json;
    SM_CHECK(snowmint_layout_get_info(layout, &i));
    json = psprintf("{\"total_bits\": %u, \"timestamp_bits\": %u, \"node_bits\": %u, \"sequence_bits\": %u, "
                    "\"order\": \"%s\", \"clock_unit\": \"%s\", \"tick_ns\": %llu, \"epoch_ms\": %llu, "
                    "\"node_id_offset\": %llu, \"node_count\": %llu, \"max_node_id\": %llu, \"ids_per_tick\": %llu, "
                    "\"max_tick\": %llu, \"lifespan_end_ms\": %llu, \"lifespan_end_iso\": \"%s\"}",
                    i.total_bits, i.timestamp_bits, i.node_bits, i.sequence_bits,
                    i.order == SNOWMINT_ORDER_TIMESTAMP_NODE_SEQUENCE ? "timestamp_node_sequence"
                                                                      : "timestamp_sequence_node",
                    i.clock_unit == SNOWMINT_CLOCK_UNIT_MS ? "ms" : "ns", (unsigned long long) i.tick_ns,
                    (unsigned long long) i.epoch_ms, (unsigned long long) i.node_id_offset,
                    (unsigned long long) i.node_count, (unsigned long long) i.max_node_id,
                    (unsigned long long) i.ids_per_tick, (unsigned long long) i.max_tick,
                    (unsigned long long) i.lifespan_end_ms, i.lifespan_end_iso);
    PG_RETURN_DATUM(DirectFunctionCall1(jsonb_in, CStringGetDatum(json)));
}

/* Opaque IDs (SPEC §6b): one permutation cached per backend (key and layout). */
static char *cached_opaque_key = NULL;
static int cached_opaque_len = 0;
static char *cached_opaque_layout = NULL;
static snowmint_opaque *cached_opaque = NULL;

static snowmint_opaque *
opaque_arg(FunctionCallInfo fcinfo)
{
    bytea *key = PG_GETARG_BYTEA_PP(1);
    int len = VARSIZE_ANY_EXHDR(key);
    const char *layout_text = PG_ARGISNULL(2) ? "" : text_to_cstring(PG_GETARG_TEXT_PP(2));
    const snowmint_layout *layout;
    snowmint_opaque *o = NULL;
    if (cached_opaque != NULL && cached_opaque_len == len && memcmp(cached_opaque_key, VARDATA_ANY(key), len) == 0
        && strcmp(cached_opaque_layout, layout_text) == 0)
        return cached_opaque;
    layout = layout_arg(fcinfo, 2);
    SM_CHECK(snowmint_opaque_new((const uint8_t *) VARDATA_ANY(key), (size_t) len, layout, &o));
    if (cached_opaque != NULL) {
        snowmint_opaque_free(cached_opaque);
        pfree(cached_opaque_key);
        pfree(cached_opaque_layout);
    }
    cached_opaque = o;
    cached_opaque_len = len;
    cached_opaque_key = MemoryContextAlloc(TopMemoryContext, len + 1);
    memcpy(cached_opaque_key, VARDATA_ANY(key), len);
    cached_opaque_layout = MemoryContextStrdup(TopMemoryContext, layout_text);
    return o;
}

PG_FUNCTION_INFO_V1(pgsm_opaque_encode_fn);
Datum
pgsm_opaque_encode_fn(PG_FUNCTION_ARGS)
{
    uint64 id = (uint64) PG_GETARG_INT64(0), token;
    SM_CHECK(snowmint_opaque_encode(opaque_arg(fcinfo), id, &token));
    PG_RETURN_INT64((int64) token);
}

PG_FUNCTION_INFO_V1(pgsm_opaque_decode_fn);
Datum
pgsm_opaque_decode_fn(PG_FUNCTION_ARGS)
{
    uint64 token = (uint64) PG_GETARG_INT64(0), id;
    SM_CHECK(snowmint_opaque_decode(opaque_arg(fcinfo), token, &id));
    PG_RETURN_INT64((int64) id);
}

/* ------------------------------------------------------------------- test-only functions */
/* A private generator of this backend with a scripted clock, for the conformance vectors. Refused
 * unless snowmint.test_functions is on (a superuser-only setting): these mint under any node ID. */
static snowmint_generator *test_gen = NULL;
static uint64 *test_readings = NULL;
static int test_nreadings = 0, test_next_reading = 0;

static void
require_test(void)
{
    if (!test_functions_guc)
        ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
                        errmsg("snowmint's test functions are off: a superuser may SET snowmint.test_functions = on")));
}

static uint64
scripted_clock(void *userdata)
{
    (void) userdata;
    if (test_nreadings == 0)
        return 0;
    if (test_next_reading < test_nreadings)
        return test_readings[test_next_reading++];
    return test_readings[test_nreadings - 1];
}

PG_FUNCTION_INFO_V1(pgsm_test_generator);
Datum
pgsm_test_generator(PG_FUNCTION_ARGS)
{
    const snowmint_layout *layout;
    uint64 node;
    char *policy;
    snowmint_options opt;
    require_test();
    if (PG_ARGISNULL(1) || PG_ARGISNULL(2))
        elog(ERROR, "test_generator: node_id and policy are required");
    node = numeric_arg_u64(fcinfo, 1, "node_id");
    policy = text_to_cstring(PG_GETARG_TEXT_PP(2));
    layout = layout_arg(fcinfo, 0);
    if (test_gen != NULL) {
        snowmint_generator_free(test_gen);
        test_gen = NULL;
    }
    snowmint_options_default(&opt);
    SM_CHECK(snowmint_policy_from_name(policy, &opt.policy));
    if (!PG_ARGISNULL(3))
        opt.max_ahead_ns = numeric_arg_u64(fcinfo, 3, "max_ahead_ms") * 1000000ULL;
    if (!PG_ARGISNULL(4)) {
        opt.sequence_start = SNOWMINT_SEQUENCE_START_SEEDED;
        opt.seed = numeric_arg_u64(fcinfo, 4, "random_seed");
    }
    opt.clock = scripted_clock;
    test_nreadings = 0;
    SM_CHECK(snowmint_generator_new(layout, node, &opt, &test_gen));
    PG_RETURN_VOID();
}

static snowmint_generator *
require_test_gen(void)
{
    require_test();
    if (test_gen == NULL)
        elog(ERROR, "no test generator: call snowmint.test_generator first");
    return test_gen;
}

/* test_clock(readings numeric[]): the readings the next calls take, in order (then the last again). */
PG_FUNCTION_INFO_V1(pgsm_test_clock);
Datum
pgsm_test_clock(PG_FUNCTION_ARGS)
{
    ArrayType *a = PG_GETARG_ARRAYTYPE_P(0);
    Datum *elems;
    bool *nulls;
    int n;
    require_test();
    deconstruct_array(a, NUMERICOID, -1, false, TYPALIGN_INT, &elems, &nulls, &n);
    if (test_readings != NULL)
        pfree(test_readings);
    test_readings = MemoryContextAlloc(TopMemoryContext, sizeof(uint64) * (n + 1));
    for (int i = 0; i < n; i++) {
        char *s = DatumGetCString(DirectFunctionCall1(numeric_out, elems[i]));
        if (!parse_u64(s, &test_readings[i]))
            elog(ERROR, "bad reading %s", s);
    }
    test_nreadings = n;
    test_next_reading = 0;
    PG_RETURN_VOID();
}

static Datum
ids_array(uint64 *ids, int n)
{
    Datum *d = palloc(sizeof(Datum) * (n + 1));
    for (int i = 0; i < n; i++)
        d[i] = Int64GetDatum((int64) ids[i]);
    return PointerGetDatum(construct_array(d, n, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

/* test_next(count): count calls of next_id (the first failure raises); test_batch(count): one batch. */
PG_FUNCTION_INFO_V1(pgsm_test_next);
Datum
pgsm_test_next(PG_FUNCTION_ARGS)
{
    int n = PG_GETARG_INT32(0);
    snowmint_generator *g = require_test_gen();
    uint64 *ids = palloc(sizeof(uint64) * (n + 1));
    for (int i = 0; i < n; i++)
        SM_CHECK(snowmint_next_id(g, &ids[i]));
    PG_RETURN_DATUM(ids_array(ids, n));
}

PG_FUNCTION_INFO_V1(pgsm_test_batch);
Datum
pgsm_test_batch(PG_FUNCTION_ARGS)
{
    int n = PG_GETARG_INT32(0);
    snowmint_generator *g = require_test_gen();
    uint64 *ids = palloc(sizeof(uint64) * (n + 1));
    SM_CHECK(snowmint_next_ids(g, ids, (size_t) n));
    PG_RETURN_DATUM(ids_array(ids, n));
}

PG_FUNCTION_INFO_V1(pgsm_test_state);
Datum
pgsm_test_state(PG_FUNCTION_ARGS)
{
    uint64 s;
    SM_CHECK(snowmint_generator_state(require_test_gen(), &s));
    PG_RETURN_DATUM(DirectFunctionCall3(numeric_in, CStringGetDatum(psprintf("%llu", (unsigned long long) s)), ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1)));
}

PG_FUNCTION_INFO_V1(pgsm_test_restore);
Datum
pgsm_test_restore(PG_FUNCTION_ARGS)
{
    snowmint_generator *g = require_test_gen();
    SM_CHECK(snowmint_generator_restore(g, numeric_arg_u64(fcinfo, 0, "state")));
    PG_RETURN_VOID();
}

/* test_clock_reading(layout, reading float8): a floating-point clock reading's Unix nanoseconds. */
PG_FUNCTION_INFO_V1(pgsm_test_clock_reading);
Datum
pgsm_test_clock_reading(PG_FUNCTION_ARGS)
{
    const snowmint_layout *layout;
    uint64 ns;
    require_test();
    layout = layout_arg(fcinfo, 0);
    SM_CHECK(snowmint_clock_reading_to_ns(layout, PG_GETARG_FLOAT8(1), &ns));
    PG_RETURN_DATUM(DirectFunctionCall3(numeric_in, CStringGetDatum(psprintf("%llu", (unsigned long long) ns)), ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1)));
}

/* test_node_source(source, layout, env jsonb): the node ID a node source gives, with the environment
 * variables of `env` set (JSON null: unset) for the call and restored after it, on every path. */
PG_FUNCTION_INFO_V1(pgsm_test_node_source);
Datum
pgsm_test_node_source(PG_FUNCTION_ARGS)
{
    char *source;
    const snowmint_layout *layout;
    snowmint_shared_generator *g = NULL;
    uint64 node = 0;
    uint32 r;
    char *names[32], *saved[32];
    int nenv = 0;
    require_test();
    if (PG_ARGISNULL(0))
        PG_RETURN_NULL();
    source = text_to_cstring(PG_GETARG_TEXT_PP(0));
    layout = layout_arg(fcinfo, 1);
    if (!PG_ARGISNULL(2)) {
        Jsonb *jb = PG_GETARG_JSONB_P(2);
        JsonbIterator *it = JsonbIteratorInit(&jb->root);
        JsonbValue v;
        JsonbIteratorToken tok;
        char *key = NULL;
        while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE) {
            if (tok == WJB_KEY) {
                key = pnstrdup(v.val.string.val, v.val.string.len);
                continue;
            }
            if (tok != WJB_VALUE || nenv >= 32)
                continue;
            names[nenv] = key;
            saved[nenv] = getenv(key) ? pstrdup(getenv(key)) : NULL;
            nenv++;
            if (v.type == jbvNull)
                unsetenv(key);
            else
                setenv(key, pnstrdup(v.val.string.val, v.val.string.len), 1);
        }
    }
    r = snowmint_generator_open(source, layout, NULL, &g);
    if (r == SNOWMINT_RESULT_OK)
        r = snowmint_shared_generator_node_id(g, &node);
    snowmint_shared_generator_free(g);
    for (int i = nenv - 1; i >= 0; i--) {
        if (saved[i] == NULL)
            unsetenv(names[i]);
        else
            setenv(names[i], saved[i], 1);
    }
    if (r != SNOWMINT_RESULT_OK)
        sm_raise(r);
    PG_RETURN_INT64((int64) node);
}

/* ---------------------------------------------------------------------------- the lease keeper */
/* The background worker of a leased node ID: claims it (or joins the claim the state file records) and
 * holds it while the server runs, so the lease lives while no backend mints; the library's keeper
 * renews it. A lost lease (or a failed claim) ends the worker, which the postmaster starts again after
 * 1 s: it claims again once the backends holding the lost lease have let go of it (each drops its
 * handle at its next mint, which fails with LEASE_LOST). A clean shutdown releases the claim when the
 * worker is the last process on it. */
PGDLLEXPORT void pgsm_lease_worker_main(Datum arg);
void
pgsm_lease_worker_main(Datum arg)
{
    snowmint_shared_generator *g = NULL;
    uint32 r;
    uint64 node = 0;
    TimestampTz last_flush;
    pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
    pqsignal(SIGHUP, SignalHandlerForConfigReload);
    BackgroundWorkerUnblockSignals();
    r = open_leased(&g);
    if (r != SNOWMINT_RESULT_OK) {
        char msg[1024];
        snowmint_last_error_message(msg, sizeof msg, NULL);
        ereport(LOG, (errmsg("snowmint: no lease (%s): %s; trying again in 1 s", snowmint_result_name(r), msg)));
        proc_exit(1);
    }
    snowmint_shared_generator_node_id(g, &node);
    /* Not the source itself: it may hold a password (SPEC §3.1: never in a log). */
    ereport(LOG, (errmsg("snowmint: node ID %llu leased from sequencer '%s' (snowmint.store)", (unsigned long long) node,
                         sequencer_guc != NULL ? sequencer_guc : "default")));
    last_flush = GetCurrentTimestamp();
    while (!ShutdownRequestPending) {
        snowmint_lease_state state = SNOWMINT_LEASE_STATE_ATTACHED;
        (void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, Min(200, flush_interval_ms_guc),
                         PG_WAIT_EXTENSION);
        ResetLatch(MyLatch);
        if (TimestampDifferenceExceeds(last_flush, GetCurrentTimestamp(), flush_interval_ms_guc)) {
            last_flush = GetCurrentTimestamp();
            flush_state(g);
        }
        if (snowmint_generator_lease_state(g, &state) == SNOWMINT_RESULT_OK && state != SNOWMINT_LEASE_STATE_ATTACHED) {
            flush_state(g);
            ereport(LOG, (errmsg("snowmint: the lease of node ID %llu was lost (%s); claiming again",
                                 (unsigned long long) node,
                                 state == SNOWMINT_LEASE_STATE_DESTROYED ? "sequencer destroyed" : "LEASE_LOST")));
            close_leased(g);
            proc_exit(1);
        }
    }
    flush_state(g);
    close_leased(g);
    proc_exit(0);
}

/* The background worker of a fixed node ID: flushes the state file every snowmint.flush_interval, so
 * an operating-system crash or a power loss takes the high-water mark back by at most that (plus the
 * flush's own time), never to before an ID minted earlier. (The postmaster flushes it when it exits.) */
PGDLLEXPORT void pgsm_flush_worker_main(Datum arg);
void
pgsm_flush_worker_main(Datum arg)
{
    pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
    pqsignal(SIGHUP, SignalHandlerForConfigReload);
    BackgroundWorkerUnblockSignals();
    while (!ShutdownRequestPending) {
        (void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, flush_interval_ms_guc,
                         PG_WAIT_EXTENSION);
        ResetLatch(MyLatch);
        if (server_gen != NULL)
            flush_state(server_gen);
    }
    proc_exit(0);
}

/* snowmint.flushed(): the last flush of the state file by the server's background worker. */
PG_FUNCTION_INFO_V1(pgsm_flushed_fn);
Datum
pgsm_flushed_fn(PG_FUNCTION_ARGS)
{
    TupleDesc tupdesc;
    Datum values[3];
    bool nulls[3] = {false};
    uint64 n;
    if (!preloaded)
        ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE), errmsg("%s", preload_message)));
    if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
        elog(ERROR, "return type must be a row type");
    n = pg_atomic_read_u64(&flushed->flushes);
    values[0] = Int64GetDatum((int64) pg_atomic_read_u64(&flushed->state));
    values[1] = TimestampTzGetDatum((TimestampTz) pg_atomic_read_u64(&flushed->at));
    values[2] = Int64GetDatum((int64) n);
    nulls[0] = nulls[1] = n == 0;
    PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc), values, nulls)));
}

/* ------------------------------------------------------------------------------------------- init */
void
_PG_init(void)
{
    if (!process_shared_preload_libraries_in_progress)
        return; /* loaded by a backend (CREATE EXTENSION, LOAD): every function says to preload it */

    DefineCustomIntVariable("snowmint.node_id", "The node ID this server mints under (fixed; restart to change).",
                            "Give every server and application process of one ID space its own node ID.",
                            &node_id_guc, -1, -1, INT_MAX, PGC_POSTMASTER, 0, NULL, NULL, NULL);
    DefineCustomStringVariable("snowmint.layout", "The layout of the server's IDs: a preset name or its JSON.", NULL,
                               &layout_guc, "twitter", PGC_POSTMASTER, 0, NULL, NULL, NULL);
    DefineCustomStringVariable("snowmint.state_file",
                               "The state file (the durable high-water mark), relative to the data directory.",
                               NULL, &state_file_guc, "snowmint.state", PGC_POSTMASTER, 0, NULL, NULL, NULL);
    DefineCustomStringVariable("snowmint.sequencer", "The sequencer name next_id() answers to.", NULL,
                               &sequencer_guc, "default", PGC_POSTMASTER, 0, NULL, NULL, NULL);
    DefineCustomEnumVariable("snowmint.policy",
                             "When logical time runs max_ahead ahead of the clock: wait (interruptibly), fail or strict.",
                             NULL, &policy_guc, POLICY_WAIT, policy_options, PGC_POSTMASTER, 0, NULL, NULL, NULL);
    DefineCustomIntVariable("snowmint.max_ahead_ms", "How far logical time may run ahead of the clock.", NULL,
                            &max_ahead_ms_guc, 15000, 0, INT_MAX, PGC_POSTMASTER, GUC_UNIT_MS, NULL, NULL, NULL);
    DefineCustomIntVariable("snowmint.test_clock_offset_ms",
                            "Tests only: the server generator's clock is the system clock plus this offset.", NULL,
                            &test_clock_offset_ms_guc, 0, INT_MIN, INT_MAX, PGC_POSTMASTER, GUC_NOT_IN_SAMPLE, NULL,
                            NULL, NULL);
    DefineCustomBoolVariable("snowmint.test_functions",
                             "Tests only: allows the test_* functions (a generator with a scripted clock).", NULL,
                             &test_functions_guc, false, PGC_SUSET, GUC_NOT_IN_SAMPLE, NULL, NULL, NULL);
    DefineCustomStringVariable("snowmint.store",
                               "Lease the node ID from this store's sequencer (postgres://…, etcd://…, file:///…).",
                               NULL, &store_guc, "", PGC_POSTMASTER, GUC_SUPERUSER_ONLY, NULL, NULL, NULL);
    DefineCustomIntVariable("snowmint.flush_interval",
                            "How often the background worker writes the state file to the storage device.", NULL,
                            &flush_interval_ms_guc, 1000, 10, 3600000, PGC_POSTMASTER, GUC_UNIT_MS, NULL, NULL, NULL);
    MarkGUCPrefixReserved("snowmint");
    flushed = mmap(NULL, sizeof *flushed, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (flushed == MAP_FAILED)
        ereport(FATAL, (errmsg("snowmint: cannot map the flush record: %m")));
    pg_atomic_init_u64(&flushed->flushes, 0);
    pg_atomic_init_u64(&flushed->state, 0);
    pg_atomic_init_u64(&flushed->at, 0);
    preloaded = true;
    open_server_generator();
}
