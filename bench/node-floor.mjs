// The floor for any Node proxy on this machine: a bare `node:http` server relaying with undici's
// Pool.dispatch (the layer the gateway, @fastify/reply-from and fetch sit on), no framework, no
// token check, no header rules, no logging. What it costs is the cost of relaying in Node; the
// gateway's own cost is the gap between it and this.
// Usage: node node-floor.mjs <port> <target>, e.g. node node-floor.mjs 9107 http://127.0.0.1:9101
import { createServer } from 'node:http';
import { Pool } from 'undici';

const [port, target] = [Number(process.argv[2]), process.argv[3]];
const PREFIX = '/api/v1/master-data';
// Hop-by-hop headers, dropped both ways. transfer-encoding and expect only on the request: undici
// frames the body itself and rejects both.
const HOP_BY_HOP = new Set(['host', 'connection', 'keep-alive']);
const REQUEST_ONLY = new Set(['transfer-encoding', 'expect']);

const pool = new Pool(target, { connections: 128, pipelining: 1 });

const server = createServer((req, res) => {
  if (!req.url.startsWith(`${PREFIX}/`)) {
    res.writeHead(404).end();
    return;
  }
  const headers = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (!HOP_BY_HOP.has(name) && !REQUEST_ONLY.has(name)) headers[name] = value;
  }
  let abort;
  res.on('close', () => {
    if (!res.writableFinished) abort?.(new Error('client went away'));
  });
  pool.dispatch(
    {
      method: req.method,
      path: req.url.slice(PREFIX.length),
      headers,
      body: req.method === 'GET' || req.method === 'HEAD' ? null : req,
    },
    {
      onConnect(abortRequest) {
        abort = abortRequest;
      },
      onHeaders(status, rawHeaders, resume) {
        const out = [];
        for (let i = 0; i < rawHeaders.length; i += 2) {
          const name = rawHeaders[i].toString('latin1');
          if (HOP_BY_HOP.has(name.toLowerCase())) continue;
          out.push(name, rawHeaders[i + 1].toString('latin1'));
        }
        res.writeHead(status, out);
        // onData returning false pauses the upstream socket; the client draining resumes it.
        res.on('drain', resume);
        return true;
      },
      onData(chunk) {
        return res.write(chunk);
      },
      onComplete() {
        res.end();
      },
      onError(error) {
        if (!res.headersSent) res.writeHead(502).end();
        else res.destroy(error);
      },
    },
  );
});
server.keepAliveTimeout = 65_000;
server.listen(port, '127.0.0.1', () => process.stdout.write(`node floor listening on ${port}\n`));
// Exits (rather than dies) on SIGTERM, so that a `--cpu-prof` run writes its profile.
process.on('SIGTERM', () => process.exit(0));
