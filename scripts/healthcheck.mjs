#!/usr/bin/env node
// Container health check (Dockerfile HEALTHCHECK, compose): exit 0 when every given port's /healthz
// answers 200 within 3 s, else 1. Ports: the arguments, else GATEWAY_PORT and LOGS_PORT (8080, 8081),
// for `cli.js all`. Only 127.0.0.1 is asked.
const ports = process.argv.length > 2 ? process.argv.slice(2) : [process.env.GATEWAY_PORT ?? '8080', process.env.LOGS_PORT ?? '8081'];
const healthy = await Promise.all(
  ports.map((port) =>
    fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(3000) }).then(
      (response) => response.status === 200,
      () => false,
    ),
  ),
);
process.exit(healthy.every(Boolean) ? 0 : 1);
