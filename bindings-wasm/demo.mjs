// demo.sh's body. `node demo.mjs CASE.json [NAME]`: replays one tests/vectors/generate.json case (a file
// holding the case object, or a {"cases": [...]} file and the case's name) through snowmint-wasm with
// its scripted clock and prints each minted ID in decimal, one per line; a failing call prints
// `error CODE`. `node demo.mjs --live N`: N IDs from the host clock (layout twitter, node 7).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { makeLayout, reading } from '../tests/js/conformance.mjs';

const api = createRequire(import.meta.url)('./js/node.cjs');
const [arg, arg2] = process.argv.slice(2);

function coded(fn) {
  try {
    fn();
    return true;
  } catch (e) {
    if (e instanceof Error && typeof e.code === 'string' && api.ERROR_CODES.includes(e.code)) {
      console.log(`error ${e.code}`);
      return false;
    }
    throw e;
  }
}

if (arg === '--live') {
  const n = Number(arg2 ?? '5');
  if (!Number.isSafeInteger(n) || n < 0) throw new Error('--live N: N must be a whole number');
  // 'wait': a long run past the layout's capacity busy-waits instead of failing.
  const gen = new api.Generator({ nodeId: 7, layout: 'twitter', policy: 'wait' });
  const lines = [];
  for (let i = 0; i < n; i++) {
    lines.push(gen.nextIdString());
    if (lines.length === 4096) process.stdout.write(lines.splice(0).join('\n') + '\n');
  }
  if (lines.length) process.stdout.write(lines.join('\n') + '\n');
} else if (arg) {
  let c = JSON.parse(readFileSync(arg, 'utf8'));
  if (Array.isArray(c.cases)) {
    c = arg2 ? c.cases.find((x) => x.name === arg2) : c.cases.length === 1 ? c.cases[0] : null;
    if (!c) throw new Error(arg2 ? `no case named ${arg2}` : 'the file holds several cases: name one');
  }
  let script = ['0'];
  let at = 0;
  const clock = () => reading(script[Math.min(at++, script.length - 1)]);
  const options = { nodeId: BigInt(c.node_id), clock, policy: c.policy ?? 'wait' };
  if ('max_ahead_ms' in c) options.maxAheadMs = BigInt(c.max_ahead_ms);
  if ('random_seed' in c) options.randomSeed = BigInt(c.random_seed);
  let gen;
  if (
    coded(() => {
      gen = new api.Generator({ ...options, layout: makeLayout(api, c.layout) });
    })
  ) {
    for (const step of c.steps ?? []) {
      script = step.clock;
      at = 0;
      if (step.op === 'batch') {
        coded(() => {
          for (const id of gen.nextIds(step.count)) console.log(id.toString());
        });
      } else {
        for (let i = 0; i < step.count; i++) if (!coded(() => console.log(gen.nextId().toString()))) break;
      }
    }
  }
} else {
  console.error('usage: demo.sh CASE.json [NAME] | demo.sh --live N');
  process.exit(2);
}
