#!/usr/bin/env node
// `npm run lint`: ESLint (typed rules, one thread) and `prettier --check` side by side, so the
// formatting check takes the second core instead of adding its time after ESLint's
// (docs/testing.md). Each tool's output is kept whole and printed when it ends; the exit status
// is non-zero when either fails.
import { spawn } from 'node:child_process';

const run = (command, args) =>
  new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', (error) => resolve({ command, code: 1, output: `${output}${error.message}\n` }));
    child.on('close', (code, signal) => resolve({ command, code: code ?? (signal ? 1 : 0), output }));
  });

const bin = (name) => new URL(`../node_modules/.bin/${name}`, import.meta.url).pathname;
const results = await Promise.all([run(bin('eslint'), ['.']), run(bin('prettier'), ['--check', '.'])]);
for (const { command, code, output } of results) {
  process.stdout.write(`> ${command.split('/').pop()}: ${code === 0 ? 'ok' : `failed (${code})`}\n${output}`);
}
process.exitCode = results.some((result) => result.code !== 0) ? 1 : 0;
