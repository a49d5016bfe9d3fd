// The part of the JavaScript API that both packages — `snowmint` (native, napi-rs) and `snowmint-wasm` —
// define in JavaScript rather than in compiled code, so that it is one code for both: the error class,
// the JSON forms, and what `console.log` / `util.inspect` show.
//
// One source, this ES module. bindings-wasm/build.sh and bindings-node/build.sh write its CommonJS copy
// (`export ` dropped, `module.exports` appended) for the CommonJS entries; the WASM build's glue makes
// its errors of this `SnowmintError` (see build.sh), the native addon gets it by `__setErrorClass`.

/**
 * Every error snowmint throws for a value of the right JavaScript type — out of range, or refused by the
 * core — is a `SnowmintError` with `code` (one of `ERROR_CODES`), and `retryAfterMs` (TOO_FAR_AHEAD),
 * `position` (PARSE) or `field` (INVALID_LAYOUT) where they apply. A value of the wrong JavaScript type
 * is a `TypeError` with `code: 'INVALID_ARGUMENT'`. The same rule in both packages.
 */
export class SnowmintError extends Error {}
Object.defineProperty(SnowmintError.prototype, 'name', {
  value: 'SnowmintError',
  writable: true,
  configurable: true,
});

const INSPECT = Symbol.for('nodejs.util.inspect.custom');

// Whitespace as Rust's `str::trim` (Unicode White_Space) sees it: what the native package's node-source
// parser (coord's `NodeSource::parse`) strips around a source.
const WS = '[\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]*';
const DECIMAL_NODE_ID = new RegExp(`^${WS}([0-9]+)${WS}$`);

/**
 * The WASM package's Generator options with a string `nodeId` read as SPEC §3.1's fixed node source,
 * by the native package's rule: ASCII digits (leading zeros allowed) with whitespace around them, below
 * 2^64, else a `SnowmintError` with code `INVALID_ARGUMENT` (a bigint it becomes, which the module then
 * range-checks as any nodeId). Called by the glue before the module sees the options (js/patch-glue.mjs):
 * in JavaScript, so the size-budgeted module has no string path. Other values pass through unchanged.
 */
export function decimalNodeId(options) {
  const s = options !== null && typeof options === 'object' ? options.nodeId : undefined;
  if (typeof s !== 'string') return options;
  const m = DECIMAL_NODE_ID.exec(s);
  const n = m ? BigInt(m[1]) : -1n;
  if (n < 0n || n >= 2n ** 64n) {
    // The source is not shown: a lease source's URL may hold a password.
    const e = new SnowmintError(
      'nodeId: not a node ID in decimal (browsers get node leases from the ID service)',
    );
    e.code = 'INVALID_ARGUMENT';
    throw e;
  }
  // A copy (prototype, getters and all), so the caller's object is left as it was.
  const copy = Object.create(Object.getPrototypeOf(options), Object.getOwnPropertyDescriptors(options));
  Object.defineProperty(copy, 'nodeId', { value: n, writable: true, enumerable: true, configurable: true });
  return copy;
}

// The core's `PRESET_NAMES`, for the WASM package (the native one exports the core's own array; the
// WASM module would pay bytes for it): the shared tests check that `Layout.preset` takes each one
// (snowcast asking for its parameters) and that its error for an unknown name lists exactly these.
const CORE_PRESET_NAMES = [
  'twitter',
  'discord',
  'instagram',
  'sonyflake',
  'hazelcast',
  'snowcast',
  'js53',
  'decimal',
];

/** A non-enumerable method (as class methods are), replacing any of the same name. */
function define(target, name, value) {
  Object.defineProperty(target, name, { value, writable: true, configurable: true });
}

/** Node's `util.inspect` output for `fields` under the class name `tag` (plain text elsewhere). */
function show(tag, fields, depth, options, inspect) {
  if (typeof inspect !== 'function') return `${tag} ${JSON.stringify(fields)}`;
  if (depth < 0) return options.stylize(`[${tag}]`, 'special');
  return `${tag} ${inspect(fields, { ...options, depth: options.depth === null ? null : options.depth - 1 })}`;
}

/** Layout figures: every getter, in the order the README's layout table uses. */
function layoutFields(l) {
  return {
    name: l.name,
    timestampBits: l.timestampBits,
    nodeBits: l.nodeBits,
    sequenceBits: l.sequenceBits,
    totalBits: l.totalBits,
    order: l.order,
    tickNs: l.tickNs,
    epochMs: l.epochMs,
    nodeIdOffset: l.nodeIdOffset,
    nodeCount: l.nodeCount,
    idsPerTick: l.idsPerTick,
    maxNodeId: l.maxNodeId,
    maxTick: l.maxTick,
    lifespanEndMs: l.lifespanEndMs,
    lifespanEndIso: l.lifespanEndIso,
    clockUnit: l.clockUnit,
  };
}

