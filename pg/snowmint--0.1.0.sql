-- snowmint 0.1.0 (pg/README.md documents every function and error)
\echo Use "CREATE EXTENSION snowmint" to load this file. \quit

-- The server must have loaded the library at start (shared_preload_libraries): this says how if not.
CREATE FUNCTION snowmint._require_preload() RETURNS void
  AS 'MODULE_PATHNAME', 'pgsm_require_preload' LANGUAGE C STRICT;
SELECT snowmint._require_preload();
-- Every role may call the functions (the schema is the extension's; the test_* ones are revoked below).
GRANT USAGE ON SCHEMA snowmint TO PUBLIC;

CREATE FUNCTION snowmint.next_id(sequencer text DEFAULT 'default') RETURNS bigint
  AS 'MODULE_PATHNAME', 'pgsm_next_id' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION snowmint.next_ids(n integer, sequencer text DEFAULT 'default') RETURNS SETOF bigint
  AS 'MODULE_PATHNAME', 'pgsm_next_ids' LANGUAGE C VOLATILE STRICT PARALLEL SAFE ROWS 1000;
CREATE FUNCTION snowmint.node_id() RETURNS bigint
  AS 'MODULE_PATHNAME', 'pgsm_server_node_id' LANGUAGE C STABLE PARALLEL SAFE;
CREATE FUNCTION snowmint.stats(OUT minted bigint, OUT batches bigint, OUT borrowed_ticks bigint,
    OUT waits bigint, OUT wait_ns bigint, OUT regressions bigint, OUT state bigint)
  AS 'MODULE_PATHNAME', 'pgsm_stats_fn' LANGUAGE C VOLATILE PARALLEL SAFE;
-- The last flush of the state file to the storage device (every snowmint.flush_interval): the state
-- word read before it (every ID at or below it is durable), its time, how many flushes since start.
CREATE FUNCTION snowmint.flushed(OUT state bigint, OUT flushed_at timestamptz, OUT flushes bigint)
  AS 'MODULE_PATHNAME', 'pgsm_flushed_fn' LANGUAGE C VOLATILE PARALLEL SAFE;

-- layout: a preset name ('twitter', 'discord', …) or the layout's JSON, as every runtime takes it;
-- by default the server's, snowmint.layout. Every function is STRICT (NULL in, NULL out).
CREATE FUNCTION snowmint.decode(id bigint, layout text DEFAULT current_setting('snowmint.layout'),
    OUT "time" timestamptz, OUT node bigint, OUT sequence bigint, OUT timestamp_ticks bigint,
    OUT unix_ms bigint, OUT sub_ms_ns integer, OUT iso text)
  AS 'MODULE_PATHNAME', 'pgsm_decode_fn' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION snowmint.compose(timestamp_ticks numeric, node numeric, sequence numeric, layout text DEFAULT current_setting('snowmint.layout'))
  RETURNS bigint AS 'MODULE_PATHNAME', 'pgsm_compose_fn' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION snowmint.min_id_at(t timestamptz, layout text DEFAULT current_setting('snowmint.layout')) RETURNS bigint
  AS 'MODULE_PATHNAME', 'pgsm_min_id_at_fn' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION snowmint.min_id_at_ms(unix_ms numeric, layout text DEFAULT current_setting('snowmint.layout')) RETURNS bigint
  AS 'MODULE_PATHNAME', 'pgsm_min_id_at_ms_fn' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION snowmint.layout_info(layout text DEFAULT current_setting('snowmint.layout')) RETURNS jsonb
  AS 'MODULE_PATHNAME', 'pgsm_layout_info_fn' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- String forms: 'dec', 'hex', 'base32', 'base58' (parse also 'any': told apart by shape).
CREATE FUNCTION snowmint.encode(id bigint, form text DEFAULT 'base58') RETURNS text
  AS 'MODULE_PATHNAME', 'pgsm_encode_fn' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION snowmint.parse(s text, form text DEFAULT 'any') RETURNS bigint
  AS 'MODULE_PATHNAME', 'pgsm_parse_fn' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- Opaque IDs (a keyed permutation of the layout's width; key: 16 bytes).
CREATE FUNCTION snowmint.opaque_encode(id bigint, key bytea, layout text DEFAULT current_setting('snowmint.layout')) RETURNS bigint
  AS 'MODULE_PATHNAME', 'pgsm_opaque_encode_fn' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION snowmint.opaque_decode(token bigint, key bytea, layout text DEFAULT current_setting('snowmint.layout')) RETURNS bigint
  AS 'MODULE_PATHNAME', 'pgsm_opaque_decode_fn' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- Tests only (the conformance vectors): refused unless a superuser set snowmint.test_functions = on.
CREATE FUNCTION snowmint.test_generator(layout text, node_id numeric, policy text, max_ahead_ms numeric,
    random_seed numeric) RETURNS void
  AS 'MODULE_PATHNAME', 'pgsm_test_generator' LANGUAGE C VOLATILE;
CREATE FUNCTION snowmint.test_clock(readings numeric[]) RETURNS void
  AS 'MODULE_PATHNAME', 'pgsm_test_clock' LANGUAGE C VOLATILE STRICT;
CREATE FUNCTION snowmint.test_next(count integer) RETURNS bigint[]
  AS 'MODULE_PATHNAME', 'pgsm_test_next' LANGUAGE C VOLATILE STRICT;
CREATE FUNCTION snowmint.test_batch(count integer) RETURNS bigint[]
  AS 'MODULE_PATHNAME', 'pgsm_test_batch' LANGUAGE C VOLATILE STRICT;
CREATE FUNCTION snowmint.test_state() RETURNS numeric
  AS 'MODULE_PATHNAME', 'pgsm_test_state' LANGUAGE C VOLATILE STRICT;
CREATE FUNCTION snowmint.test_restore(state numeric) RETURNS void
  AS 'MODULE_PATHNAME', 'pgsm_test_restore' LANGUAGE C VOLATILE STRICT;
CREATE FUNCTION snowmint.test_clock_reading(layout text, reading float8) RETURNS numeric
  AS 'MODULE_PATHNAME', 'pgsm_test_clock_reading' LANGUAGE C VOLATILE STRICT;
CREATE FUNCTION snowmint.test_node_source(source text, layout text, env jsonb) RETURNS bigint
  AS 'MODULE_PATHNAME', 'pgsm_test_node_source' LANGUAGE C VOLATILE;
REVOKE ALL ON FUNCTION snowmint.test_generator, snowmint.test_clock, snowmint.test_next, snowmint.test_batch,
  snowmint.test_state, snowmint.test_restore, snowmint.test_clock_reading, snowmint.test_node_source FROM PUBLIC;
