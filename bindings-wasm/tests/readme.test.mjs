// The README's quickstart runs as written against the installed package.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { startService } from '../../tests/js/client.mjs';
import { fileURLToPath } from 'node:url';

const readme = fs.readFileSync(
  path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'README.md'),
  'utf8',
);

test('README quickstart runs', () => {
  const block = readme.split('## Quickstart')[1].match(/```js\n([\s\S]*?)```/)[1];
  const file = path.join(process.env.SNOWMINT_WASM_PROJECT, 'quickstart.mjs');
  fs.writeFileSync(file, block);
  const out = execFileSync(process.execPath, [file], { encoding: 'utf8' });
  assert.match(out, /^\d+n \d{4}-\d\d-\d\dT[\d:.]+Z 7 \w{11}\n\d+ \d+n\n$/);
});

test('README client example runs against a live service', async () => {
  const block = readme.split('## Client: IDs from the ID service')[1].match(/```js\n([\s\S]*?)```/)[1];
  const file = path.join(process.env.SNOWMINT_WASM_PROJECT, 'client-example.cjs');
  fs.writeFileSync(file, block);
  const s = await startService();
  try {
    const out = execFileSync(process.execPath, [file], {
      encoding: 'utf8',
      env: { ...process.env, SNOWMINT_SERVICE_URL: s.url },
    });
    assert.equal(out, 'true bigint\n5000 0\ntrue SERVICE_UNAVAILABLE\n');
  } finally {
    s.kill();
  }
});
