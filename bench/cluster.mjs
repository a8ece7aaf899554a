// Runs one of the bench's Node proxies (express-proxy.mjs, node-floor.mjs) in several worker
// processes sharing its port with node:cluster, for the "one worker per core" round: the same
// arrangement GATEWAY_WORKERS gives the gateway and `worker_processes auto` gives nginx.
// Usage: node cluster.mjs <workers> <script> <script arguments...>
import cluster from 'node:cluster';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [workers, script, ...args] = process.argv.slice(2);
if (cluster.isPrimary) {
  for (let i = 0; i < Number(workers); i += 1) cluster.fork();
  // Workers exit when their primary's IPC channel closes.
  process.on('SIGTERM', () => process.exit(0));
} else {
  process.argv = [process.argv[0], script, ...args];
  await import(pathToFileURL(resolve(script)).href);
}
