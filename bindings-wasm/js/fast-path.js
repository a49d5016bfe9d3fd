// Shared by every entry: the ES-module ones (web.js, bundler.js) import it, node.cjs requires its CommonJS
// copy (dist/fast-path.cjs, written by patch-glue.mjs), and the file:// page loads a classic-script copy
// (www/pkg/snowmint_fast_path.js, written by build.sh).
//
// nextId() with the default clock reads Date.now() here. While it reads the millisecond of the last
// call, it hands out the IDs the generator took ahead for that millisecond, from a window in the
// module's memory, without calling into the module; otherwise it calls __refill (see "The fast path of
// `nextId()`" in src/lib.rs: the IDs are exactly those of minting one by one). Anything else (an
// injected clock, a wait, an error) takes the full path.
export function installFastPath(wasm) {
  const memory = wasm.__memory();
  const at = wasm.__window();
  const max = wasm.__windowMax();
  const refill = wasm.__refill;
  // The window's fields (src/lib.rs, struct Window): owner, next, end | ms | ids.
  let ctl, ms, ids;
  const view = () => {
    ctl = new Uint32Array(memory.buffer, at, 3);
    ms = new Float64Array(memory.buffer, at + 16, 1);
    ids = new BigUint64Array(memory.buffer, at + 32, max);
  };
  view();
  const proto = wasm.Generator.prototype;
  const full = proto.nextId;
  Object.defineProperty(proto, 'nextId', {
    configurable: true,
    writable: true,
    value: function nextId() {
      // The generator's handle (0: an injected clock), asked once; used only while the object is
      // alive (`__wbg_ptr` is 0 once it is freed, and the full path then throws as wasm-bindgen does).
      let h = this.__fast;
      if (h === undefined) h = this.__fast = this.__wbg_ptr === 0 ? 0 : this.__fastHandle();
      if (h !== 0 && this.__wbg_ptr !== 0) {
        const now = Date.now();
        // (After the module's memory grew, the old views read undefined: a refill makes new ones.)
        if (ctl[0] === h && ms[0] === now) {
          const i = ctl[1];
          if (i < ctl[2]) {
            ctl[1] = i + 1;
            return ids[i];
          }
        }
        if (refill(h, now)) {
          if (ids.length === 0) view();
          return ids[0];
        }
      }
      return full.call(this);
    },
  });
  // The next ID as decimal text: JavaScript's own bigint-to-text, on the fast path (no module code).
  Object.defineProperty(proto, 'nextIdString', {
    configurable: true,
    writable: true,
    value: function nextIdString() {
      return String(this.nextId());
    },
  });
}

// Opaque IDs live in a second module (snowmint_wasm_opaque: see opaque/src/lib.rs for why). This class
// resolves the layout through the main module (a preset name or a Layout, default 'twitter') and hands
// the key and the layout's width to the second module, which does the rest (and every check).
export function makeOpaque(main, core) {
  const coded = (err, code) => Object.assign(err, { code });
  return class Opaque {
    #core;
    #layout;
    #max; // 2^bits - 1: a bigint up to it takes the core's fast path (__encode / __decode)
    /** `new Opaque({ key, layout? })`: `key` is a Uint8Array of 16 secret bytes. */
    constructor(options) {
      if (options === null || typeof options !== 'object' || Array.isArray(options)) {
        throw coded(new TypeError('Opaque options must be an options object'), 'INVALID_ARGUMENT');
      }
      for (const k of Object.keys(options)) {
        if (k !== 'key' && k !== 'layout')
          throw coded(new TypeError(`Opaque options: unknown option "${k}"`), 'INVALID_ARGUMENT');
      }
      if (options.key === undefined)
        throw coded(new TypeError('Opaque options: option key is required'), 'INVALID_ARGUMENT');
      const l = options.layout;
      const layout =
        l === undefined ? main.Layout.preset('twitter') : typeof l === 'string' ? main.Layout.preset(l) : l;
      if (!(layout instanceof main.Layout))
        throw coded(new TypeError('layout must be a preset name or a Layout'), 'INVALID_ARGUMENT');
      this.#core = new core.OpaqueCore(options.key, layout.totalBits);
      this.#layout = layout;
      this.#max = (1n << BigInt(this.#core.bits)) - 1n;
    }
    encode(id) {
      if (typeof id !== 'bigint' || id < 0n || id > this.#max) return this.#core.encode(id);
      const t = this.#core.__encode(id);
      return t < 0n ? BigInt.asUintN(64, t) : t;
    }
    decode(token) {
      if (typeof token !== 'bigint' || token < 0n || token > this.#max) return this.#core.decode(token);
      const id = this.#core.__decode(token);
      return id < 0n ? BigInt.asUintN(64, id) : id;
    }
    encodeString(id, encoding) {
      return main.encode(this.encode(id), encoding);
    }
    decodeString(text, encoding) {
      return this.decode(main.parse(text, encoding));
    }
    encodeMany(ids) {
      return this.#core.encodeMany(ids);
    }
    decodeMany(tokens) {
      return this.#core.decodeMany(tokens);
    }
    get bits() {
      return this.#core.bits;
    }
    get layout() {
      return this.#layout;
    }
  };
}
