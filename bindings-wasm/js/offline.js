// OfflineGenerator: minting in a browser under a node-ID lease of the ID service (SPEC §6a), offline too.
//
// All of it is JavaScript over the module's Generator (no byte of the .wasm pays for it). One source, this
// ES module; build.sh writes its classic-script copy (www/pkg/snowmint_offline.js) for the offline page.
//
// - The lease (token, node ID, layout, reservation `limit`, expiry) and a high-water mark are kept in
//   IndexedDB (database `snowmint-offline`), so a reload continues after the last ID handed out.
// - The mark is persisted AHEAD: before an ID at position p is handed out, a mark > p is durably in
//   IndexedDB (a block of AHEAD_MS of positions past the clock, written in the background). A crash
//   between minting and persisting therefore never repeats an ID after a reload; it skips some.
// - Tabs of one origin: each generator holds a Web Lock (`navigator.locks`) on one lease slot
//   (`snowmint-offline:URL:NAME:SLOT`), so two tabs never use one lease at once: a second tab takes the
//   next free slot, i.e. its own lease (never waits). A reload frees the slot and takes it again.
// - No ID at a position >= the lease's `limit` is ever handed out (LEASE_LOST instead). Renewal runs at
//   `renew_after_ms`, on the `online` event, and when minting meets the limit; 409/404 LEASE_LOST on
//   renewal takes a new lease (a new node ID; the old reservation is simply left unused).

const DB_NAME = 'snowmint-offline';
const STORE = 'leases';
const AHEAD_MS = 10000; // how far past the clock the persisted mark reaches
const MAX_AHEAD_MS = 15000; // the Generator's default maxAheadMs (index.d.ts)
const MAX_SLOTS = 64; // tabs (generators of one url and name) at once
const TIMEOUT_MS = 10000; // one request to the service
const MAX_ANSWER_BYTES = 65536; // a lease answer is about 500 bytes; more is not the protocol
const MAX_FLOORS = 256; // (layout, node ID) floors kept with a slot's lease
const PRIVATE = Symbol('OfflineGenerator.open');

