// The build `npm start` runs (and the tests', scripts/test-build.mjs): compiled into a fresh
// temporary directory, then renamed whole into a place named by the hash of what it was built from.
// A build is never rewritten, so a process loading one never reads a half-written file, and two
// starts at once of one checkout (two instances, two units on one host) either share a finished
// build or each make their own.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

function filesUnder(root, dir) {
  return readdirSync(join(root, dir), { withFileTypes: true })
    .flatMap((entry) => (entry.isDirectory() ? filesUnder(root, join(dir, entry.name)) : [join(dir, entry.name)]))
    .sort();
}

/** SHA-256 over the sources, the compiler settings and the locked dependencies (paths and contents). */
export function buildHash(
  root,
  inputs = ['src', 'web', 'scripts/build-console.mjs', 'tsconfig.json', 'tsconfig.build.json', 'package-lock.json'],
) {
  const hash = createHash('sha256');
  for (const input of inputs) {
    if (!existsSync(join(root, input))) continue;
    const files = statSync(join(root, input)).isDirectory() ? filesUnder(root, input) : [input];
    for (const file of files)
      hash
        .update(`${relative(root, join(root, file))}\0`)
        .update(readFileSync(join(root, file)))
        .update('\0');
  }
  return hash.digest('hex').slice(0, 24);
}

/**
 * The directory of the build of `root` as it is now: an existing one is reused; otherwise
 * `compile(outDir)` fills a fresh temporary directory, which is then renamed into place (rename(2)
 * is atomic; if another start got there first, its build is used and ours removed). Builds used
 * least recently beyond `keep`, and not used for `idleMs`, are removed.
 */
export async function preparedBuild({ root, cacheDir, compile, hash = buildHash(root), keep = 3, idleMs = 0 }) {
  const target = join(cacheDir, hash);
  mkdirSync(cacheDir, { recursive: true });
  if (!existsSync(target)) {
    const temporary = join(cacheDir, `.tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
    try {
      await compile(temporary);
      // The build lives outside the package's directory tree as Node sees it (under node_modules):
      // it says itself that its files are ES modules.
      writeFileSync(join(temporary, 'package.json'), '{ "type": "module" }\n');
      try {
        renameSync(temporary, target);
      } catch (error) {
        if (!['ENOTEMPTY', 'EEXIST'].includes(error.code) || !existsSync(target)) throw error;
      }
    } finally {
      rmSync(temporary, { recursive: true, force: true });
    }
  }
  const now = new Date();
  utimesSync(target, now, now);
  prune(cacheDir, keep, idleMs, hash);
  return target;
}

function prune(cacheDir, keep, idleMs, current) {
  const builds = readdirSync(cacheDir)
    .filter((name) => !name.startsWith('.') && name !== current)
    .map((name) => ({ name, used: statSync(join(cacheDir, name)).mtimeMs }))
    .sort((a, b) => b.used - a.used);
  for (const { name, used } of builds.slice(Math.max(0, keep - 1)))
    if (used <= Date.now() - idleMs) rmSync(join(cacheDir, name), { recursive: true, force: true });
}
