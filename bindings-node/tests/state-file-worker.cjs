// Child process of state-file.test.cjs: `node state-file-worker.cjs PATH COUNT OUT [START_AT_MS]` mints
// COUNT IDs from the state file at PATH (node 3, twitter) and writes them to OUT as little-endian u64;
// COUNT `forever` prints one ID per line until killed.
'use strict'
const fs = require('node:fs')
const { Generator } = require('snowmint')

const [path, count, out, startAt] = process.argv.slice(2)
const gen = new Generator({ nodeId: 3, stateFile: path })
if (count === 'forever') {
  // Lines in blocks, written synchronously: what was printed was minted before it.
  for (;;) {
    let block = ''
    for (let i = 0; i < 1000; i++) block += `${gen.nextId()}\n`
    fs.writeSync(1, block)
  }
}
while (startAt && Date.now() < Number(startAt)) {} // start with the other processes
const ids = new BigUint64Array(Number(count))
for (let i = 0; i < ids.length; i++) ids[i] = gen.nextId()
fs.writeFileSync(out, Buffer.from(ids.buffer))