export function makeOfflineGenerator({ Generator, SnowmintError }) {
  const fail = (code, message, extra) => Object.assign(new SnowmintError(message), { code }, extra);
  const argErr = (message) => Object.assign(new TypeError(message), { code: 'INVALID_ARGUMENT' });

  const done = (req) =>
    new Promise((resolve, reject) => {
      req.onsuccess = () => resolve(req.result);
      req.onerror = () => reject(req.error);
    });
  async function openDb() {
    if (typeof indexedDB === 'undefined') throw fail('STORE_UNAVAILABLE', 'OfflineGenerator needs IndexedDB');
    const req = indexedDB.open(DB_NAME, 1);
    req.onupgradeneeded = () => req.result.createObjectStore(STORE);
    try {
      return await done(req);
    } catch (e) {
      throw fail('STORE_UNAVAILABLE', `IndexedDB ${DB_NAME} cannot be opened: ${e && e.message}`);
    }
  }
  /** One IndexedDB transaction, resolved once committed (strict durability: flushed to disk). */
  function transact(db, mode, f) {
    return new Promise((resolve, reject) => {
      let t;
      try {
        t = db.transaction(STORE, mode, { durability: 'strict' });
      } catch (e) {
        reject(fail('STORE_UNAVAILABLE', `IndexedDB: ${e.message}`));
        return;
      }
      const req = f(t.objectStore(STORE));
      t.oncomplete = () => resolve(req.result);
      t.onerror = t.onabort = () =>
        reject(fail('STORE_UNAVAILABLE', `IndexedDB: ${t.error && t.error.message}`));
    });
  }

  const DIGITS = /^(0|[1-9][0-9]{0,19})$/;
  /** A lease answer of the service, checked field by field (anything else: SERVICE_UNAVAILABLE). */
  function leaseOf(j, url) {
    const ok =
      j &&
      typeof j === 'object' &&
      typeof j.token === 'string' &&
      j.token.length > 0 &&
      Number.isSafeInteger(j.node_id) &&
      j.node_id >= 0 &&
      typeof j.layout === 'string' &&
      DIGITS.test(j.start) &&
      DIGITS.test(j.limit) &&
      Number.isFinite(j.renew_after_ms) &&
      j.renew_after_ms >= 0 &&
      Number.isFinite(j.expires_unix_ms) &&
      Number.isFinite(j.limit_unix_ms);
    if (!ok)
      throw fail('SERVICE_UNAVAILABLE', `the ID service at ${url} answered with a body that is not a lease`);
    if (BigInt(j.start) > BigInt(j.limit))
      throw fail(
        'SERVICE_UNAVAILABLE',
        `the ID service at ${url} answered with a lease whose start ${j.start} is above its limit ${j.limit}`,
      );
    return {
      token: j.token,
      nodeId: j.node_id,
      layout: j.layout,
      sequencer: j.sequencer,
      start: BigInt(j.start),
      limit: BigInt(j.limit),
      limitUnixMs: j.limit_unix_ms,
      expiresUnixMs: j.expires_unix_ms,
      renewAfterMs: j.renew_after_ms,
      fencingToken: j.fencing_token,
    };
  }

  /** The body of `res` parsed as JSON (undefined if it is not JSON), read at most MAX_ANSWER_BYTES:
   * a larger answer is not the protocol (SERVICE_UNAVAILABLE), and no more of it is read. */
  async function boundedJson(res, url) {
    const tooLarge = () =>
      fail(
        'SERVICE_UNAVAILABLE',
        `the ID service at ${url} answered with more than ${MAX_ANSWER_BYTES} bytes`,
      );
    if (Number(res.headers.get('content-length')) > MAX_ANSWER_BYTES) {
      await res.body?.cancel().catch(() => {});
      throw tooLarge();
    }
    const chunks = [];
    let size = 0;
    if (res.body) {
      const reader = res.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        size += value.byteLength;
        if (size > MAX_ANSWER_BYTES) {
          await reader.cancel().catch(() => {});
          throw tooLarge();
        }
        chunks.push(value);
      }
    }
    const all = new Uint8Array(size);
    let at = 0;
    for (const c of chunks) {
      all.set(c, at);
      at += c.byteLength;
    }
    try {
      return JSON.parse(new TextDecoder().decode(all));
    } catch {
      return undefined;
    }
  }

  async function request(url, method, path, body) {
    let res;
    try {
      // No redirect is followed: a lease comes only from the URL the generator was given.
      res = await fetch(url + path, {
        method,
        cache: 'no-store',
        redirect: 'manual',
        signal: AbortSignal.timeout(TIMEOUT_MS),
        headers: body === undefined ? undefined : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (e) {
      throw fail('SERVICE_UNAVAILABLE', `the ID service at ${url} cannot be reached: ${e && e.message}`);
    }
    if (res.type === 'opaqueredirect' || (res.status >= 300 && res.status < 400)) {
      await res.body?.cancel().catch(() => {});
      throw fail(
        'INVALID_ARGUMENT',
        `the ID service at ${url} answered with a redirect; the generator follows none: give the service's own URL`,
        { field: 'url' },
      );
    }
    if (res.status === 204) return null;
    const j = await boundedJson(res, url);
    if (res.ok) return j;
    const e = j && j.error;
    if (e && typeof e.code === 'string' && typeof e.message === 'string') {
      const extra = {};
      if (e.field !== undefined) extra.field = e.field;
      if (e.retry_after_ms !== undefined) extra.retryAfterMs = e.retry_after_ms;
      throw fail(e.code, e.message, extra);
    }
    throw fail(
      'SERVICE_UNAVAILABLE',
      `the ID service at ${url} answered HTTP ${res.status} without a snowmint error`,
    );
  }

  /** Holds the first free slot's Web Lock; resolves to { slot, release } (release() frees it). */
  async function lockSlot(prefix) {
    if (typeof navigator === 'undefined' || !navigator.locks) {
      throw fail('STORE_UNAVAILABLE', 'OfflineGenerator needs the Web Locks API (navigator.locks)');
    }
    for (let slot = 0; slot < MAX_SLOTS; slot++) {
      let release;
      const held = new Promise((r) => {
        release = r;
      });
      const got = await new Promise((resolve, reject) => {
        navigator.locks
          .request(`${prefix}:${slot}`, { ifAvailable: true }, (lock) => {
            resolve(lock !== null);
            return lock === null ? undefined : held;
          })
          .catch(reject);
      });
      if (got) return { slot, release };
    }
    throw fail('NODE_IDS_EXHAUSTED', `all ${MAX_SLOTS} lease slots of ${prefix} are held by other tabs`);
  }

  return class OfflineGenerator {
    #url;
    #name;
    #holder;
    #clock;
    #db;
    #key;
    #slot;
    #unlock;
    #lease;
    #gen;
    #persisted = 0n; // a mark durably in IndexedDB: every ID handed out is below it
    // Per `layout|nodeId` this slot minted under before: a mark every ID it handed out there is below.
    // Kept with the lease in IndexedDB; a new lease starts above every such mark, and every stored
    // lease's mark, of any slot or name of this URL (#floorOf), so that a node ID handed back later (a
    // service restored from a backup, a broken one) never mints below what this browser already did.
    #floors = new Map();
    #saving = null; // the write in flight
    #aheadPositions;
    #timer = 0;
    #tick = 0;
    #renewing = null;
    #closed = false;
    #onOnline;
    /** What happened last (renewal, new lease, failure): for status displays. */
    lastEvent = '';

    /**
     * `await OfflineGenerator.open({ url, name?, holder?, clock? })`: `url` is the ID service's base URL
     * (http(s), no trailing slash needed); `name` ('default') separates independent generators of one
     * origin; `holder` is sent with the lease request; `clock` returns Unix ms (a Number), for tests.
     */
    static async open(options) {
      if (options === null || typeof options !== 'object')
        throw argErr('OfflineGenerator options must be an object');
      for (const k of Object.keys(options)) {
        if (!['url', 'name', 'holder', 'clock'].includes(k))
          throw argErr(`OfflineGenerator options: unknown option "${k}"`);
      }
      const { url, name = 'default', holder, clock } = options;
      if (typeof url !== 'string') throw argErr('url must be a string');
      let base;
      try {
        base = new URL(url, typeof location === 'undefined' ? undefined : location.href);
      } catch {
        throw fail('INVALID_ARGUMENT', `url is not a URL: ${url}`, { field: 'url' });
      }
      if (base.protocol !== 'http:' && base.protocol !== 'https:') {
        throw fail('INVALID_ARGUMENT', `url must be http(s), got ${base.protocol}`, { field: 'url' });
      }
      if (typeof name !== 'string' || name.length === 0 || name.length > 200)
        throw argErr('name must be a string of 1..200 characters');
      if (holder !== undefined && (typeof holder !== 'string' || holder.length > 200))
        throw argErr('holder must be a string of at most 200 characters');
      if (clock !== undefined && typeof clock !== 'function') throw argErr('clock must be a function');
      const g = new OfflineGenerator(base.href.replace(/\/+$/, ''), name, holder, clock, PRIVATE);
      await g.#start();
      return g;
    }

    /** Not for users: `await OfflineGenerator.open(options)` (a generator needs its lease first). */
    constructor(url, name, holder, clock, key) {
      if (key !== PRIVATE)
        throw argErr('use await OfflineGenerator.open({ url }): an OfflineGenerator needs a lease first');
      this.#url = url;
      this.#name = name;
      this.#holder = holder;
      this.#clock = clock;
    }

    #now() {
      return this.#clock ? this.#clock() : Date.now();
    }

    async #start() {
      const prefix = `snowmint-offline:${this.#url}:${this.#name}`;
      const { slot, release } = await lockSlot(prefix);
      this.#slot = slot;
      this.#unlock = release;
      try {
        this.#db = await openDb();
        this.#key = `${prefix}:${slot}`;
        const stored = await transact(this.#db, 'readonly', (s) => s.get(this.#key));
        if (stored) {
          if (stored.floors instanceof Map) this.#floors = stored.floors;
          this.#use(stored.lease, stored.mark);
          this.#persisted = stored.mark;
          // Online: the claim is checked (and extended) now. Offline, or refused for any reason, the
          // stored reservation is still this tab's to use up to its limit (the service hands the node ID
          // on only after it).
          try {
            await this.renew();
          } catch (e) {
            const why = e.code === 'SERVICE_UNAVAILABLE' ? 'offline' : e.code;
            this.lastEvent = `${why}: using the stored lease (${e.message})`;
          }
        } else {
          await this.#take();
        }
        await this.#persist();
      } catch (e) {
        this.close();
        throw e;
      }
      this.#onOnline = () => {
        this.renew().catch(() => {});
      };
      addEventListener('online', this.#onOnline);
      this.#tick = setInterval(() => this.#maybePersist(), AHEAD_MS / 4);
    }

    /** Makes the generator for `lease`, continuing from `mark` (the persisted high-water mark). */
    #use(lease, mark) {
      const old = this.#gen;
      const opts = { nodeId: lease.nodeId, layout: lease.layout };
      // A lease may start ahead of the clock (on the embedded store, up to its max_ahead past it: SPEC
      // §3.2) and a reload may restore a mark up to its limit: the generator runs as far ahead as the
      // lease reaches, and a second more, never less than its default (nor more than a day: a limit
      // answered far off is the service's mistake, which the limit check meets first).
      const reach = Math.ceil(Number(lease.limitUnixMs) - this.#now()) + 1000;
      if (reach > MAX_AHEAD_MS) opts.maxAheadMs = Math.min(reach, 86400000);
      if (this.#clock) opts.clock = this.#clock;
      const gen = new Generator(opts);
      if (this.#clock && gen.layout.clockUnit !== 'ms') {
        gen.free();
        const clock = this.#clock;
        opts.clock = () => BigInt(Math.floor(clock())) * 1000000n;
        this.#gen = new Generator(opts);
      } else {
        this.#gen = gen;
      }
      this.#gen.restore(mark > lease.start ? mark : lease.start);
      const l = this.#gen.layout;
      this.#aheadPositions =
        (BigInt(Math.ceil((AHEAD_MS * 1e6) / Number(l.tickNs))) + 1n) << BigInt(l.sequenceBits);
      this.#lease = lease;
      if (old) old.free();
      this.#schedule(lease.renewAfterMs);
    }

    #schedule(ms) {
      clearTimeout(this.#timer);
      if (!this.#closed)
        this.#timer = setTimeout(() => {
          this.renew().catch(() => {});
        }, ms);
    }

    async #take() {
      const body = this.#holder === undefined ? undefined : { holder: this.#holder };
      const lease = leaseOf(await request(this.#url, 'POST', '/v1/leases', body), this.#url);
      // What the lease being replaced reached (its persisted mark: every ID handed out is below it).
      const old = this.#lease;
      if (old) {
        const k = `${old.layout}|${old.nodeId}`;
        const hwm = this.#gen.highWaterMark();
        let reached = this.#persisted > hwm ? this.#persisted : hwm;
        const before = this.#floors.get(k);
        if (before !== undefined && before > reached) reached = before;
        this.#floors.delete(k);
        this.#floors.set(k, reached);
        while (this.#floors.size > MAX_FLOORS) this.#floors.delete(this.#floors.keys().next().value);
      }
      const floor = await this.#floorOf(lease);
      this.#persisted = 0n;
      this.#use(lease, floor > lease.start ? floor : lease.start);
      this.lastEvent = `took lease: node ${lease.nodeId}`;
    }

    /** The highest mark this browser keeps for `lease`'s layout and node ID: this slot's, and every
     * record's of this URL (its lease's mark, its floors). */
    async #floorOf(lease) {
      const k = `${lease.layout}|${lease.nodeId}`;
      let floor = this.#floors.get(k) ?? 0n;
      const rows = await transact(this.#db, 'readonly', (s) => s.getAll());
      for (const r of rows) {
        if (!r || r.url !== this.#url) continue;
        const marks = [r.floors instanceof Map ? r.floors.get(k) : undefined];
        if (r.lease && `${r.lease.layout}|${r.lease.nodeId}` === k) marks.push(r.mark);
        for (const m of marks) if (typeof m === 'bigint' && m > floor) floor = m;
      }
      return floor;
    }

    /**
     * Renews the lease now (also done by itself at `renew_after_ms` and on the `online` event): a later
     * limit. A lease the service no longer has (LEASE_LOST) is replaced by a new one (a new node ID).
     * Rejects with SERVICE_UNAVAILABLE while the service cannot be reached (retried later).
     */
    renew() {
      if (this.#closed) return Promise.reject(fail('INVALID_ARGUMENT', 'the OfflineGenerator is closed'));
      if (!this.#renewing) {
        this.#renewing = (async () => {
          try {
            const token = encodeURIComponent(this.#lease.token);
            let j;
            try {
              j = await request(this.#url, 'POST', `/v1/leases/${token}/renew`, undefined);
            } catch (e) {
              if (e.code !== 'LEASE_LOST' || this.#closed) throw e;
              await this.#take();
              await this.#persist();
              this.lastEvent = `lease lost on renewal; took a new lease: node ${this.#lease.nodeId}`;
              return;
            }
            const lease = leaseOf(j, this.#url);
            if (this.#closed) return;
            if (
              lease.token !== this.#lease.token ||
              lease.nodeId !== this.#lease.nodeId ||
              lease.layout !== this.#lease.layout
            ) {
              throw fail(
                'SERVICE_UNAVAILABLE',
                'the ID service renewed the lease with another token, node ID or layout',
              );
            }
            if (lease.limit > this.#lease.limit) this.#lease = { ...lease, start: this.#lease.start };
            this.#schedule(lease.renewAfterMs);
            await this.#persist();
            this.lastEvent = 'renewed';
          } catch (e) {
            // Unreachable or refused: try again a little later (the `online` event also retries).
            this.#schedule(Math.min(5000, Math.max(500, this.#lease.renewAfterMs / 4)));
            this.lastEvent = `renewal failed: ${e.code}: ${e.message}`;
            throw e;
          } finally {
            this.#renewing = null;
          }
        })();
      }
      return this.#renewing;
    }

    /** The position of the clock now (the first position of the current tick). */
    #positionNow() {
      const l = this.#gen.layout;
      const since = this.#now() - Number(l.epochMs);
      const tick = since <= 0 ? 0n : BigInt(Math.floor((since * 1e6) / Number(l.tickNs)));
      return tick << BigInt(l.sequenceBits);
    }

    /** Writes lease and mark: the mark reaches AHEAD_MS past the clock (or the limit, if nearer). */
    #persist() {
      if (this.#saving) return this.#saving;
      // AHEAD_MS past the clock, or (IDs minted ahead of the clock) a sixteenth of that past the last ID:
      // never from the mark itself, which would compound after each reload (restore() starts there).
      const hwm = this.#gen.highWaterMark();
      const timed = this.#positionNow() + this.#aheadPositions;
      const minted = hwm + (this.#aheadPositions >> 4n);
      let mark = timed > minted ? timed : minted;
      if (mark > this.#lease.limit) mark = this.#lease.limit;
      if (mark < this.#persisted && this.#lease === this.#savedLease) mark = this.#persisted;
      const lease = this.#lease;
      const floors = new Map(this.#floors);
      this.#saving = transact(this.#db, 'readwrite', (s) =>
        s.put({ url: this.#url, lease, mark, floors, savedUnixMs: Date.now() }, this.#key),
      )
        .then(() => {
          if (this.#lease === lease) this.#persisted = mark;
          this.#savedLease = lease;
        })
        .finally(() => {
          this.#saving = null;
        });
      return this.#saving;
    }
    #savedLease = null;

    /** Starts a write when the persisted mark is near the clock (half a block) or the last ID. */
    #maybePersist() {
      if (this.#closed || this.#saving) return;
      const p = this.#persisted;
      if (p >= this.#lease.limit) return;
      const near =
        this.#gen.highWaterMark() + (this.#aheadPositions >> 5n) > p ||
        this.#positionNow() + (this.#aheadPositions >> 1n) > p;
      if (near) this.#persist().catch(() => {});
    }

    /** Checks the position just minted (hwm - 1) against the limit and the persisted mark. */
    #check() {
      const hwm = this.#gen.highWaterMark();
      if (hwm > this.#lease.limit) {
        if (typeof navigator === 'undefined' || navigator.onLine !== false) this.renew().catch(() => {});
        throw fail(
          'LEASE_LOST',
          `the lease's reservation ends at position ${this.#lease.limit} ` +
            `(${new Date(this.#lease.limitUnixMs).toISOString()}); renew it online (the service at ${this.#url})`,
        );
      }
      if (hwm > this.#persisted) {
        this.#persist().catch(() => {});
        throw fail('TOO_FAR_AHEAD', 'the high-water mark is being persisted to IndexedDB; retry shortly', {
          retryAfterMs: 5,
        });
      }
      if (hwm + (this.#aheadPositions >> 5n) > this.#persisted) this.#maybePersist();
    }

    #live() {
      if (this.#closed) throw fail('INVALID_ARGUMENT', 'the OfflineGenerator is closed');
      return this.#gen;
    }

    /** The next ID (a bigint). LEASE_LOST past the reservation; TOO_FAR_AHEAD while the mark is saved. */
    nextId() {
      const id = this.#live().nextId();
      this.#check();
      return id;
    }

    /** The next ID as decimal text. */
    nextIdString() {
      return this.nextId().toString();
    }

    /** `n` consecutive IDs (a BigUint64Array); all or none. */
    nextIds(n) {
      const ids = this.#live().nextIds(n);
      this.#check();
      return ids;
    }

    /** Resolves once the persisted mark is written (e.g. before the page is hidden). */
    flush() {
      return this.#persist();
    }

    /** The counters of the current lease's generator (they start again with a new lease). */
    stats() {
      return this.#live().stats();
    }

    /** The node ID of the current lease. */
    get nodeId() {
      return this.#live().nodeId;
    }
    /** The layout of the current lease (a Layout). */
    get layout() {
      return this.#live().layout;
    }
    /** The lease slot this tab holds (0 for the first tab). */
    get slot() {
      return this.#slot;
    }
    /** The next free position (a bigint). */
    highWaterMark() {
      return this.#live().highWaterMark();
    }
    /** The current lease: `{ nodeId, layout, start, limit, limitUnixMs, expiresUnixMs, renewAfterMs,
     * persisted }` (positions as bigints; no token). */
    get lease() {
      const l = this.#lease;
      return {
        nodeId: l.nodeId,
        layout: l.layout,
        start: l.start,
        limit: l.limit,
        limitUnixMs: l.limitUnixMs,
        expiresUnixMs: l.expiresUnixMs,
        renewAfterMs: l.renewAfterMs,
        persisted: this.#persisted,
      };
    }

    /**
     * Stops timers and frees the Web Lock (the slot); the stored lease stays for the next open(). With
     * `{ release: true }` the lease is also given back to the service and forgotten.
     */
    async close(options) {
      if (this.#closed) return;
      this.#closed = true;
      clearTimeout(this.#timer);
      clearInterval(this.#tick);
      if (this.#onOnline) removeEventListener('online', this.#onOnline);
      try {
        if (this.#saving) await this.#saving.catch(() => {});
        if (options && options.release && this.#lease) {
          await request(
            this.#url,
            'DELETE',
            `/v1/leases/${encodeURIComponent(this.#lease.token)}`,
            undefined,
          );
          await transact(this.#db, 'readwrite', (s) => s.delete(this.#key));
        }
      } finally {
        if (this.#gen) this.#gen.free();
        if (this.#db) this.#db.close();
        this.#unlock();
      }
    }
  };
}
