// The floor for a Node proxy on this machine: Fastify + @fastify/reply-from (undici), no token
// check, no header rules, no logging. The gateway's own cost is the gap between it and this.
import Fastify from 'fastify';
import replyFrom from '@fastify/reply-from';

const [port, target] = [Number(process.argv[2]), process.argv[3]];
const app = Fastify({ logger: false });
app.removeAllContentTypeParsers();
app.addContentTypeParser('*', (_request, _payload, done) => done(null));
await app.register(replyFrom, { base: target, undici: { connections: 128, pipelining: 1 } });
app.all('/api/v1/master-data/*', (request, reply) => reply.from(request.url.slice('/api/v1/master-data'.length)));
await app.listen({ port, host: '127.0.0.1' });
process.stdout.write(`fastify floor listening on ${port}\n`);
