// The upstream of the proxy benchmark: a plain Node HTTP server with keep-alive.
// GET /1k answers 1 KiB; POST /10k reads the body and answers a short JSON.
import { createServer } from 'node:http';

const port = Number(process.argv[2] ?? 9001);
const oneKib = Buffer.from(JSON.stringify({ data: 'x'.repeat(1024 - 11) }));
const server = createServer((req, res) => {
  if (req.method === 'GET') {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': oneKib.length });
    res.end(oneKib);
    return;
  }
  let length = 0;
  req.on('data', (chunk) => (length += chunk.length));
  req.on('end', () => {
    const body = `{"received":${length}}`;
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
});
server.keepAliveTimeout = 65_000;
server.listen(port, '127.0.0.1', () => process.stdout.write(`upstream listening on ${port}\n`));
