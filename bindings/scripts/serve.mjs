// A static file server of the repository for the playground and the browser tests, on 127.0.0.1
// only. Any static server of the repository's root works (module workers and fetch need http:, not
// file:; the playground imports the dashboard's view modules from src/dashboard/, inside the
// engine crate); this one needs nothing installed.
//   node scripts/serve.mjs [port]   then open http://127.0.0.1:<port>/bindings/playground/
import { createServer } from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const TYPES = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8', '.json': 'application/json', '.wasm': 'application/wasm',
  '.tiktoken': 'text/plain; charset=utf-8', '.ts': 'text/plain; charset=utf-8',
};

/** What is sent gzipped to a browser that accepts it: the engine and the rank files (7 MB → 3 MB). */
const COMPRESSED = new Set(['.wasm', '.tiktoken', '.ranks', '.js', '.mjs', '.json', '.jsonl']);

/** Serve the files under `root` on 127.0.0.1 (`port` 0: any free one). Resolves to { url, close }. */
export async function serve(root, port = 0) {
  const top = path.resolve(root);
  const gzipped = new Map();
  const server = createServer(async (req, res) => {
    try {
      const { pathname } = new URL(req.url ?? '/', 'http://127.0.0.1');
      let file = path.join(top, decodeURIComponent(pathname));
      if (file !== top && !file.startsWith(top + path.sep)) throw Object.assign(new Error('outside'), { status: 403 });
      let info = await stat(file);
      if (info.isDirectory()) {
        file = path.join(file, 'index.html');
        info = await stat(file);
      }
      // Rank files never change: let the browser cache them, as a real deployment would. The rest
      // is revalidated on every use (a rebuilt .wasm is seen at once): a 304 keeps the browser's
      // cached copy, and with it the code it compiled from a .wasm or a module.
      const cache = ['.tiktoken', '.ranks'].includes(path.extname(file)) ? 'max-age=86400, immutable' : 'no-cache';
      const etag = `W/"${info.size.toString(16)}-${Math.floor(info.mtimeMs).toString(16)}"`;
      const headers = {
        'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream', 'cache-control': cache, vary: 'accept-encoding', etag,
      };
      if (req.headers['if-none-match'] === etag) {
        res.writeHead(304, headers);
        res.end();
        return;
      }
      let body = await readFile(file);
      if (COMPRESSED.has(path.extname(file)) && /\bgzip\b/.test(req.headers['accept-encoding'] ?? '')) {
        // Compressed once per content, as a deployment would precompress them.
        const key = `${file}:${body.length}`;
        if (!gzipped.has(key)) gzipped.set(key, gzipSync(body, { level: 9 }));
        body = gzipped.get(key);
        headers['content-encoding'] = 'gzip';
      }
      res.writeHead(200, headers);
      res.end(body);
    } catch (error) {
      res.writeHead(error.status ?? 404, { 'content-type': 'text/plain' });
      res.end(error.status === 403 ? 'forbidden' : 'not found');
    }
  });
  await new Promise((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', resolve));
  const { port: bound } = server.address();
  return { url: `http://127.0.0.1:${bound}`, close: () => new Promise((resolve) => server.close(resolve)) };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const repository = fileURLToPath(new URL('../../', import.meta.url));
  const { url } = await serve(repository, Number(process.argv[2] ?? 8080));
  console.log(`serving ${repository} on ${url}; the playground is ${url}/bindings/playground/`);
}
