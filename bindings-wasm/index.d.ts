// Types of snowmint-wasm (the same API as the native Node package `snowmint`).

/** Every error `code` string. */
export declare const ERROR_CODES: readonly string[];

/** Every preset name `Layout.preset` accepts (snowcast needs `Layout.snowcast`). */
export declare const PRESET_NAMES: readonly string[];

/**
 * A preset name a `layout` argument takes (snowcast needs its parameters: `Layout.snowcast`). A name
 * outside this list fails type-checking, and at run time `INVALID_LAYOUT`.
 */
export type PresetName =
  'twitter' | 'discord' | 'instagram' | 'sonyflake' | 'hazelcast' | 'js53' | 'decimal' | 'chronicle';

/**
 * Every error snowmint throws for a value of the right JavaScript type (out of range, or refused by the
 * core) is a `SnowmintError`; a value of the wrong JavaScript type is a `TypeError` with
 * `code: 'INVALID_ARGUMENT'`. The same rule in the native package `snowmint`.
 */
export declare class SnowmintError extends Error {
  /** One of `ERROR_CODES`. */
  code: string;
  /** TOO_FAR_AHEAD: milliseconds until the same request would succeed. */
  retryAfterMs?: number;
  /** PARSE: 0-based position of the offending character. */
  position?: number;
  /** INVALID_LAYOUT: the field that is wrong. */
  field?: string;
}

/** `JSON.stringify(layout)`: every figure of the layout, the bigint ones as decimal strings. */
export interface LayoutJSON {
  name: string | null;
  timestampBits: number;
  nodeBits: number;
  sequenceBits: number;
  totalBits: number;
  order: Order;
  tickNs: string;
  epochMs: string;
  nodeIdOffset: string;
  nodeCount: number;
  idsPerTick: number;
  maxNodeId: string;
  maxTick: string;
  lifespanEndMs: string;
  lifespanEndIso: string;
  clockUnit: 'ms' | 'ns';
}

/** `JSON.stringify(generator)`: its layout (the preset name, or the custom layout's figures), node, policy. */
export interface GeneratorJSON {
  layout: PresetName | LayoutJSON;
  nodeId: number | string;
  policy: Policy;
}

export type Order = 'timestamp_node_sequence' | 'timestamp_sequence_node';
export type EncodingName = 'dec' | 'hex' | 'base32' | 'base58';
export type Policy = 'wait' | 'fail' | 'strict';

export interface LayoutOptions {
  timestampBits: number;
  nodeBits: number;
  sequenceBits: number;
  epochMs: number | bigint;
  /** Default `'timestamp_node_sequence'`, as in every binding. */
  order?: Order;
  /** Default 1000000 (1 ms). */
  tickNs?: number | bigint;
  nodeIdOffset?: number | bigint;
  useSignBit?: boolean;
}

export declare class Layout {
  constructor(options: LayoutOptions);
  static preset(name: PresetName): Layout;
  static snowcast(epochMs: number | bigint, nodeCount: number | bigint): Layout;
  static hazelcast(nodeIdOffset: number | bigint): Layout;
  /** Releases the wasm memory now (otherwise a FinalizationRegistry does it). */
  free(): void;
  readonly name: string | null;
  readonly timestampBits: number;
  readonly nodeBits: number;
  readonly sequenceBits: number;
  readonly totalBits: number;
  readonly order: Order;
  readonly tickNs: bigint;
  readonly epochMs: bigint;
  /** The node-ID offset added to every node ID. */
  readonly nodeIdOffset: bigint;
  /** How many node IDs the node field holds (a power of two, or 100 for decimal: exact as a Number). */
  readonly nodeCount: number;
  /** IDs one node can mint per tick (a power of two, or 1 for decimal: exact as a Number). */
  readonly idsPerTick: number;
  readonly maxNodeId: bigint;
  readonly maxTick: bigint;
  readonly lifespanEndMs: bigint;
  readonly lifespanEndIso: string;
  readonly clockUnit: 'ms' | 'ns';
  /** `JSON.stringify` form: every figure, bigints as decimal strings. */
  toJSON(): LayoutJSON;
}

export interface GeneratorOptions {
  nodeId: number | bigint;
  /** A preset name or a Layout; default 'twitter'. */
  layout?: PresetName | Layout;
  /** Unix ms as a whole number (Unix ns for layouts with sub-ms ticks); default Date.now(). */
  clock?: () => number | bigint;
  /** Default 'fail' (errors carry retryAfterMs); 'wait' and 'strict' busy-wait the clock. */
  policy?: Policy;
  /** How far logical time may run ahead of the clock; default 15000. */
  maxAheadMs?: number | bigint;
  /** Start each tick's sequence at a random value (seeded from crypto.getRandomValues). */
  randomStart?: boolean;
  /** Seed of the random start (implies randomStart). */
  randomSeed?: bigint | number;
}

