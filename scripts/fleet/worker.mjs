// One process of `make demo`'s fleet (scripts/demo_fleet.py) and of the chaos run (scripts/chaos.py),
// through the Node binding:
//   node worker.mjs PACKAGE_DIR SOURCE COUNT [SECONDS]
// claims a node ID from the lease source SOURCE (Generator.open), prints "node N", then mints COUNT IDs
// (twitter layout) in batches of 500, one decimal ID per line, written after each batch, with a 10 ms pause
// between batches; close() releases the lease.
// With SECONDS: as scripts/fleet/worker.py with SECONDS (the `wait` policy, as Python's default; batches of 100 for SECONDS, a new claim, printed
// as "node N token FENCING at UNIX_MS", whenever none is free or a mint fails, printed as
// "lost N token FENCING CODE").
import { createRequire } from 'node:module';
import { writeSync } from 'node:fs';
import path from 'node:path';

const [pkg, source, countText, secondsText] = process.argv.slice(2);
const { Generator } = createRequire(path.join(pkg, 'x.js'))('./index.js');
const BATCH = 500;
const RECLAIM_BATCH = 100;
const RETRY = new Set(['NODE_IDS_EXHAUSTED', 'STORE_UNAVAILABLE', 'LEASE_LOST']);
const count = Number(countText);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function claim(deadline) {
  while (Date.now() < deadline) {
    let gen;
    try {
      gen = await Generator.open({ nodeId: source, layout: 'twitter', policy: 'wait' });
    } catch (e) {
      if (!RETRY.has(e.code)) throw e;
      await sleep(50);
      continue;
    }
    const token = gen.lease.fencingToken;
    writeSync(1, `node ${gen.nodeId} token ${token} at ${Date.now()}\n`);
    return [gen, token];
  }
  return [null, null];
}

if (secondsText === undefined) {
  const gen = await Generator.open({ nodeId: source, layout: 'twitter' });
  writeSync(1, `node ${gen.nodeId}\n`);
  const deadline = Date.now() + 60_000;
  for (let done = 0; done < count;) {
    let ids;
    try {
      ids = gen.nextIds(Math.min(BATCH, count - done));
    } catch (e) {
      // JavaScript's `fail` policy: at the end of the reservation its keeper has written (on the embedded
      // store at most 1 s ahead of the clock, and in a new holder's first second only as far as the clock
      // has moved since the claim) the call throws TOO_FAR_AHEAD with `retryAfterMs`; retry then.
      if (e.code !== 'TOO_FAR_AHEAD' || Date.now() > deadline) throw e;
      await sleep(Math.max(1, e.retryAfterMs ?? 10));
      continue;
    }
    writeSync(1, ids.join('\n') + '\n');
    done += ids.length;
    await sleep(10);
  }
  await gen.close();
} else {
  const deadline = Date.now() + Number(secondsText) * 1000;
  let done = 0;
  while (done < count && Date.now() < deadline) {
    const [gen, token] = await claim(deadline);
    if (gen === null) break;
    while (done < count && Date.now() < deadline) {
      let ids;
      try {
        ids = gen.nextIds(Math.min(RECLAIM_BATCH, count - done));
      } catch (e) {
        writeSync(1, `lost ${gen.nodeId} token ${token} ${e.code}\n`);
        break;
      }
      writeSync(1, ids.join('\n') + '\n');
      done += ids.length;
      await sleep(20);
    }
    await gen.close().catch(() => {}); // a lease already lost, or a store unreachable: it expires by itself
  }
}
