// A client of the ID service (`snowmint serve`) in the chaos run (scripts/chaos.py), through the Node
// binding:
//   node client.mjs PACKAGE_DIR URL SECONDS batches   the binding's Client: batches of 20 IDs every 20 ms
//   node client.mjs PACKAGE_DIR URL SECONDS lease     a client lease (POST /v1/leases): mints locally with
//                                                     a Generator on the leased node ID from `start`,
//                                                     hands out only positions below `limit`, renews at
//                                                     `renew_after_ms` or at the limit, takes a new lease
//                                                     on 409 LEASE_LOST
// One decimal ID per line; in lease mode each lease taken prints "node N token FENCING at UNIX_MS" and a
// lost one "lost N token FENCING LEASE_LOST". Failed requests (the service or its store down) are
// retried every 100 ms until SECONDS have passed.
import { createRequire } from 'node:module';
import { writeSync } from 'node:fs';
import path from 'node:path';

const [pkg, url, secondsText, mode] = process.argv.slice(2);
const { Client, Generator } = createRequire(path.join(pkg, 'x.js'))('./index.js');
const deadline = Date.now() + Number(secondsText) * 1000;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const out = (text) => writeSync(1, text);

async function batches() {
  const client = new Client({ url, prefetch: 100, timeoutMs: 1000, retries: 1 });
  while (Date.now() < deadline) {
    try {
      out((await client.nextIds(20)).join('\n') + '\n');
    } catch (e) {
      out(`error ${e.code}\n`);
      await sleep(100);
    }
    await sleep(20);
  }
  client.close();
}

// POST to the service; the JSON answer, or { status } for an answer that is not 2xx; null when the
// service cannot be reached.
async function post(route) {
  try {
    const res = await fetch(url + route, { method: 'POST', signal: AbortSignal.timeout(2000) });
    if (!res.ok) return { status: res.status };
    return await res.json();
  } catch {
    return null;
  }
}

// The twitter layout: position = tick << 12 | sequence.
const position = (id) => ((id >> 22n) << 12n) | (id & 0xfffn);

async function leases() {
  let lease = null;
  let gen = null;
  let renewAt = 0;
  while (Date.now() < deadline) {
    if (lease === null) {
      const l = await post('/v1/leases');
      if (l === null || l.status) {
        await sleep(100);
        continue;
      }
      lease = l;
      gen = new Generator({ nodeId: l.node_id, layout: 'twitter' });
      gen.restore(l.start);
      renewAt = Date.now() + l.renew_after_ms;
      out(`node ${l.node_id} token ${l.fencing_token} at ${Date.now()}\n`);
    }
    const limit = BigInt(lease.limit);
    const ids = Array.from(gen.nextIds(20)).filter((id) => position(id) < limit);
    if (ids.length) out(ids.join('\n') + '\n');
    if (ids.length < 20 || Date.now() >= renewAt) {
      const r = await post(`/v1/leases/${encodeURIComponent(lease.token)}/renew`);
      if (r !== null && r.status === 409) {
        out(`lost ${lease.node_id} token ${lease.fencing_token} LEASE_LOST\n`);
        lease = null;
      } else if (r !== null && !r.status) {
        lease = r;
        renewAt = Date.now() + r.renew_after_ms;
      } else if (ids.length < 20) {
        await sleep(100); // at the limit with the service unreachable: wait for a renewal
      }
    }
    await sleep(20);
  }
}

await (mode === 'lease' ? leases() : batches());