export declare class Generator {
  constructor(options: GeneratorOptions);
  nextId(): bigint;
  nextIdString(): string;
  nextIds(n: number): BigUint64Array;
  /** Only for layouts of at most 53 bits (js53); else an INVALID_ARGUMENT error. */
  nextIdNumber(): number;
  /** What this generator has done since it was built (a new plain object each call). */
  stats(): GeneratorStats;
  /** The high-water mark (next free logical position): persist it and `restore()` it after a restart. */
  highWaterMark(): bigint;
  /** Continues from a persisted high-water mark (bigint or decimal string); never moves backwards. */
  restore(mark: bigint | string): void;
  free(): void;
  readonly layout: Layout;
  /** A Number when the layout's node field fits 2^53 - 1, else a bigint (never rounded). */
  readonly nodeId: number | bigint;
  /** 'wait', 'fail' or 'strict'. */
  readonly policy: Policy;
  /** `JSON.stringify` form: layout, node ID and policy. */
  toJSON(): GeneratorJSON;
}

/** `new Client(options)`: a client of the snowmint ID service (`snowmint serve`, SPEC §6a). */
export interface ClientOptions {
  /** The service's base URL, `http(s)://host:port[/prefix]`. */
  url: string;
  /** IDs per request, 1..=10000 (default 100); the next batch is fetched below half of it. */
  prefetch?: number;
  /** How long a batch serves on this client's clock, ms (default 600000); the service's
   * `valid_for_ms` when shorter. */
  validityMs?: number;
  /** Each attempt's bound, ms (default 2000). */
  timeoutMs?: number;
  /** Retries of an attempt that got no answer or a 503 (default 3; pauses 50, 100, 200, … ≤ 1000 ms). */
  retries?: number;
  /** Monotonic milliseconds (default `performance.now`); tests inject one. */
  clock?: () => number;
  /** Node only: PEM text of the authorities that sign an https service's certificate (a private CA). */
  ca?: string | Uint8Array;
  /** The bearer token of a service started with `--auth-token-file` (sent as `authorization`). */
  token?: string;
}

/** What a client has done. */
export interface ClientStats {
  /** IDs handed out. */
  ids: number;
  /** IDs dropped because their batch expired (never returned). */
  expired: number;
  /** Valid IDs prefetched now. */
  available: number;
  /** HTTP requests sent, and failed attempts. */
  requests: number;
  failures: number;
}

/**
 * A prefetching client of the ID service: `tryNextId()` takes an ID from the batch in hand (no promise,
 * no network); below half of `prefetch` left, the next batch is fetched in the background. A batch
 * fetched at local time t serves until t + min(validityMs, the service's valid_for_ms); older IDs are
 * dropped, never returned. Errors: the service's answer rejects with a `SnowmintError` of its `code`
 * (with `field`, `retryAfterMs`); a service that cannot be reached, times out or does not speak the
 * protocol rejects with `SERVICE_UNAVAILABLE` after `retries` retries, within `maxWaitMs`.
 */
export declare class Client {
  constructor(options: ClientOptions);
  /** The next ID: at once from a prefetched batch, else after a fetch. */
  nextId(): Promise<bigint>;
  /** The next ID if a valid one is prefetched, else `undefined` (never waits). */
  tryNextId(): bigint | undefined;
  /** `n` IDs, fetching the batches they need (at most 10000 per request). */
  nextIds(n: number): Promise<bigint[]>;
  stats(): ClientStats;
  /** Drops the prefetched IDs and aborts a fetch in flight; later calls reject (`SERVICE_UNAVAILABLE`). */
  close(): void;
  get url(): string;
  get prefetch(): number;
  get closed(): boolean;
  /** The longest one fetch takes before it rejects: every attempt's timeout and every pause. */
  get maxWaitMs(): number;
}

/**
 * Opaque IDs: a keyed permutation of the layout's width (63 bits for twitter, 53 for js53, 64 with the
 * sign bit) that maps each ID to a token of the same width and back. Tokens reveal neither time, node
 * nor count; they are not authentication (every number of the width decodes to some ID). Runs in a
 * second WebAssembly module (snowmint_wasm_opaque_bg.wasm) that the package loads with the main one.
 */
export declare class Opaque {
  /** `key`: 16 secret bytes (INVALID_ARGUMENT otherwise); `layout`: a preset name or a Layout (default 'twitter'). */
  constructor(options: { key: Uint8Array; layout?: PresetName | Layout });
  /** The token of an ID (INVALID_ID at or above 2^bits). */
  encode(id: bigint | number): bigint;
  /** The ID of a token (INVALID_ID at or above 2^bits). */
  decode(token: bigint | number): bigint;
  /** The token of an ID as text (default 'dec'; 'base58' gives 11 characters). */
  encodeString(id: bigint | number, encoding?: EncodingName): string;
  /** The ID of a token given as text in one encoding, or 'any' (default). */
  decodeString(text: string, encoding?: EncodingName | 'any'): bigint;
  /** The tokens of many IDs, as a new array (an error leaves nothing behind). */
  encodeMany(ids: BigUint64Array): BigUint64Array;
  /** The IDs of many tokens, as a new array. */
  decodeMany(tokens: BigUint64Array): BigUint64Array;
  /** The width in bits: IDs and tokens are below 2^bits. */
  readonly bits: number;
  readonly layout: Layout;
}

