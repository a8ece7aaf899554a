// The tests as plain node runs them (docs/testing.md, "How the tests run"): src/ and test/ compiled
// file by file by esbuild, with the settings tsx uses, into a copy of the tree under
// node_modules/.cache. Loading the services through tsx's loader hooks cost each test process more
// CPU than its compiled modules; compiled once per change, no test process runs the hooks.
//
// The copy keeps the layout, so relative imports and paths made from import.meta.url resolve as in
// the checkout: each .ts file has its .js (and a source map to the .ts, for stack traces) beside a
// link to the .ts itself; every other file, and every top-level entry of the checkout but src/,
// test/, node_modules/ and package.json, is a link to the original. A test's cwd stays the checkout.
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, realpathSync, symlinkSync, utimesSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative, resolve, sep } from 'node:path';
import { buildHash, preparedBuild } from './start-build.mjs';

/** What is compiled; everything else is linked. */
const COMPILED = ['src', 'test'];
/** Not linked at the top (nor dot files): the copy's own package.json says its files are ES modules (start-build.mjs). */
const NOT_LINKED = new Set([...COMPILED, 'node_modules', 'package.json']);

const linked = (root) => readdirSync(root).filter((entry) => !NOT_LINKED.has(entry) && !entry.startsWith('.'));

function compiledFiles(root, dir, outDir) {
  mkdirSync(join(outDir, dir), { recursive: true });
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return compiledFiles(root, path, outDir);
    symlinkSync(join(root, path), join(outDir, path));
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

async function compile(root, outDir) {
  const { build } = await import('esbuild');
  mkdirSync(outDir, { recursive: true });
  for (const entry of linked(root)) symlinkSync(join(root, entry), join(outDir, entry));
  const entryPoints = COMPILED.flatMap((dir) => compiledFiles(root, dir, outDir));
  await build({
    // Real paths, as node sees the modules (node_modules may be a link): the source maps' relative
    // paths to the .ts files hold from where node loads the .js.
    absWorkingDir: realpathSync(root),
    entryPoints,
    outdir: realpathSync(outDir),
    outbase: '.',
    bundle: false,
    // As tsx compiles a module (its defaults, and tsconfig.json, which esbuild reads itself).
    format: 'esm',
    platform: 'node',
    target: `node${process.versions.node}`,
    keepNames: true,
    sourcemap: 'linked',
    sourcesContent: false,
    logLevel: 'warning',
  });
}

/** A run marks its tree used this often; a tree unmarked for IDLE_MS may be removed (the three last used stay). */
const HOLD_MS = 60_000;
const IDLE_MS = 10 * HOLD_MS;

/**
 * The directory of the compiled tree of `root` as it is now, built if needed, and held while this
 * process runs: a run over an older tree (a long `npm test` while files are edited and run one by
 * one) keeps it. Builds are named by a hash of the sources, the top-level entries, node's and
 * esbuild's versions, in a folder of their own for each checkout (node_modules may be shared); a
 * build is never rewritten (start-build.mjs).
 */
export async function compiledTree(root) {
  const esbuild = createRequire(join(root, 'package.json'))('esbuild/package.json').version;
  const hash = createHash('sha256')
    .update(buildHash(root, [...COMPILED, 'tsconfig.json', 'scripts/test-build.mjs']))
    .update(`\0${linked(root).sort().join('\0')}\0${process.version}\0${esbuild}`)
    .digest('hex')
    .slice(0, 24);
  const checkout = createHash('sha256').update(resolve(root)).digest('hex').slice(0, 12);
  const tree = await preparedBuild({
    root,
    cacheDir: join(root, 'node_modules', '.cache', 'gerbang-test', checkout),
    compile: (outDir) => compile(root, outDir),
    hash,
    idleMs: IDLE_MS,
  });
  setInterval(() => {
    try {
      utimesSync(tree, new Date(), new Date());
    } catch {
      // Removed by hand: the run goes on and reports what fails.
    }
  }, HOLD_MS).unref();
  return tree;
}

/** Where a file or folder of the checkout's src/ or test/ is in the compiled tree (.ts → .js); anything else as given. */
export function compiledPath(root, tree, path) {
  const inside = relative(root, resolve(root, path));
  if (!COMPILED.some((dir) => inside === dir || inside.startsWith(`${dir}${sep}`))) return path;
  return relative(root, join(tree, inside.replace(/\.ts$/, '.js')));
}
