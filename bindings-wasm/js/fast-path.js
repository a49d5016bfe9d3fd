// Shared by every entry: the ES-module ones (web.js, bundler.js) import it, node.cjs requires its CommonJS
// copy (dist/fast-path.cjs, written by patch-glue.mjs). The file:// page keeps its own copy of
// installFastPath: a classic script cannot import a module.
// nextId() with the default clock: Date.now() read here and passed in, the ID read back from the
// module's memory (see Generator::mint_at in src/lib.rs); anything else takes the full path.
export function installFastPath(wasm) {
  const memory = wasm.__memory();
  const at = wasm.__idSlot();
  let slot = new BigUint64Array(memory.buffer, at, 1);
  const proto = wasm.Generator.prototype;
  const full = proto.nextId;
  Object.defineProperty(proto, 'nextId', {
    configurable: true,
    writable: true,
    value: function nextId() {
      if (this.__mintAt(Date.now())) {
        if (slot.length === 0) slot = new BigUint64Array(memory.buffer, at, 1); // memory grew
        return slot[0];
      }
      return full.call(this);
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
