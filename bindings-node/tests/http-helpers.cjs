// HTTP helpers of the tests that run the README's server recipes (state-file.test.cjs, recipes.test.cjs).
'use strict'
const http = require('node:http')
const net = require('node:net')

/** A free TCP port on 127.0.0.1. */
function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address()
      s.close(() => resolve(port))
    })
  })
}

/** The body of `GET /` on 127.0.0.1:`port` (a fresh connection, at most 10 s); rejects unless 200. */
function get(port) {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, agent: false, timeout: 10_000 }, (res) => {
        let body = ''
        res.on('data', (d) => {
          body += d
        })
        res.on('end', () => (res.statusCode === 200 ? resolve(body) : reject(new Error(body))))
      })
      .on('timeout', function () {
        this.destroy(new Error(`GET 127.0.0.1:${port}: no answer in 10 s`))
      })
      .on('error', reject)
  })
}

module.exports = { freePort, get }
