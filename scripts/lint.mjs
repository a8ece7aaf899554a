#!/usr/bin/env node
// `npm run lint`: ESLint (typed rules, one thread) and `prettier --check` side by side, so the
// formatting check takes the second core instead of adding its time after ESLint's
// (docs/testing.md). ESLint's one thread is the critical path, so Prettier runs at a lower priority:
// it takes what ESLint's garbage-collection threads leave. Prettier keeps a cache of the files it
// found formatted, keyed by their content and its own version and options
// (node_modules/.cache/prettier), so a later run checks only what changed. Each tool's output is
// kept whole and printed when it ends; the exit status is non-zero when either fails.
import { spawn } from 'node:child_process';
import { setPriority } from 'node:os';

const run = (command, args, priority = 0) =>
  new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    if (priority !== 0 && child.pid !== undefined) setPriority(child.pid, priority);
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', (error) => resolve({ command, code: 1, output: `${output}${error.message}\n` }));
    child.on('close', (code, signal) => resolve({ command, code: code ?? (signal ? 1 : 0), output }));
  });

const bin = (name) => new URL(`../node_modules/.bin/${name}`, import.meta.url).pathname;
const results = await Promise.all([
  run(bin('eslint'), ['.']),
  run(bin('prettier'), ['--check', '--cache', '--cache-strategy', 'content', '.'], 10),
]);
for (const { command, code, output } of results) {
  process.stdout.write(`> ${command.split('/').pop()}: ${code === 0 ? 'ok' : `failed (${code})`}\n${output}`);
}
process.exitCode = results.some((result) => result.code !== 0) ? 1 : 0;
