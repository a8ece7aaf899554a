// The Fastify peer of the proxy benchmark: a bare Fastify + @fastify/reply-from (undici) proxy, no
// token check, no header rules, no logging. Not the floor for a Node proxy: node-floor.mjs
// (node:http + undici dispatch) is that.
// Usage: node fastify-peer.mjs <port> <target>
import Fastify from 'fastify';
import replyFrom from '@fastify/reply-from';

const [port, target] = [Number(process.argv[2]), process.argv[3]];
const app = Fastify({ logger: false });
app.removeAllContentTypeParsers();
// The body stays a stream: reply-from relays request.body when it is a stream. (done(null) would
// leave request.body undefined and reply-from would send an empty body upstream.)
app.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
await app.register(replyFrom, { base: target, undici: { connections: 128, pipelining: 1 } });
app.all('/api/v1/master-data/*', (request, reply) => reply.from(request.url.slice('/api/v1/master-data'.length)));
await app.listen({ port, host: '127.0.0.1' });
process.stdout.write(`fastify peer listening on ${port}\n`);
