// `Client`: a prefetching client of the snowmint ID service (`snowmint serve`, SPEC §6a), one source for
// both packages — `snowmint` (native) and `snowmint-wasm` — as js/surface.js is: ES module here, its
// CommonJS copy written by js/patch-glue.mjs (`client` mode) for the CommonJS entries. Plain JavaScript
// over `fetch` (Node ≥ 18, every browser): nothing of it is compiled, so the WASM module pays no byte.
//
// The hot path, `tryNextId()`, is a clock reading, one comparison and one read of a BigUint64Array: no
// promise. `nextId()` returns a promise (resolved at once when an ID is in hand). Below half of
// `prefetch` left, the next batch is fetched in the background; a batch fetched at local time t (the
// client's own monotonic clock) serves until t + min(validityMs, the service's valid_for_ms), and its IDs
// are dropped, never returned, once that has passed.
import { SnowmintError } from './surface.js';

const MAX_COUNT = 10000;
const BACKOFF_MS = 50;
const BACKOFF_CAP_MS = 1000;
const OPTIONS = ['url', 'prefetch', 'validityMs', 'timeoutMs', 'retries', 'clock', 'ca', 'token'];

function failure(code, message, extra) {
  const e = new SnowmintError(message);
  e.code = code;
  if (extra) {
    if (extra.field != null) e.field = extra.field;
    if (extra.retryAfterMs != null) e.retryAfterMs = extra.retryAfterMs;
  }
  return e;
}

const typeError = (message) => Object.assign(new TypeError(message), { code: 'INVALID_ARGUMENT' });
const unavailable = (message) => failure('SERVICE_UNAVAILABLE', message);

function intOption(options, name, dflt, lo, hi) {
  const v = options[name];
  if (v === undefined) return dflt;
  if (typeof v !== 'number' || !Number.isInteger(v))
    throw typeError(`Client option ${name} must be an integer`);
  if (v < lo || v > hi)
    throw failure('INVALID_ARGUMENT', `Client option ${name} must be ${lo}..=${hi}, got ${v}`, {
      field: name,
    });
  return v;
}

/** The pause before retry `attempt` (0-based), in ms. */
const backoffMs = (attempt) => Math.min(BACKOFF_MS * 2 ** Math.min(attempt, 20), BACKOFF_CAP_MS);

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const U64_MAX = 2n ** 64n - 1n;
const DECIMAL = /^[0-9]{1,20}$/;
/** The largest answer read (bytes): room for the largest batch (MAX_COUNT IDs of up to 20 digits,
 * quoted, with separators and spaces) and the other fields; a larger answer is not the protocol. */
const MAX_ANSWER_BYTES = 4096 + 48 * MAX_COUNT;

/** The batch of a 200 answer as a BigUint64Array, or a reason it is not the protocol. `highest`: the
 * highest ID the client received before (-1n: none); the batch must start above it. */
function parseBatch(doc, count, highest) {
  if (doc === null || typeof doc !== 'object' || !Array.isArray(doc.ids) || doc.ids.length !== count) {
    return `without ${count} ids`;
  }
  const v = doc.valid_for_ms;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0)
    return `without a valid_for_ms of 0..=${Number.MAX_SAFE_INTEGER}`;
  const ids = new BigUint64Array(count);
  let prev = highest;
  for (let i = 0; i < count; i++) {
    const s = doc.ids[i];
    if (typeof s !== 'string' || !DECIMAL.test(s)) return `ids[${i}] is not a decimal string`;
    const id = BigInt(s);
    if (id > U64_MAX) return `ids[${i}] is not a 64-bit unsigned integer`;
    if (id <= prev)
      return i === 0
        ? `a batch starting at ${id} does not continue above ${highest}, an ID this client already received (a repeated or backward batch)`
        : `ids[${i}] does not increase`;
    ids[i] = prev = id;
  }
  return { ids, validForMs: v };
}

/** The body of `res` as text, or undefined when it is larger than `limit` bytes (then no more of it is
 * read: the rest is cancelled). */
