// Runs the shared conformance runner (tests/js/conformance.mjs, unchanged) inside the page against the
// installed package's web build, with a small node:test / node:assert stand-in. Results land in
// window.__conformance for the Playwright test to read.
const out = document.getElementById('out');

class AssertionError extends Error {}
const show = (v) => (typeof v === 'bigint' ? `${v}n` : JSON.stringify(v));
const assert = {
  ok(v, msg) {
    if (!v) throw new AssertionError(msg || `expected truthy, got ${show(v)}`);
  },
  equal(a, b, msg) {
    if (!Object.is(a, b)) throw new AssertionError(`${msg ? msg + ': ' : ''}${show(a)} !== ${show(b)}`);
  },
  notEqual(a, b, msg) {
    if (Object.is(a, b)) throw new AssertionError(`${msg ? msg + ': ' : ''}${show(a)} === ${show(b)}`);
  },
  strictEqual(a, b, msg) {
    assert.equal(a, b, msg);
  },
  deepEqual(a, b, msg) {
    const s = (x) => JSON.stringify(x, (_, v) => (typeof v === 'bigint' ? `${v}n` : v));
    if (s(a) !== s(b)) throw new AssertionError(`${msg ? msg + ': ' : ''}${s(a)} deep!== ${s(b)}`);
  },
  match(s, re, msg) {
    if (!re.test(s)) throw new AssertionError(msg || `${show(s)} does not match ${re}`);
  },
  fail(msg) {
    throw new AssertionError(msg || 'failed');
  },
};
assert.deepStrictEqual = assert.deepEqual;

// records: [file, case name, passed] per vector case the runner ran (written to
// $SNOWMINT_CONFORMANCE_DIR/wasm-browser.txt by browser.test.mjs for scripts/check-conformance.py).
const results = { total: 0, passed: 0, failed: 0, failures: [], files: [], records: [] };

async function runTest(name, fn, depth) {
  const children = [];
  const t = {
    test: async (n, f) => {
      children.push(await runTest(n, f, depth + 1));
    },
  };
  let error = null;
  try {
    await fn(t);
  } catch (e) {
    error = e;
  }
  const leaf = children.length === 0;
  if (leaf) {
    results.total++;
    if (error) {
      results.failed++;
      results.failures.push(`${name}: ${error && error.message}`);
    } else results.passed++;
  } else {
    if (depth === 0) results.files.push(name);
    if (error) {
      results.failed++;
      results.failures.push(`${name}: ${error && error.message}`);
    }
  }
  return !error;
}
const test = (name, fn) => runTest(name, fn, 0);

try {
  const names = await (await fetch('/tests/vectors/index.json')).json();
  globalThis.__SNOWMINT_VECTORS = {};
  for (const n of names) globalThis.__SNOWMINT_VECTORS[n] = await (await fetch(`/tests/vectors/${n}`)).text();
  const api = await import('/pkg/js/web.js');
  const { runConformance } = await import('/tests/js/conformance.mjs');
  const t0 = performance.now();
  results.cases = await runConformance(api, {
    test,
    assert,
    vectorsDir: '/tests/vectors',
    record: (file, name, passed) => results.records.push([file, name, passed]),
  });
  results.ms = performance.now() - t0;
  results.userAgent = navigator.userAgent;
} catch (e) {
  results.failed++;
  results.failures.push(`harness: ${e && e.stack ? e.stack : e}`);
}
out.textContent =
  `${results.passed} passed, ${results.failed} failed (${results.total} tests, files: ${results.files.join(', ')})\n` +
  results.failures.join('\n');
window.__conformance = results;
