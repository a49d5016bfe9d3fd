// snowmint playground: plain JavaScript over the snowmint-wasm no-modules build (works from file://).
/* global wasm_bindgen, snowmint_surface, snowmint_fast_path, SNOWMINT_WASM_BASE64 */
'use strict';

(function () {
  const $ = (id) => document.getElementById(id);
  const state = { api: null, layout: null, gen: null, genKey: '' };

  function show(el, text) {
    el.textContent = text;
    el.hidden = !text;
  }
  function errText(e) {
    return (e && e.code ? e.code + ': ' : '') + (e && e.message ? e.message : String(e));
  }

  function load() {
    const bytes = Uint8Array.from(atob(SNOWMINT_WASM_BASE64), (c) => c.charCodeAt(0));
    wasm_bindgen.initSync({ module: bytes });
    const api = wasm_bindgen;
    // The fast nextId() path of the package (js/fast-path.js, as a classic script: pkg/snowmint_fast_path.js).
    snowmint_fast_path.installFastPath(api);
    api.ERROR_CODES = Object.freeze(api.__errorCodes().split(','));
    // The package's shared surface (js/surface.js, inlined by build.sh): SnowmintError, JSON forms.
    Object.assign(api, snowmint_surface.installSurface(api), {
      SnowmintError: snowmint_surface.SnowmintError,
    });
    return api;
  }

  /** The layout as the page names it: the preset, or the custom layout's widths and order. */
  function layoutLabel(l) {
    if (l.name !== null) return l.name;
    const order =
      l.order === 'timestamp_node_sequence' ? 'timestamp | node | sequence' : 'timestamp | sequence | node';
    return `custom (${l.timestampBits} / ${l.nodeBits} / ${l.sequenceBits} bits, ${order})`;
  }

  // Which string form decode read the text as: the core's own answer (`__formOf`, its parse_any_form),
  // so the page names exactly the form `any` took; ambiguous text never gets here (decode refuses it,
  // naming both readings).
  const FORMS = ['decimal', 'hex', 'base32', 'base58'];
  function readForm(text) {
    return FORMS[state.api.__formOf(text)];
  }
  state.readForm = readForm;

  // ---- layout ------------------------------------------------------------------------------------
  function readLayout() {
    const { Layout } = state.api;
    const preset = $('preset').value;
    $('snowcast-fields').hidden = preset !== 'snowcast';
    $('custom-fields').hidden = preset !== 'custom';
    if (preset === 'snowcast') {
      return Layout.snowcast(BigInt($('sc-epoch').value.trim()), BigInt($('sc-nodes').value.trim()));
    }
    if (preset === 'custom') {
      return new Layout({
        timestampBits: Number($('c-ts').value),
        nodeBits: Number($('c-node').value),
        sequenceBits: Number($('c-seq').value),
        order: $('c-order').value,
        tickNs: BigInt($('c-tick').value.trim()),
        epochMs: BigInt($('c-epoch').value.trim()),
        useSignBit: $('c-sign').checked,
      });
    }
    return Layout.preset(preset);
  }

  function fmt(n) {
    return BigInt(n).toLocaleString('en-US');
  }

  function drawDiagram(l) {
    const d = $('diagram');
    d.innerHTML = '';
    const segs = [];
    if (l.name === 'decimal') {
      segs.push(['decimal', 64, 'Unix ns ÷ 100 × 100 + host (0..99), decimal digits']);
    } else {
      if (l.totalBits < 64) segs.push(['unused', 64 - l.totalBits, 'unused']);
      segs.push(['timestamp', l.timestampBits, 'timestamp']);
      const node = ['node', l.nodeBits, 'node'];
      const seq = ['sequence', l.sequenceBits, 'sequence'];
      if (l.order === 'timestamp_node_sequence') segs.push(node, seq);
      else segs.push(seq, node);
    }
    for (const [cls, bits, label] of segs) {
      if (bits === 0) continue;
      const s = document.createElement('div');
      s.className = 'seg ' + cls;
      s.style.flex = String(bits);
      s.dataset.bits = String(bits);
      s.title = label + ': ' + bits + ' bits';
      s.innerHTML = '<span></span><span></span>';
      s.firstChild.textContent = label;
      s.lastChild.textContent = bits + (bits === 1 ? ' bit' : ' bits');
      d.appendChild(s);
    }
  }

  function facts(dl, rows) {
    dl.innerHTML = '';
    for (const [k, v, id] of rows) {
      const dt = document.createElement('dt');
      dt.textContent = k;
      const dd = document.createElement('dd');
      dd.textContent = v;
      if (id) dd.id = id;
      dl.append(dt, dd);
    }
  }

  function updateLayout() {
    let l;
    try {
      l = readLayout();
    } catch (e) {
      show($('layout-error'), errText(e));
      return;
    }
    show($('layout-error'), '');
    if (state.layout) state.layout.free();
    state.layout = l;
    state.gen = null;
    drawDiagram(l);
    const perSec = (BigInt(l.idsPerTick) * 1000000000n) / l.tickNs;
    facts($('layout-facts'), [
      ['layout', l.name === null ? 'custom' : l.name, 'fact-name'],
      [
        'bits',
        `${l.totalBits} (timestamp ${l.timestampBits}, node ${l.nodeBits}, sequence ${l.sequenceBits})`,
        'fact-bits',
      ],
      ['order', l.order, 'fact-order'],
      ['tick', `${fmt(l.tickNs)} ns`, 'fact-tick'],
      ['epoch', `${new Date(Number(l.epochMs)).toISOString()} (${l.epochMs} ms)`, 'fact-epoch'],
      ['lifespan ends', l.lifespanEndIso, 'fact-lifespan'],
      ['nodes', fmt(l.nodeCount), 'fact-nodes'],
      ['IDs per tick per node', fmt(l.idsPerTick), 'fact-per-tick'],
      ['IDs per second per node', fmt(perSec), 'fact-per-sec'],
      ['injected clock unit', l.clockUnit, 'fact-clock'],
    ]);
    updateOdds();
  }

  function updateOdds() {
    if (!state.layout) return;
    const n = Number(state.layout.nodeCount);
    const p = (k) => 1 - Math.exp((-k * (k - 1)) / (2 * n));
    const pct = (x) => {
      const v = x * 100;
      if (v < 0.01) return '< 0.01 %';
      if (v > 99.9) return '> 99.9 %';
      return (v < 10 ? v.toPrecision(2) : v.toFixed(0)) + ' %';
    };
    $('odds').textContent =
      `— for this layout (N = ${n}): 2 pages ${pct(p(2))}, 10 pages ${pct(p(10))}, 100 pages ${pct(p(100))}`;
  }

  // ---- mint --------------------------------------------------------------------------------------
  function generator() {
    const key = $('node-id').value.trim();
    if (!state.gen || state.genKey !== key) {
      if (!/^\d+$/.test(key)) {
        const e = new TypeError(`node ID must be a whole number, got ${JSON.stringify(key)}`);
        e.code = 'INVALID_ARGUMENT';
        throw e;
      }
      state.gen = new state.api.Generator({ nodeId: BigInt(key), layout: state.layout });
      state.genKey = key;
    }
    return state.gen;
  }

  function addRow(id) {
    const { decode, encode } = state.api;
    const d = decode(id, state.layout);
    const tr = document.createElement('tr');
    const cells = [
      encode(id, 'dec'),
      encode(id, 'hex'),
      encode(id, 'base32'),
      encode(id, 'base58'),
      d.iso,
      String(d.nodeId),
      String(d.sequence),
    ];
    const labels = [...$('minted').tHead.rows[0].cells].map((th) => th.textContent);
    cells.forEach((c, i) => {
      // data-label: narrow screens show each row as a card of labelled cells (style.css).
      const td = document.createElement('td');
      td.textContent = c;
      td.dataset.label = labels[i];
      tr.appendChild(td);
    });
    const body = $('minted').tBodies[0];
    body.insertBefore(tr, body.firstChild);
    while (body.rows.length > 50) body.deleteRow(body.rows.length - 1);
  }

  function mint(n) {
    if (!state.layout) return;
    try {
      const g = generator();
      const ids = g.nextIds(n);
      for (const id of ids) addRow(id);
      show($('mint-error'), '');
    } catch (e) {
      show($('mint-error'), errText(e));
    }
  }

  function randomNode() {
    if (!state.layout) return;
    const max = state.layout.maxNodeId;
    const words = crypto.getRandomValues(new Uint32Array(2));
    const r = (BigInt(words[0]) << 32n) | BigInt(words[1]);
    $('node-id').value = String(r % (max + 1n));
    state.gen = null;
  }

  // ---- decode ------------------------------------------------------------------------------------
  function updateDecode() {
    const text = $('decode-input').value.trim();
    if (!text || !state.layout) {
      show($('decode-error'), '');
      facts($('decoded'), []);
      return;
    }
    const { decode, encode } = state.api;
    try {
      const d = decode(text, state.layout);
      show($('decode-error'), '');
      facts($('decoded'), [
        ['layout', layoutLabel(state.layout), 'dec-layout'],
        ['read as', state.readForm(text), 'dec-form'],
        ['decimal', encode(d.id, 'dec'), 'dec-dec'],
        ['hex', encode(d.id, 'hex'), 'dec-hex'],
        ['base32', encode(d.id, 'base32'), 'dec-base32'],
        ['base58', encode(d.id, 'base58'), 'dec-base58'],
        ['time (UTC)', d.iso, 'dec-iso'],
        ['Unix ms', String(d.timestampMs) + (d.subMsNs ? ` + ${d.subMsNs} ns` : ''), 'dec-ms'],
        ['ticks since epoch', String(d.timestampTicks), 'dec-ticks'],
        ['node', String(d.nodeId), 'dec-node'],
        ['sequence', String(d.sequence), 'dec-seq'],
      ]);
    } catch (e) {
      facts($('decoded'), []);
      show($('decode-error'), errText(e));
    }
  }

  // ---- speed -------------------------------------------------------------------------------------
  // Times nextId() on a fresh generator (node 1, this layout), within the layout's capacity.
  function bench() {
    const { Generator } = state.api;
    const g = new Generator({ nodeId: 1n, layout: 'twitter' });
    const n = 200000; // 49 ms of twitter's capacity: well inside max_ahead
    for (let i = 0; i < 20000; i++) g.nextId(); // warm up
    let best = Infinity;
    for (let round = 0; round < 5; round++) {
      const t0 = performance.now();
      for (let i = 0; i < n; i++) g.nextId();
      const dt = performance.now() - t0;
      best = Math.min(best, dt);
      // let logical time fall back behind the clock before the next round
      const until = performance.now() + 60;
      while (performance.now() < until) {
        /* spin */
      }
    }
    g.free();
    const ns = (best * 1e6) / n;
    const out = $('bench-result');
    out.dataset.nsPerId = String(ns);
    out.textContent = `nextId(): ${ns.toFixed(1)} ns per ID (best of 5 × ${n.toLocaleString('en-US')}, twitter layout)`;
    return ns;
  }

  // ---- offline minting under a lease of the ID service (js/offline.js) ----------------------------
  const offline = { gen: null, Offline: null };
  function offlineStatus() {
    $('svc-net').textContent = navigator.onLine ? 'online' : 'offline';
    const g = offline.gen;
    if (!g) return;
    const l = g.lease;
    const left = l.limitUnixMs - Date.now();
    $('svc-state').textContent =
      left > 0
        ? `held, ${Math.round(left / 1000)} s of reservation left`
        : 'reservation ended (renew online)';
    $('svc-node').textContent = String(l.nodeId);
    $('svc-slot').textContent = String(g.slot);
    $('svc-layout').textContent = l.layout;
    $('svc-limit').textContent = `${new Date(l.limitUnixMs).toISOString()} (position ${l.limit})`;
    $('svc-mark').textContent = String(l.persisted);
    $('svc-event').textContent = g.lastEvent;
  }
  /**
   * A failed request to the service, said plainly: a browser reports a request it blocked for CORS as
   * a bare network error (SERVICE_UNAVAILABLE here), so for a service on another origin the message
   * says that this may be why, and how the service allows this page.
   */
  function serviceError(e) {
    const text = errText(e);
    if (!e || e.code !== 'SERVICE_UNAVAILABLE') return text;
    let target;
    try {
      target = new URL($('svc-url').value.trim(), location.href).origin;
    } catch {
      return text;
    }
    if (target === location.origin) return text;
    const page = location.origin;
    const allow =
      page === 'null'
        ? "this page was opened from file://, which has no origin a service can allow: serve it over http(s), or start the service with --cors-origin '*'"
        : `start it with --cors-origin ${page}`;
    return `${text} — CORS: ${target} is another origin than this page's (${page}); if the service is running, the browser blocked the request because the service does not allow this page's origin: ${allow}.`;
  }
  async function offlineOpen() {
    show($('svc-error'), '');
    const url = $('svc-url').value.trim();
    // Lease mode: from now on the page sends requests (leases, renewals; never the IDs) to the service.
    $('privacy').textContent =
      `Lease mode is on: this page sends lease requests and renewals to ${url || 'this origin'} (the IDs are still minted here and sent nowhere).`;
    try {
      if (offline.gen) await offline.gen.close();
      offline.gen = null;
      offline.gen = await offline.Offline.open({
        url,
        holder: 'snowmint playground',
      });
      for (const id of ['svc-mint', 'svc-mint10', 'svc-renew']) $(id).disabled = false;
    } catch (e) {
      show($('svc-error'), serviceError(e));
    }
    offlineStatus();
  }
  function offlineMint(n) {
    show($('svc-error'), '');
    try {
      const ids = offline.gen.nextIds(n);
      const list = $('svc-ids');
      for (const id of ids) {
        const li = document.createElement('li');
        li.textContent = String(id);
        list.prepend(li);
      }
    } catch (e) {
      show($('svc-error'), errText(e));
    }
    offlineStatus();
  }
  function offlineWire() {
    offline.Offline = snowmint_offline.makeOfflineGenerator(state.api);
    window.snowmintOffline = offline; // for the console (and the browser tests)
    if (location.protocol === 'http:' || location.protocol === 'https:') $('svc-url').value = location.origin;
    $('svc-open').addEventListener('click', offlineOpen);
    $('svc-mint').addEventListener('click', () => offlineMint(1));
    $('svc-mint10').addEventListener('click', () => offlineMint(10));
    $('svc-renew').addEventListener('click', () => {
      show($('svc-error'), '');
      offline.gen
        .renew()
        .catch((e) => show($('svc-error'), serviceError(e)))
        .finally(offlineStatus);
    });
    addEventListener('online', offlineStatus);
    addEventListener('offline', offlineStatus);
    setInterval(offlineStatus, 1000);
    offlineStatus();
  }

  // ---- wiring ------------------------------------------------------------------------------------
  try {
    state.api = load();
  } catch (e) {
    show($('status'), 'could not load the WebAssembly module: ' + errText(e));
    return;
  }
  window.snowmint = state.api; // for the console (and the browser tests)
  window.snowmintBench = bench;
  $('status').textContent = 'WebAssembly module loaded — ready.';
  $('status').classList.add('ok');
  for (const id of [
    'preset',
    'c-ts',
    'c-node',
    'c-seq',
    'c-order',
    'c-tick',
    'c-epoch',
    'c-sign',
    'sc-epoch',
    'sc-nodes',
  ]) {
    $(id).addEventListener('input', () => {
      updateLayout();
      updateDecode();
    });
    $(id).addEventListener('change', () => {
      updateLayout();
      updateDecode();
    });
  }
  $('node-id').addEventListener('input', () => {
    state.gen = null;
  });
  $('random-node').addEventListener('click', randomNode);
  $('mint').addEventListener('click', () => mint(1));
  $('mint10').addEventListener('click', () => mint(10));
  $('clear').addEventListener('click', () => {
    $('minted').tBodies[0].innerHTML = '';
  });
  $('decode-input').addEventListener('input', updateDecode);
  $('bench').addEventListener('click', () => {
    $('bench-result').textContent = 'timing…';
    setTimeout(bench, 10);
  });
  offlineWire();
  updateLayout();
  document.body.dataset.ready = 'true';
})();
