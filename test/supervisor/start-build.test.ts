import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as tick } from 'node:timers/promises';
import { describe, test } from 'node:test';
import { buildHash, preparedBuild } from '../../scripts/start-build.mjs';

/** A source tree, and a compile step that writes its output file by file, a turn of the event loop apart. */
function fixture() {
  const root = mkdtempSync(join(tmpdir(), 'gerbang-build-'));
  mkdirSync(join(root, 'src'));
  writeFileSync(join(root, 'src', 'cli.ts'), 'export const version = 1;\n');
  writeFileSync(join(root, 'tsconfig.json'), '{}');
  const cacheDir = join(root, 'cache');
  const compiles: string[] = [];
  /** Called between two files of every compile: what another process could see at that moment. */
  let midway: () => void = () => {};
  const compile = async (outDir: string) => {
    compiles.push(outDir);
    mkdirSync(outDir, { recursive: true });
    const source = readFileSync(join(root, 'src', 'cli.ts'), 'utf8');
    writeFileSync(join(outDir, 'cli.js'), source);
    await tick();
    midway();
    await tick();
    writeFileSync(join(outDir, 'lib.js'), source);
  };
  return {
    root,
    cacheDir,
    compiles,
    compile,
    setMidway: (check: () => void) => (midway = check),
    cleanUp: () => rmSync(root, { recursive: true, force: true }),
  };
}

/** Every build directory in the cache holds its whole output (never one file without the other). */
function assertNoHalfBuild(cacheDir: string) {
  if (!existsSync(cacheDir)) return;
  for (const name of readdirSync(cacheDir).filter((n) => !n.startsWith('.'))) {
    const files = readdirSync(join(cacheDir, name)).sort();
    assert.deepEqual(files, ['cli.js', 'lib.js', 'package.json'], `build ${name} exposed half-written`);
  }
}

describe("npm start's build (scripts/start-build.mjs)", () => {
  test('two starts at once of one tree: neither ever sees a half-written build, both run the same whole one', async () => {
    const f = fixture();
    try {
      f.setMidway(() => assertNoHalfBuild(f.cacheDir));
      const [a, b] = await Promise.all([
        preparedBuild({ root: f.root, cacheDir: f.cacheDir, compile: f.compile }),
        preparedBuild({ root: f.root, cacheDir: f.cacheDir, compile: f.compile }),
      ]);
      assert.equal(a, b);
      assert.equal(f.compiles.length, 2, 'both compiled, each into its own directory');
      assert.notEqual(f.compiles[0], f.compiles[1]);
      assertNoHalfBuild(f.cacheDir);
      assert.deepEqual(
        readdirSync(f.cacheDir).filter((n) => n.startsWith('.')),
        [],
        "the loser's temporary directory is removed",
      );
    } finally {
      f.cleanUp();
    }
  });

  test('a build in use is never rewritten: the same tree reuses it, a changed tree builds elsewhere', async () => {
    const f = fixture();
    try {
      const first = await preparedBuild({ root: f.root, cacheDir: f.cacheDir, compile: f.compile });
      const before = { inode: statSync(join(first, 'cli.js')).ino, text: readFileSync(join(first, 'cli.js'), 'utf8') };
      f.setMidway(() => {
        // While the next build is being written, the running one is exactly as it was.
        assert.equal(statSync(join(first, 'cli.js')).ino, before.inode);
        assert.equal(readFileSync(join(first, 'cli.js'), 'utf8'), before.text);
      });
      assert.equal(await preparedBuild({ root: f.root, cacheDir: f.cacheDir, compile: f.compile }), first);
      assert.equal(f.compiles.length, 1, 'reused, not compiled again');
      writeFileSync(join(f.root, 'src', 'cli.ts'), 'export const version = 2;\n');
      const second = await preparedBuild({ root: f.root, cacheDir: f.cacheDir, compile: f.compile });
      assert.notEqual(second, first);
      assert.equal(readFileSync(join(first, 'cli.js'), 'utf8'), before.text, 'the first build untouched');
      assert.equal(statSync(join(first, 'cli.js')).ino, before.inode);
      assert.match(readFileSync(join(second, 'cli.js'), 'utf8'), /version = 2/);
    } finally {
      f.cleanUp();
    }
  });

  test('keeps the three builds used last, and an older one used within `idleMs` (a test run holding its tree)', async () => {
    const f = fixture();
    const build = (version: number, idleMs?: number) => {
      writeFileSync(join(f.root, 'src', 'cli.ts'), `export const version = ${version};\n`);
      return preparedBuild({ root: f.root, cacheDir: f.cacheDir, compile: f.compile, ...(idleMs === undefined ? {} : { idleMs }) });
    };
    const usedAgo = (dir: string, ms: number) => utimesSync(dir, new Date(Date.now() - ms), new Date(Date.now() - ms));
    try {
      const idle = await build(1);
      usedAgo(idle, 2 * 3_600_000);
      const held = await build(2);
      usedAgo(held, 60_000);
      const [third, fourth] = [await build(3), await build(4)];
      const fifth = await build(5, 10 * 60_000);
      assert.equal(existsSync(idle), false, 'beyond the three, unused for two hours: removed');
      assert.ok(existsSync(held), 'beyond the three, but used a minute ago: kept');
      for (const kept of [third, fourth, fifth]) assert.ok(existsSync(kept));
      const sixth = await build(6);
      assert.deepEqual(
        [held, third, fourth, fifth, sixth].map((dir) => existsSync(dir)),
        [false, false, true, true, true],
        'without idleMs (npm start), only the three used last',
      );
    } finally {
      f.cleanUp();
    }
  });

  test('the hash follows sources and settings; a failed compile leaves nothing behind', async () => {
    const f = fixture();
    try {
      const h1 = buildHash(f.root);
      writeFileSync(join(f.root, 'tsconfig.json'), '{"compilerOptions":{}}');
      assert.notEqual(buildHash(f.root), h1);
      await assert.rejects(
        preparedBuild({
          root: f.root,
          cacheDir: f.cacheDir,
          compile: async (out) => {
            mkdirSync(out);
            writeFileSync(join(out, 'cli.js'), '');
            throw new Error('type errors');
          },
        }),
        /type errors/,
      );
      assert.deepEqual(readdirSync(f.cacheDir), []);
    } finally {
      f.cleanUp();
    }
  });
});