export interface Decoded {
  id: bigint;
  timestampTicks: bigint;
  /** Numbers when the layout's field fits 2^53 - 1, bigints otherwise (exact either way). */
  timestampMs: number | bigint;
  subMsNs: number;
  date: Date;
  iso: string;
  nodeId: number | bigint;
  sequence: number | bigint;
  /** `JSON.stringify` form: the same fields, bigints as decimal strings, `date` as `iso`. */
  toJSON(): DecodedJSON;
}

/** `JSON.stringify(decode(id))`: IDs as decimal strings. */
export interface DecodedJSON {
  id: string;
  timestampTicks: string;
  timestampMs: number | string;
  subMsNs: number;
  date: string;
  iso: string;
  nodeId: number | string;
  sequence: number | string;
}

export declare function decode(id: bigint | string, layout?: PresetName | Layout): Decoded;
export declare function compose(
  fields: { timestampTicks: bigint | number; nodeId: number | bigint; sequence: number | bigint },
  layout?: PresetName | Layout,
): bigint;
export declare function minIdAt(at: Date | number | bigint, layout?: PresetName | Layout): bigint;
export declare function encode(id: bigint | number, encoding?: EncodingName): string;
export declare function parse(text: string, encoding?: EncodingName | 'any'): bigint;

/**
 * `gen.stats()`: counters since the generator was built, each only growing. Numbers, not bigints:
 * exact up to 2^53 (about 2.8 years of minting at 100 million IDs a second; 104 days of total waiting
 * for `waitNs`), and `JSON.stringify` takes them.
 */
export interface GeneratorStats {
  /** IDs handed out: single IDs and every ID of every batch. */
  minted: number;
  /** `nextIds` calls that minted at least one ID. */
  batches: number;
  /** Ticks the generator moved to ahead of the clock (a used-up tick, or a clock that stepped back). */
  borrowedTicks: number;
  /** Sleeps the generator took under the `wait` policy (the default `fail` never sleeps). */
  waits: number;
  /** The total of those sleeps, in nanoseconds (as asked). */
  waitNs: number;
  /** Clock readings below the last one seen, in whole ticks (one step back counts once). */
  regressions: number;
}

export interface OfflineGeneratorOptions {
  /** The ID service's base URL (http or https), e.g. 'https://ids.example.com'. */
  url: string;
  /** Separates independent generators of one origin (their leases and stored marks); default 'default'. */
  name?: string;
  /** Sent with the lease request (shown in the service's store); at most 200 characters. */
  holder?: string;
  /** Unix ms as a Number; default Date.now() (for tests). */
  clock?: () => number;
}

/** The lease an OfflineGenerator mints under (positions as bigints; the token is not shown). */
export interface OfflineLease {
  nodeId: number;
  layout: string;
  /** The first position of the reservation. */
  start: bigint;
  /** The first position it may NOT mint: past it, nextId() throws LEASE_LOST until renewed. */
  limit: bigint;
  limitUnixMs: number;
  expiresUnixMs: number;
  renewAfterMs: number;
  /** The high-water mark durably in IndexedDB (every ID handed out lies below it). */
  persisted: bigint;
}

/**
 * Browser only (the `web` and `bundler` entries; undefined in Node): mints under a node-ID lease of the
 * ID service (SPEC §6a), offline too. The lease and a high-water mark live in IndexedDB so a reload
 * continues after the last ID; each tab holds a Web Lock on its own lease slot (a second tab takes its own
 * lease). No ID at or past the lease's `limit` is handed out: LEASE_LOST instead, until renewed online.
 */
export declare class OfflineGenerator {
  private constructor();
  static open(options: OfflineGeneratorOptions): Promise<OfflineGenerator>;
  /** The next ID. LEASE_LOST past the reservation; TOO_FAR_AHEAD (retryAfterMs) while the mark is saved. */
  nextId(): bigint;
  nextIdString(): string;
  nextIds(n: number): BigUint64Array;
  highWaterMark(): bigint;
  /** The counters of the current lease's generator (they start again with a new lease). */
  stats(): GeneratorStats;
  /** Renews now (also by itself at renew_after_ms and on `online`); a lost lease is replaced. */
  renew(): Promise<void>;
  /** Resolves once the high-water mark is written to IndexedDB. */
  flush(): Promise<void>;
  /** Stops, frees the tab's lease slot; `{ release: true }` also gives the lease back to the service. */
  close(options?: { release?: boolean }): Promise<void>;
  readonly nodeId: number | bigint;
  readonly layout: Layout;
  /** This tab's lease slot (0 for the first tab of the origin). */
  readonly slot: number;
  readonly lease: OfflineLease;
  /** What happened last (lease taken, renewed, renewal failed …), for status displays. */
  lastEvent: string;
}
