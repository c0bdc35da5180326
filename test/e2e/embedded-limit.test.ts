// `gds gate run` against a reference server on PGlite whose table is past --embedded-row-limit: the
// server's 422 `beyond_embedded_database` reaches the user as one clear error on stderr, naming
// --database-url, exit code 7 (refused, as every 422), nothing on stdout; with --json an `{"error":…}` line
// carrying the code. A sampled run of the same table is not refused. gds runs in the test process.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliResult } from '../cli/helpers/cli-process.js';
import { runInProcess } from '../helpers/run-in-process.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from '../helpers/server.js';

let server: TestServer;
let dir: string;

beforeAll(async () => {
  server = await startTestServer({ embeddedRowLimit: 2 });
  dir = await mkdtemp(join(tmpdir(), 'gds-e2e-embedded-'));
});

afterAll(async () => {
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

const gds = (args: string[]): Promise<CliResult> =>
  runInProcess(args, {
    env: {
      GDS_CONFIG_DIR: join(dir, 'gds'),
      GDS_SECRET_STORAGE: 'file',
      SERVICE_API_URL: server.url,
      SERVICE_TOKEN: server.user('OWNER').cliToken,
    },
  });

describe('gds gate run beyond the embedded database', () => {
  it('prints the refusal on stderr naming --database-url and exits 7', async () => {
    const result = await gds(['gate', 'run', 'orders']);
    expect(result.code).toBe(7);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('beyond the embedded database');
    expect(result.stderr).toContain('start the server with --database-url');
  });

  it('--json: one error line with the code, exit 7', async () => {
    const result = await gds(['gate', 'run', 'orders', '--json']);
    expect(result.code).toBe(7);
    const errorLine = [result.stdout, result.stderr]
      .join('\n')
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { error?: { code?: string; message?: string } })
      .find((line) => line.error);
    expect(errorLine?.error?.code).toBe('beyond_embedded_database');
    expect(errorLine?.error?.message).toContain('--database-url');
  });

  it('runs a sampled gate run of the same table', async () => {
    const result = await gds(['gate', 'run', 'orders', '--sample', 'head:1']);
    expect(result.stderr).not.toContain('beyond the embedded database');
    expect(result.code).not.toBe(7);
    expect(result.stdout).toContain('sample'); // the run's results, over its sample
  });
});
