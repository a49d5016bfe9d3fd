// Worker body for workers.test.mjs: its own Generator (napi classes are per isolate), its own node ID.
'use strict'
const { parentPort, workerData } = require('node:worker_threads')
const { Generator } = require('snowmint')

const gen = new Generator({ nodeId: workerData.nodeId, layout: workerData.layout })
const out = new BigUint64Array(workerData.count)
let i = 0
while (i < out.length) {
  if (i % 2 === 0 && out.length - i >= 1000) {
    out.set(gen.nextIds(1000), i)
    i += 1000
  } else {
    out[i++] = gen.nextId()
  }
}
parentPort.postMessage(out, [out.buffer])
