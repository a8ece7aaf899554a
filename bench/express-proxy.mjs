// Express + http-proxy-middleware with a keep-alive agent: the "typical Node proxy" peer.
import { Agent } from 'node:http';
import express from 'express';
import { createProxyMiddleware } from 'http-proxy-middleware';

const [port, target] = [Number(process.argv[2]), process.argv[3]];
const app = express();
app.use('/api/v1/master-data', createProxyMiddleware({ target, agent: new Agent({ keepAlive: true, maxSockets: 128 }) }));
app.listen(port, '127.0.0.1', () => process.stdout.write(`express listening on ${port}\n`));
