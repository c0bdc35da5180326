// A test file that mocks a module (vi.mock) runs in a process of its own (vitest.config.ts's ISOLATED): in the
// shared processes (isolate off) a module an earlier file loaded is not mocked for it, and its mock is what a
// later file gets (test/auth/refresh-lost-lock-keychain.test.ts's fake keychain failed its own cases and
// refresh-keychain-silent's when the two shared a process).
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');

/** A string list of vitest.config.ts, as written there (`const NAME = [ '…', … ];`). */
function listOf(config: string, name: string): string[] {
  const body = new RegExp(`const ${name} = \\[([^\\]]*)\\]`).exec(config)?.[1];
  if (body === undefined) throw new Error(`vitest.config.ts has no ${name}`);
  return [...body.matchAll(/'([^']+)'/g)].map((m) => m[1] ?? '');
}

it('every test file under a shared folder that calls vi.mock is in ISOLATED', async () => {
  const config = await readFile(path.join(root, 'vitest.config.ts'), 'utf8');
  const isolated = new Set(listOf(config, 'ISOLATED'));
  const mocking: string[] = [];
  for (const dir of listOf(config, 'SHARED_DIRS')) {
    const files = await readdir(path.join(root, 'test', dir), { recursive: true }).catch(() => []);
    for (const file of files.filter((f) => f.endsWith('.test.ts'))) {
      const relative = path.posix.join('test', dir, file.split(path.sep).join('/'));
      if (/\bvi\.mock\(/.test(await readFile(path.join(root, relative), 'utf8'))) mocking.push(relative);
    }
  }
  expect(mocking.length).toBeGreaterThan(0);
  expect(mocking.filter((file) => !isolated.has(file))).toEqual([]);
});
