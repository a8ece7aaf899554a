#!/usr/bin/env node
// Keeps one CPU busy (pin it with taskset): a neighbour that takes the other core's time as the logs
// service's ingestion does, to see what that alone costs the gateway (bench/self-watch.mjs).
process.on('SIGTERM', () => process.exit(0));
for (;;) {
  const until = Date.now() + 50;
  while (Date.now() < until);
  await new Promise((resolve) => setImmediate(resolve));
}
