// Types of snowmint-wasm (the same API as the native Node package `snowmint`).

/** Every error `code` string. */
export declare const ERROR_CODES: readonly string[];

/** Errors thrown by snowmint are real `Error`s (or `TypeError`s for wrong JS types) with a stable code. */
export interface SnowmintError extends Error {
  code: string;
  /** For TOO_FAR_AHEAD: milliseconds until the same request would succeed. */
  retryAfterMs?: number;
  /** For PARSE: 0-based position of the offending character. */
  position?: number;
  /** For INVALID_LAYOUT: the field that is wrong. */
  field?: string;
}

export type Order = 'timestamp_node_sequence' | 'timestamp_sequence_node';
export type EncodingName = 'dec' | 'hex' | 'base32' | 'base58';
export type Policy = 'wait' | 'fail' | 'strict';

export interface LayoutOptions {
  timestampBits: number;
  nodeBits: number;
  sequenceBits: number;
  order: Order;
  tickNs: number | bigint;
  epochMs: number | bigint;
  nodeIdOffset?: number | bigint;
  useSignBit?: boolean;
}

export declare class Layout {
  constructor(options: LayoutOptions);
  static preset(name: string): Layout;
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
  readonly nodeCount: bigint;
  readonly idsPerTick: bigint;
  readonly maxNodeId: bigint;
  readonly maxTick: bigint;
  readonly lifespanEndMs: bigint;
  readonly lifespanEndIso: string;
  readonly clockUnit: 'ms' | 'ns';
}

export interface GeneratorOptions {
  nodeId: number | bigint;
  /** A preset name or a Layout; default 'twitter'. */
  layout?: string | Layout;
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
  /** The high-water mark (next free logical position): persist it and `restore()` it after a restart. */
  highWaterMark(): bigint;
  /** Continues from a persisted high-water mark (bigint or decimal string); never moves backwards. */
  restore(mark: bigint | string): void;
  free(): void;
  readonly layout: Layout;
  readonly nodeId: number;
}

/**
 * Opaque IDs: a keyed permutation of the layout's width (63 bits for twitter, 53 for js53, 64 with the
 * sign bit) that maps each ID to a token of the same width and back. Tokens reveal neither time, node
 * nor count; they are not authentication (every number of the width decodes to some ID). Runs in a
 * second WebAssembly module (snowmint_wasm_opaque_bg.wasm) that the package loads with the main one.
 */
export declare class Opaque {
  /** `key`: 16 secret bytes (INVALID_ARGUMENT otherwise); `layout`: a preset name or a Layout (default 'twitter'). */
  constructor(options: { key: Uint8Array; layout?: string | Layout });
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
  timestampMs: number;
  subMsNs: number;
  date: Date;
  iso: string;
  nodeId: number;
  sequence: number;
}

export declare function decode(id: bigint | string, layout?: string | Layout): Decoded;
export declare function compose(
  fields: { timestampTicks: bigint | number; nodeId: number | bigint; sequence: number | bigint },
  layout?: string | Layout,
): bigint;
export declare function minIdAt(at: Date | number | bigint, layout?: string | Layout): bigint;
export declare function encode(id: bigint, encoding?: EncodingName): string;
export declare function parse(text: string, encoding?: EncodingName | 'any'): bigint;
