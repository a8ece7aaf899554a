#!/usr/bin/env node
// Builds the web console (web/src) into `<outDir>`: content-hashed app-<hash>.js / .css and an
// index.html naming them (no inline script, so a strict Content-Security-Policy holds).
// Used by `npm run build` (into dist/console) and by start.mjs (into each cached build).
import { build } from 'esbuild';
import { copyFileSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));

export async function buildConsole(outDir) {
  mkdirSync(outDir, { recursive: true });
  await build({
    entryPoints: { app: join(root, 'web', 'src', 'main.ts'), style: join(root, 'web', 'src', 'style.css') },
    bundle: true,
    minify: true,
    format: 'esm',
    target: 'es2022',
    entryNames: '[name]-[hash]',
    outdir: join(outDir, 'assets'),
    logLevel: 'warning',
  });
  // The icon keeps its name: browsers ask for it by itself (/favicon.ico), not only from the page.
  copyFileSync(join(root, 'web', 'favicon.svg'), join(outDir, 'assets', 'favicon.svg'));
  const assets = readdirSync(join(outDir, 'assets'));
  const js = assets.find((name) => /^app-.*\.js$/.test(name));
  const css = assets.find((name) => /^style-.*\.css$/.test(name));
  writeFileSync(
    join(outDir, 'index.html'),
    `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Gerbang console</title><link rel="icon" href="/console/assets/favicon.svg" type="image/svg+xml"><link rel="stylesheet" href="/console/assets/${css}">
<script type="module" src="/console/assets/${js}"></script></head>
<body><div id="app"></div></body></html>
`,
  );
  return outDir;
}

if (process.argv[1] && basename(process.argv[1]) === 'build-console.mjs')
  await buildConsole(resolve(process.argv[2] ?? join(root, 'dist', 'console')));