/** `fields` with every bigint as its decimal string (JSON has no 64-bit integers). */
function jsonable(fields) {
  const out = {};
  for (const [k, v] of Object.entries(fields)) out[k] = typeof v === 'bigint' ? v.toString() : v;
  return out;
}

/** What a layout shows inside a generator: its preset name, or all its figures when it has none. */
function layoutSummary(l) {
  return l.name !== null ? l.name : layoutFields(l);
}

/** The JSON form of a `decode()` result (installed on each as a non-enumerable `toJSON`). */
function decodedToJSON() {
  return jsonable({ ...this, date: this.iso });
}

/**
 * Installs the shared surface on a package's classes (their prototypes) and returns the functions
 * the package exports in place of the compiled ones (`decode`, `PRESET_NAMES`). `api`: `{ Layout,
 * Generator, Opaque?, decode, PRESET_NAMES? }`.
 */
export function installSurface(api) {
  const { Layout, Generator } = api;
  const L = Layout.prototype;
  if (!Object.getOwnPropertyDescriptor(L, 'nodeIdOffset')) {
    // The WASM module does without this getter (module size): every node ID fits in the node field
    // after the offset, so the offset is the field's top value less the largest node ID.
    Object.defineProperty(L, 'nodeIdOffset', {
      get() {
        return BigInt(this.nodeCount) - 1n - this.maxNodeId;
      },
      configurable: true,
    });
  }
  // snowmint-wasm frees a module object's memory at `free()`; the native package's objects are the
  // garbage collector's, and `free()` does nothing there, so code written for either runs on both.
  for (const proto of [Layout.prototype, Generator.prototype]) {
    if (!('free' in proto)) define(proto, 'free', function free() {});
  }
  define(L, 'toJSON', function toJSON() {
    return jsonable(layoutFields(this));
  });
  define(L, INSPECT, function (depth, options, inspect) {
    return show('Layout', layoutFields(this), depth, options, inspect);
  });
  const G = Generator.prototype;
  const generatorFields = (g) => ({ layout: layoutSummary(g.layout), nodeId: g.nodeId, policy: g.policy });
  define(G, 'toJSON', function toJSON() {
    const f = generatorFields(this);
    return jsonable({ ...f, layout: typeof f.layout === 'string' ? f.layout : jsonable(f.layout) });
  });
  define(G, INSPECT, function (depth, options, inspect) {
    return show('Generator', generatorFields(this), depth, options, inspect);
  });
  if (!('stats' in G) && '__stats' in G) {
    // snowmint-wasm reads the counters one by one (module size); the native package has stats().
    define(G, 'stats', function stats() {
      const at = (i) => this.__stats(i);
      return {
        minted: at(0),
        batches: at(1),
        borrowedTicks: at(2),
        waits: at(3),
        waitNs: at(4),
        regressions: at(5),
      };
    });
  }
  if (!('nextIdNumber' in G)) {
    // snowmint-wasm: nextId() as a Number, for layouts of at most 53 bits (module size); the native
    // package has its own.
    define(G, 'nextIdNumber', function nextIdNumber() {
      const layout = this.layout;
      const bits = layout.totalBits;
      layout.free();
      if (bits > 53) {
        const e = new SnowmintError(
          `nextIdNumber needs a layout of ≤ 53 bits (e.g. js53); this one has ${bits}: use nextId()`,
        );
        e.code = 'INVALID_ARGUMENT';
        throw e;
      }
      return Number(this.nextId());
    });
  }
  if (api.Opaque) {
    // Never the key: the width and the layout.
    define(api.Opaque.prototype, INSPECT, function (depth, options, inspect) {
      return show('Opaque', { bits: this.bits, layout: layoutSummary(this.layout) }, depth, options, inspect);
    });
  }
  const compiledDecode = api.decode;
  return {
    PRESET_NAMES: Object.freeze([...(api.PRESET_NAMES ?? CORE_PRESET_NAMES)]),
    /** Takes an ID apart; the result serialises with `JSON.stringify` (IDs as decimal strings). */
    decode: function decode(id, layout) {
      const d = compiledDecode(id, layout);
      define(d, 'toJSON', decodedToJSON);
      return d;
    },
  };
}
