// How long TAB completion waits for the service: 2 s unless GDS_COMPLETION_TIMEOUT_MS gives a slow (or loaded)
// service more. A stub service here answers the table list 2.5 s after it is asked.
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { completionWaitMs, dynamicValues } from '../../src/cli/completion-values.js';

let slow: Server;
let base: string;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gds-completion-wait-'));
  slow = createServer((request, response) => {
    setTimeout(() => {
      response.setHeader('content-type', 'application/json');
      response.end(
        JSON.stringify({
          tables: request.url?.startsWith('/api/tables')
            ? [{ id: 'tbl_slow', name: 'orders', environmentLabel: 'dev', state: 'ACTIVE' }]
            : [],
        }),
      );
    }, 2_500);
  });
  await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
  const address = slow.address();
  base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
});

afterAll(async () => {
  slow.closeAllConnections();
  await new Promise<void>((resolve) => slow.close(() => resolve()));
  await rm(dir, { recursive: true, force: true });
});

const tables = (cache: string, env: NodeJS.ProcessEnv) =>
  dynamicValues('tables', '', {
    flags: { base, token: 'cli_completionwait0123456789' },
    version: '0.0.0',
    env: { GDS_CONFIG_DIR: join(dir, 'config'), XDG_CACHE_HOME: join(dir, cache), ...env },
  });

// The two waits (2.5 s and 2 s of a timer each) run side by side.
it.concurrent('waits for the service as long as GDS_COMPLETION_TIMEOUT_MS says', async ({ expect }) => {
  const values = await tables('cache-long', { GDS_COMPLETION_TIMEOUT_MS: '60000' });
  expect(values.map((candidate) => candidate.value)).toEqual(['orders', 'tbl_slow']);
});

it.concurrent('gives up after 2 s without it', async ({ expect }) => {
  await expect(tables('cache-default', {})).rejects.toMatchObject({ code: 'HEADERS_TIMEOUT' });
});

it('holds a wait past what a timer can count to at ten minutes, and ignores what is no positive number', () => {
  expect(completionWaitMs({ GDS_COMPLETION_TIMEOUT_MS: '1e12' })).toBe(600_000);
  expect(completionWaitMs({ GDS_COMPLETION_TIMEOUT_MS: '60000' })).toBe(60_000);
  expect(completionWaitMs({ GDS_COMPLETION_TIMEOUT_MS: 'soon' })).toBe(2_000);
  expect(completionWaitMs({ GDS_COMPLETION_TIMEOUT_MS: '-5' })).toBe(2_000);
});
