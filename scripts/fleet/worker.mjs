// One process of `make demo`'s fleet (scripts/demo_fleet.py), through the Node binding:
//   node worker.mjs PACKAGE_DIR SOURCE COUNT
// claims a node ID from the lease source SOURCE (Generator.open), prints "node N", then mints COUNT IDs
// (twitter layout) in batches of 500, one decimal ID per line, written after each batch, with a 10 ms pause
// between batches; close() releases the lease.
import { createRequire } from 'node:module';
import { writeSync } from 'node:fs';
import path from 'node:path';

const [pkg, source, countText] = process.argv.slice(2);
const { Generator } = createRequire(path.join(pkg, 'x.js'))('./index.js');
const BATCH = 500;
const count = Number(countText);
const gen = await Generator.open({ nodeId: source, layout: 'twitter' });
writeSync(1, `node ${gen.nodeId}\n`);
for (let done = 0; done < count;) {
  const ids = gen.nextIds(Math.min(BATCH, count - done));
  writeSync(1, ids.join('\n') + '\n');
  done += ids.length;
  await new Promise((resolve) => setTimeout(resolve, 10));
}
await gen.close();
