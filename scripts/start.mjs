#!/usr/bin/env node
// `npm start`: builds (see start-build.mjs: never rewriting a build another process loads), then
// runs the CLI from that build: `all` unless another command is given (`npm start -- logs`).
// `npm run build` still makes dist/ for production (`node dist/cli.js gateway|logs`).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { preparedBuild } from './start-build.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

async function compile(outDir) {
  await new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json'), '--outDir', outDir], {
      cwd: root,
      stdio: 'inherit',
    });
    child.once('error', reject);
    child.once('exit', (code, signal) =>
      code === 0 ? resolve() : reject(new Error(`the TypeScript build failed (${signal ?? `status ${code}`})`)),
    );
  });
  // The web console (docs/console.md), beside the compiled service as its routes expect.
  if (existsSync(join(root, 'web', 'src'))) await (await import('./build-console.mjs')).buildConsole(join(outDir, 'console'));
}

const build = await preparedBuild({
  root,
  cacheDir: process.env.GERBANG_BUILD_CACHE || join(root, 'node_modules', '.cache', 'gerbang-start'),
  compile,
});
const cli = join(build, 'cli.js');
process.argv = [process.argv[0], cli, ...(process.argv.length > 2 ? process.argv.slice(2) : ['all'])];
await import(pathToFileURL(cli).href);