async function boundedText(res, limit) {
  const declared = Number(res.headers.get('content-length'));
  if (declared > limit) {
    await res.body?.cancel().catch(() => {});
    return undefined;
  }
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      return undefined;
    }
    chunks.push(value);
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.byteLength;
  }
  return new TextDecoder().decode(all);
}

/** The SnowmintError of a non-2xx answer (SERVICE_UNAVAILABLE when its body is not the protocol's). */
function answerError(status, doc, url, codes) {
  const err = doc !== null && typeof doc === 'object' ? doc.error : undefined;
  if (err === null || typeof err !== 'object' || !codes.has(err.code) || typeof err.message !== 'string') {
    return unavailable(`HTTP ${status} from ${url} without a snowmint error body`);
  }
  return failure(err.code, err.message, {
    field: typeof err.field === 'string' ? err.field : undefined,
    retryAfterMs: Number.isInteger(err.retry_after_ms) ? err.retry_after_ms : undefined,
  });
}

/** `ca` (PEM text, a string or bytes) if it holds at least one certificate and each one parses (Node's
 * X509Certificate): refused here, at construction, rather than at the first request. */
function checkedCa(ca) {
  const text = typeof ca === 'string' ? ca : new TextDecoder().decode(ca);
  const blocks = text.match(/-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g);
  if (!blocks)
    throw failure(
      'INVALID_ARGUMENT',
      'Client option ca holds no PEM certificate (-----BEGIN CERTIFICATE-----)',
      {
        field: 'ca',
      },
    );
  const { X509Certificate } = globalThis.process.getBuiltinModule('node:crypto');
  blocks.forEach((pem, i) => {
    try {
      new X509Certificate(pem);
    } catch (e) {
      throw failure(
        'INVALID_ARGUMENT',
        `Client option ca: certificate ${i + 1} cannot be read (${e?.message ?? e})`,
        {
          field: 'ca',
        },
      );
    }
  });
  return ca;
}

/** POST `url` over Node's https with `ca` (PEM) as the only trusted authorities: `{ status, text }`, the
 * text `undefined` past `limit` bytes (fetch cannot take a CA without undici's dispatcher). */
