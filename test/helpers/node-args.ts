import { isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The tree this file was loaded from: the compiled copy of scripts/test-build.mjs, or the checkout under tsx. */
const compiled = import.meta.url.endsWith('.js');
const root = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Node's arguments that run a module of the checkout as a process of its own (`src/cli.ts`, from the
 * checkout's root, or an absolute path made from a test's import.meta.dirname), before the module's
 * own arguments: as the tests run, its compiled copy when they run compiled, through tsx otherwise.
 */
export function nodeArgs(module: string): string[] {
  const path = isAbsolute(module) ? module : join(root, module);
  return compiled ? ['--enable-source-maps', path.replace(/\.ts$/, '.js')] : ['--import', 'tsx', path];
}

/** The CLI's file name as its process reports itself (the data lock's owner line names it). */
export const CLI_FILE = compiled ? 'cli.js' : 'cli.ts';
