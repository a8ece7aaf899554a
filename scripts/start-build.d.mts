export function buildHash(root: string, inputs?: string[]): string;
export function preparedBuild(options: {
  root: string;
  cacheDir: string;
  compile: (outDir: string) => Promise<void>;
  hash?: string;
  keep?: number;
  idleMs?: number;
}): Promise<string>;
