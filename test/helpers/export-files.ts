// The set-up of the tests of `gds records export` into files (test/e2e/export-*): an owner's token that reads
// one table, and a scratch folder for the file, removed after the file's tests, with a fresh folder in it for
// each test so one test's files never meet another's.
//
//   const folders = useScratchFolders('gds-export-mode-');
//   token = await tableReadToken(server, 'export-mode', table);
//   const folder = await folders.fresh();
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import type { TestServer } from './server.js';

/** An integration token of OWNER (dev) named `name`, that reads `tableId` and nothing else. */
export async function tableReadToken(
  server: Pick<TestServer, 'issueToken'>,
  name: string,
  tableId: string,
): Promise<string> {
  const issued = await server.issueToken('OWNER', {
    name,
    env: 'dev',
    scopes: [{ tableId, permissions: ['read'] }],
  });
  return issued.tokens.accessToken;
}

export interface ScratchFolders {
  /** The scratch folder itself. */
  root(): string;
  /** A new empty folder in it. */
  fresh(): Promise<string>;
}

/** A scratch folder (`prefix…` in the system's temporary folder) for the enclosing file or describe block. */
export function useScratchFolders(prefix: string): ScratchFolders {
  let dir: string | undefined;
  let folders = 0;
  const root = () => {
    if (dir === undefined) throw new Error('the scratch folder of this block was not made');
    return dir;
  };
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), prefix));
  });
  afterAll(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });
  return {
    root,
    async fresh() {
      folders += 1;
      const folder = join(root(), `t${folders}`);
      await mkdir(folder);
      return folder;
    },
  };
}