function postWithCa(https, url, headers, ca, signal, limit) {
  return new Promise((resolve, reject) => {
    const req = https.request(
      url,
      { method: 'POST', headers: { ...headers, 'content-length': '0' }, ca, signal },
      (res) => {
        const chunks = [];
        let size = 0;
        res.on('data', (c) => {
          size += c.length;
          if (size > limit) {
            res.destroy();
            resolve({ status: res.statusCode, text: undefined });
          } else chunks.push(c);
        });
        res.on('end', () =>
          resolve({ status: res.statusCode, text: new TextDecoder().decode(Buffer.concat(chunks)) }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

const defaultClock = () => performance.now();
const EMPTY = new BigUint64Array(0);

/**
 * `new Client({ url, prefetch = 100, validityMs = 600000, timeoutMs = 2000, retries = 3, clock, ca, token })`.
 * `errorCodes`: the package's ERROR_CODES (a body's code outside it is not the protocol).
 */
export function makeClient(errorCodes) {
  const codes = new Set(errorCodes);
  return class Client {
    #url;
    #endpoint;
    #prefetch;
    #lowWater;
    #validityMs;
    #timeoutMs;
    #retries;
    #clock;
    #headers;
    #https;
    #ca;
    // The batch in use, then the ones behind it: { ids: BigUint64Array, expires: number }.
    #ids = EMPTY;
    #pos = 0;
    #expires = -Infinity;
    #queue = [];
    // The highest ID received (so at least the last one handed out): every batch must start above it.
    #highest = -1n;
    #inflight = null;
    #refilling = null;
    #abort = null;
    #closed = false;
    // The largest count to ask for beyond `prefetch` (nextIds); lowered when the service refuses one.
    #maxCount = MAX_COUNT;
    #stats = { ids: 0, expired: 0, requests: 0, failures: 0 };

    constructor(options) {
      if (options === null || typeof options !== 'object' || Array.isArray(options)) {
        throw typeError('Client options must be an options object ({ url, ... })');
      }
      for (const k of Object.keys(options))
        if (!OPTIONS.includes(k)) throw typeError(`Client options: unknown option "${k}"`);
      if (typeof options.url !== 'string') throw typeError('Client option url must be a string');
      let u;
      try {
        u = new URL(options.url, globalThis.location?.href);
      } catch {
        throw failure('INVALID_ARGUMENT', `Client option url is not a URL: ${JSON.stringify(options.url)}`, {
          field: 'url',
        });
      }
      if ((u.protocol !== 'http:' && u.protocol !== 'https:') || u.search || u.hash) {
        throw failure(
          'INVALID_ARGUMENT',
          `Client option url must be an http(s) URL without query or fragment, got ${JSON.stringify(options.url)}`,
          { field: 'url' },
        );
      }
      this.#url = options.url;
      this.#endpoint = `${u.origin}${u.pathname.replace(/\/+$/, '')}/v1/ids?count=`;
      this.#prefetch = intOption(options, 'prefetch', 100, 1, MAX_COUNT);
      this.#lowWater = Math.max(1, this.#prefetch >> 1);
      this.#validityMs = intOption(options, 'validityMs', 600000, 1, Number.MAX_SAFE_INTEGER);
      this.#timeoutMs = intOption(options, 'timeoutMs', 2000, 1, 3600000);
      this.#retries = intOption(options, 'retries', 3, 0, 100);
      const clock = options.clock ?? defaultClock;
      if (typeof clock !== 'function')
        throw typeError('Client option clock must be a function returning monotonic milliseconds');
      this.#clock = clock;
      // `ca`: PEM text (string or Buffer) of the authorities that sign an https service's certificate
      // (Node; a browser trusts what its system does). `token`: a bearer token (--auth-token-file).
      this.#headers = { accept: 'application/json' };
      if (options.ca !== undefined) {
        if (typeof options.ca !== 'string' && !(options.ca instanceof Uint8Array))
          throw typeError('Client option ca must be PEM text (a string or a Buffer)');
        if (u.protocol !== 'https:')
          throw failure('INVALID_ARGUMENT', 'Client option ca is for an https URL', { field: 'ca' });
        this.#https = globalThis.process?.getBuiltinModule?.('node:https');
        if (!this.#https)
          throw failure(
            'INVALID_ARGUMENT',
            'Client option ca needs Node (a browser trusts its system authorities)',
            {
              field: 'ca',
            },
          );
        this.#ca = checkedCa(options.ca);
      }
      if (options.token !== undefined) {
        if (typeof options.token !== 'string' || !/^[\x21-\x7e]+$/.test(options.token))
          throw typeError('Client option token must be a non-empty string of printable ASCII without spaces');
        this.#headers.authorization = `Bearer ${options.token}`;
      }
    }

    get url() {
      return this.#url;
    }
    get prefetch() {
      return this.#prefetch;
    }
    get closed() {
      return this.#closed;
    }

    /** The longest one fetch takes before it rejects: every attempt's timeout and every pause. */
    get maxWaitMs() {
      let total = (this.#retries + 1) * this.#timeoutMs;
      for (let i = 0; i < this.#retries; i++) total += backoffMs(i);
      return total;
    }

    #now() {
      const t = this.#clock();
      if (typeof t !== 'number' || !(t >= 0)) {
        throw failure(
          'INVALID_CLOCK',
          `the client's clock returned ${String(t)}, expected monotonic milliseconds >= 0`,
        );
      }
      return t;
    }

    #available(now) {
      let n = 0;
      if (now < this.#expires) n += this.#ids.length - this.#pos;
      for (const b of this.#queue) if (now < b.expires) n += b.ids.length;
      return n;
    }

    /** Moves to the next batch still valid at `now`; false when none is. */
    #advance(now) {
      if (now >= this.#expires) this.#stats.expired += this.#ids.length - this.#pos;
      else if (this.#pos < this.#ids.length) return true;
      this.#stats.ids += this.#pos; // the batch left behind: what was taken of it
      while (this.#queue.length > 0) {
        const b = this.#queue.shift();
        if (now < b.expires) {
          this.#ids = b.ids;
          this.#pos = 0;
          this.#expires = b.expires;
          return true;
        }
        this.#stats.expired += b.ids.length;
      }
      this.#ids = EMPTY;
      this.#pos = 0;
      return false;
    }

    /** The next ID if a valid one is prefetched, else undefined (never waits; may start a refill).
     * The hot path: one clock reading (the default one called directly), one comparison, one read. */
    tryNextId() {
      const now = this.#clock === defaultClock ? performance.now() : this.#now();
      const pos = this.#pos;
      const ids = this.#ids;
      if (now >= this.#expires || pos >= ids.length) return this.#tryNextSlow(now);
      this.#pos = pos + 1;
      if (ids.length - pos <= this.#lowWater && this.#refilling === null) this.#maybeRefill(now);
      return ids[pos];
    }

    #tryNextSlow(now) {
      if (!this.#advance(now)) return undefined;
      return this.tryNextId();
    }

    /** The next ID (a bigint): at once from a prefetched batch, else after a fetch. */
    nextId() {
      let id;
      try {
        id = this.tryNextId();
      } catch (e) {
        return Promise.reject(e);
      }
      return id !== undefined ? Promise.resolve(id) : this.#slowNextId();
    }

    async #slowNextId() {
      for (let strikes = 0; ;) {
        const id = this.tryNextId();
        if (id !== undefined) return id;
        strikes = await this.#refillFor(this.#prefetch, strikes);
      }
    }

    /** Awaits a fetch (the one in flight, or a new one of `count`); `strikes` counts the fetches whose
     * IDs expired before this caller got one (other callers taking them is progress, not a strike). */
    async #refillFor(count, strikes) {
      this.#checkOpen();
      const expired = this.#stats.expired;
      await this.#fetchUpTo(count);
      this.#advance(this.#now());
      if (this.#stats.expired > expired && this.#available(this.#now()) === 0 && ++strikes >= 3) {
        throw unavailable('every batch fetched expired before it could be used (validity too short)');
      }
      return strikes;
    }

    /** `n` IDs (bigints), fetching the batches they need (at most 10000 per request). */
    async nextIds(n) {
      if (typeof n !== 'number' || !Number.isInteger(n)) throw typeError('n must be an integer');
      if (n < 0 || n > 2 ** 30)
        throw failure('INVALID_ARGUMENT', `n must be 0..=${2 ** 30}, got ${n}`, { field: 'n' });
      const out = [];
      let strikes = 0;
      while (out.length < n) {
        const id = this.tryNextId();
        if (id !== undefined) out.push(id);
        else
          strikes = await this.#refillFor(
            Math.min(MAX_COUNT, Math.max(this.#prefetch, n - out.length)),
            strikes,
          );
      }
      return out;
    }

    /** Counters: ids handed out, ids expired (dropped), available now, requests, failures. */
    stats() {
      const s = this.#stats;
      return { ...s, ids: s.ids + this.#pos, available: this.#closed ? 0 : this.#available(this.#now()) };
    }

    /** Drops the prefetched IDs and aborts a fetch in flight. Idempotent; later calls reject. */
    close() {
      if (this.#closed) return;
      this.#closed = true;
      this.#stats.ids += this.#pos;
      this.#ids = EMPTY;
      this.#pos = 0;
      this.#queue = [];
      this.#abort?.abort();
    }

    #checkOpen() {
      if (this.#closed) throw unavailable('the client is closed');
    }

    #maybeRefill(now) {
      if (this.#closed || this.#available(now) >= this.#lowWater) return;
      this.#refilling = this.#fetchShared(this.#prefetch)
        .catch(() => {}) // a caller that finds the batch empty fetches itself and gets the error
        .finally(() => {
          this.#refilling = null;
        });
    }

    /** `count` IDs, or `prefetch` (which the service took before) when it refuses a count that large
     * (its --max-count): remembered for later calls. */
    async #fetchUpTo(count) {
      count = Math.max(this.#prefetch, Math.min(count, this.#maxCount));
      try {
        await this.#fetchShared(count);
      } catch (e) {
        if (count <= this.#prefetch || e.code !== 'INVALID_ARGUMENT' || e.field !== 'count') throw e;
        this.#maxCount = this.#prefetch;
        await this.#fetchShared(this.#prefetch);
      }
    }

    /** One fetch at a time: concurrent callers share the one in flight. */
    #fetchShared(count) {
      if (this.#inflight === null) {
        this.#inflight = this.#fetch(count).finally(() => {
          this.#inflight = null;
        });
      }
      return this.#inflight;
    }

    async #fetch(count) {
      let last;
      for (let attempt = 0; attempt <= this.#retries; attempt++) {
        if (attempt > 0) {
          let pause = backoffMs(attempt - 1);
          if (last.code === 'TOO_FAR_AHEAD' && last.retryAfterMs !== undefined)
            pause = Math.min(Math.max(pause, last.retryAfterMs), BACKOFF_CAP_MS);
          await sleep(pause);
        }
        this.#checkOpen();
        const fetchedAt = this.#now();
        this.#stats.requests++;
        const abort = new AbortController();
        this.#abort = abort;
        const timer = setTimeout(() => abort.abort(), this.#timeoutMs);
        let status;
        let doc;
        try {
          let text;
          if (this.#ca !== undefined) {
            const res = await postWithCa(
              this.#https,
              this.#endpoint + count,
              this.#headers,
              this.#ca,
              abort.signal,
              MAX_ANSWER_BYTES,
            );
            status = res.status;
            text = res.text;
          } else {
            // No redirect is followed: IDs come only from the URL the client was given.
            const res = await fetch(this.#endpoint + count, {
              method: 'POST',
              headers: this.#headers,
              signal: abort.signal,
              redirect: 'manual',
            });
            status = res.type === 'opaqueredirect' ? 302 : res.status;
            text = status >= 300 && status < 400 ? '' : await boundedText(res, MAX_ANSWER_BYTES);
          }
          if (text === undefined) {
            status = 0; // not the protocol (below)
          } else {
            try {
              doc = JSON.parse(text);
            } catch {
              doc = undefined;
            }
          }
        } catch (e) {
          this.#stats.failures++;
          this.#checkOpen();
          last = unavailable(
            `the ID service at ${this.#url} did not answer${abort.signal.aborted ? ` within ${this.#timeoutMs} ms` : `: ${e?.cause?.code ?? e?.message ?? e}`}`,
          );
          continue;
        } finally {
          clearTimeout(timer);
          if (this.#abort === abort) this.#abort = null;
        }
        this.#checkOpen();
        if (status === 0) {
          last = unavailable(
            `the ID service at ${this.#url} answered with more than ${MAX_ANSWER_BYTES} bytes`,
          );
        } else if (status >= 300 && status < 400) {
          // A configuration (or an attacker on the path), not an outage: not retried.
          this.#stats.failures++;
          throw failure(
            'INVALID_ARGUMENT',
            `the ID service at ${this.#url} answered with a redirect (HTTP ${status}); the client follows none: give the service's own URL`,
            { field: 'url' },
          );
        } else if (status === 200) {
          const batch = doc === undefined ? 'a body that is not JSON' : parseBatch(doc, count, this.#highest);
          if (typeof batch === 'object') {
            this.#highest = batch.ids[count - 1];
            this.#queue.push({
              ids: batch.ids,
              expires: fetchedAt + Math.min(this.#validityMs, batch.validForMs),
            });
            return;
          }
          last = unavailable(`HTTP 200 from ${this.#url} is not the ID service's protocol: ${batch}`);
        } else {
          last = answerError(status, doc, this.#url, codes);
        }
        this.#stats.failures++;
        if (status !== 503 && last.code !== 'SERVICE_UNAVAILABLE') throw last;
      }
      throw last;
    }
  };
}
