#!/usr/bin/env node
// An OTLP/HTTP receiver that reads each request body and answers 200 with nothing stored: the
// gateway's telemetry goes somewhere that costs its core nothing, so bench/self-watch.mjs can tell
// the gateway's own shipping cost from what the logs service's work on the other core costs it.
//   node bench/otlp-sink.mjs PORT
import { createServer } from 'node:http';

const port = Number(process.argv[2] ?? 9205);
let requests = 0;
let bytes = 0;
createServer((request, response) => {
  request.on('data', (chunk) => (bytes += chunk.length));
  request.on('end', () => {
    requests += 1;
    response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
}).listen(port, '127.0.0.1');
process.on('SIGTERM', () => {
  process.stderr.write(`otlp-sink: ${requests} requests, ${bytes} bytes\n`);
  process.exit(0);
});
