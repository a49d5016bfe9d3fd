// A small static server on 127.0.0.1 for the browser tests: the playground (bindings-wasm/www), the
// installed package (/pkg/ = the npm-installed snowmint-wasm), the shared JS runner (/tests/js/), the
// vectors (/tests/vectors/, with /tests/vectors/index.json listing them) and the harness (/harness/).
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.cjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.wasm': 'application/wasm',
  '.png': 'image/png',
  '.ts': 'text/plain; charset=utf-8',
};

/**
 * Starts the server; `mounts` maps URL prefixes ('/www/') to directories. Resolves to { url, close }.
 * `proxy` (optional): a base URL that requests under /v1/ are passed to (the ID service, on the page's origin).
 */
export function serve(mounts, vectorsDir, proxy) {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    let p = decodeURIComponent(url.pathname);
    if (proxy && p.startsWith('/v1/')) {
      const up = http.request(new URL(req.url, proxy), { method: req.method, headers: req.headers }, (r) => {
        res.writeHead(r.statusCode, r.headers);
        r.pipe(res);
      });
      up.on('error', () => {
        res.writeHead(502);
        res.end();
      });
      req.pipe(up);
      return;
    }
    if (p === '/tests/vectors/index.json') {
      const names = fs
        .readdirSync(vectorsDir)
        .filter((f) => f.endsWith('.json'))
        .sort();
      res.writeHead(200, { 'content-type': TYPES['.json'] });
      res.end(JSON.stringify(names));
      return;
    }
    const prefix = Object.keys(mounts).find((m) => p.startsWith(m));
    if (!prefix) {
      res.writeHead(404);
      res.end('not found');
      return;
    }
    const root = path.resolve(mounts[prefix]);
    let file = path.resolve(root, '.' + p.slice(prefix.length - 1));
    if (file !== root && !file.startsWith(root + path.sep)) {
      res.writeHead(403);
      res.end('forbidden');
      return;
    }
    if (fs.existsSync(file) && fs.statSync(file).isDirectory()) file = path.join(file, 'index.html');
    fs.readFile(file, (err, data) => {
      if (err) {
        res.writeHead(404);
        res.end('not found');
        return;
      }
      res.writeHead(200, {
        'content-type': TYPES[path.extname(file)] || 'application/octet-stream',
        'cache-control': 'no-store',
      });
      res.end(data);
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      resolve({ url: `http://127.0.0.1:${port}`, close: () => new Promise((r) => server.close(r)) });
    });
  });
}
