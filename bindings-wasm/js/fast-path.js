// Shared by the ES-module entries (web.js, bundler.js). node.cjs and the file:// page keep their own
// copy: CommonJS cannot load an ES module synchronously, and a file:// page cannot import one.
// nextId() with the default clock: Date.now() read here and passed in, the ID read back from the
// module's memory (see Generator::mint_at in src/lib.rs); anything else takes the full path.
export function installFastPath(wasm) {
  const memory = wasm.__memory();
  const at = wasm.__idSlot();
  let slot = new BigUint64Array(memory.buffer, at, 1);
  const proto = wasm.Generator.prototype;
  const full = proto.nextId;
  Object.defineProperty(proto, "nextId", {
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
