// Every kind of error the CLI can end with has the same fields in both modes: under --json one
// {"error":{code,message,suggestion,details}} line on stderr; in human mode "Error: <message>", the
// details that matter (gate1.yml diagnostics) and the suggestion on stderr. Same exit code, stdout empty.
// gds in the test process (runInProcess) against a real server.
import { chmod, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliResult } from '../cli/helpers/cli-process.js';
import { runInProcess } from '../helpers/run-in-process.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';

let server: TestServer;
let dir: string;

beforeAll(async () => {
  server = await startTestServer();
  dir = await mkdtemp(join(tmpdir(), 'gds-e2e-errors-'));
});

afterAll(async () => {
  await server?.close();
});

interface ErrorBody {
  code: string;
  message: string;
  suggestion: string | null;
  details: unknown;
}

interface Case {
  name: string;
  exit: number;
  code: string;
  args: () => Promise<string[]>;
  env?: () => Promise<Record<string, string>>;
  /** What the details must carry, and a line human mode must show beyond message and suggestion. */
  details?: (t: { tableId: string }) => unknown;
  humanLine?: string;
}

const owner = () => server.user('OWNER').cliToken;
const customers = () => server.table('customers').id;

const cases: Case[] = [
  {
    name: 'usage (a missing flag, in gds words)',
    exit: 2,
    code: 'usage',
    args: async () => ['reject', 't_1'],
  },
  {
    name: '401 (a refused token)',
    exit: 3,
    code: 'invalid_token',
    args: async () => ['list'],
    env: async () => ({ SERVICE_TOKEN: 'cli_not-a-real-token-0123456789' }),
  },
  {
    name: '403 (a MANAGEMENT token without the scope)',
    exit: 4,
    code: 'missing_scope',
    args: async () => ['audit', 'list'],
    env: async () => ({
      SERVICE_TOKEN: (
        await server.issueToken('OWNER', {
          name: 'members-only',
          env: '*',
          scopes: ['workspace:read:members'],
        })
      ).tokens.accessToken,
    }),
    details: () => ({ server: { requiredScope: 'workspace:read:audit' } }),
  },
  {
    name: '404 (an unknown recertification request)',
    exit: 5,
    code: 'recertification_request_not_found',
    args: async () => ['recertification', 'dismiss', 'rr_nope', '--reason', 'x'],
  },
  {
    name: '409 (a name collision carries the existing id)',
    exit: 6,
    code: 'name_conflict',
    args: async () => {
      const file = join(dir, 'customers.sql');
      await writeFile(file, 'CREATE VIEW analytics_dev.customers AS SELECT id, email FROM raw.customers;\n');
      return ['push', file];
    },
    details: () => ({ existingId: customers() }),
  },
  {
    // gate apply checks the columns against the table before sending (as gate validate TABLE does).
    name: '2 (a gate1.yml naming a column the table lacks: refused before sending, its diagnostics)',
    exit: 2,
    code: 'invalid_gate1',
    args: async () => {
      const file = join(dir, 'gate1.yml');
      await writeFile(
        file,
        'patternChecks:\n  - name: a\n    column: nope\n    regex: "^a$"\n    severity: HARD_FAIL\n',
      );
      return ['gate', 'apply', customers(), '-f', file];
    },
    details: () => ({ diagnostics: [expect.objectContaining({ line: 3, column: 13 })] }),
    humanLine: 'gate1.yml:3:13 error patternChecks[0].column: the table has no column "nope"',
  },
  {
    name: 'network (nothing listens at the base URL)',
    exit: 9,
    code: 'unreachable',
    args: async () => ['list'],
    env: async () => ({ SERVICE_API_URL: 'http://127.0.0.1:9' }),
  },
];

async function gds(args: string[], env: Record<string, string>): Promise<CliResult> {
  return runInProcess(args, {
    env: {
      GDS_CONFIG_DIR: join(dir, 'config'),
      GDS_SECRET_STORAGE: 'file',
      SERVICE_API_URL: server.url,
      SERVICE_TOKEN: owner(),
      ...env,
    },
  });
}

describe('one error shape in both modes', () => {
  it.each(cases)('$name', async (c) => {
    const args = await c.args();
    const env = (await c.env?.()) ?? {};
    const json = await gds([...args, '--json'], env);
    const human = await gds(args, env);
    for (const r of [json, human]) expect(r).toMatchObject({ code: c.exit, stdout: '' });

    const lines = json.stderr.split('\n').filter((l) => l !== '');
    expect(lines).toHaveLength(1);
    const body = (JSON.parse(lines[0] ?? '') as { error: ErrorBody }).error;
    expect(Object.keys(body)).toEqual(['code', 'message', 'suggestion', 'details']);
    expect(body.code).toBe(c.code);
    // The specific cause, without the HTTP request as a tail.
    expect(body.message).not.toMatch(/\(\d{3} on [A-Z]+ \//);
    expect(body.suggestion).toEqual(expect.any(String));
    if (c.details) expect(body.details).toMatchObject(c.details({ tableId: customers() }) as object);

    expect(human.stderr.startsWith(`Error: ${body.message}\n`)).toBe(true);
    expect(human.stderr).toContain(`${body.suggestion}\n`);
    if (c.humanLine) expect(human.stderr).toContain(c.humanLine);
  });
});

describe('gate validate and the service agree', () => {
  it('a file the service refuses for its columns is invalid for gate validate <tableId> and gate apply too', async () => {
    const file = join(dir, 'columns.yml');
    const content = 'fieldOverrides:\n  - field: nope\n    nullRate: { warn: 0.1, fail: 0.2 }\n';
    await writeFile(file, content);
    const refused = await server.request('PUT', `/api/tables/${customers()}/gate1`, {
      token: owner(),
      body: { content },
    });
    expect(refused.status).toBe(400);
    const served = (refused.body as { error: { details: { diagnostics: unknown[] } } }).error.details
      .diagnostics;
    const validated = await gds(['gate', 'validate', customers(), '-f', file, '--json'], {});
    expect(validated.code).toBe(2);
    // gate apply refuses it before sending, with the same diagnostics.
    const applied = await gds(['gate', 'apply', customers(), '-f', file, '--json'], {});
    expect(applied.code).toBe(2);
    const appliedLocally = (
      JSON.parse(applied.stderr) as {
        error: { details: { diagnostics: Array<{ code: string; line: number }> } };
      }
    ).error.details.diagnostics;
    expect(appliedLocally.map((d) => [d.code, d.line])).toEqual(
      (served as Array<{ code: string; line: number }>).map((d) => [d.code, d.line]),
    );
    const local = validated.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { code?: string; line?: number; column?: number });
    const pick = (d: { code?: string; line?: number; column?: number }) => [d.code, d.line, d.column];
    expect(local.filter((d) => d.code !== undefined).map(pick)).toEqual(
      (served as Array<{ code: string; line: number; column: number }>).map(pick),
    );
  });
});

describe('warnings under --json', () => {
  it('are {"warning":{"message"}} lines on stderr, like errors: every stderr line parses', async () => {
    const config = join(dir, 'warn-config');
    const saved = await runInProcess(
      ['auth', 'set', '--token', owner(), '--base', server.url, '--profile', 'saved', '--no-verify'],
      { env: { GDS_CONFIG_DIR: config, GDS_SECRET_STORAGE: 'file' } },
    );
    expect(saved.code, saved.stderr).toBe(0);
    await chmod(join(config, 'config.json'), 0o644);
    // SERVICE_TOKEN and SERVICE_API_URL win over --profile (said in a warning); the config read on the way
    // had mode 644 (said in another).
    for (const args of [
      ['list', '--profile', 'saved', '--json'],
      ['auth', 'status', '--json'],
    ]) {
      const r = await gds(args, { GDS_CONFIG_DIR: config });
      expect(r.code, r.stderr).toBe(0);
      const lines = r.stderr.split('\n').filter((l) => l !== '');
      expect(lines.length, args.join(' ')).toBeGreaterThan(0);
      for (const line of lines) {
        expect(() => JSON.parse(line) as unknown, line).not.toThrow();
        expect(JSON.parse(line)).toEqual({ warning: { message: expect.any(String) } });
      }
      for (const line of r.stdout.split('\n').filter((l) => l !== '')) JSON.parse(line);
      await chmod(join(config, 'config.json'), 0o644);
    }
  });
});

describe('a secret in a URL’s query', () => {
  it('is masked where an error echoes the URL and in the debug log: the parameter kept, its value never', async () => {
    const secret = 'zz9secret9zz';
    for (const json of [false, true]) {
      const r = await gds(['api', `/api/me?token=${secret}&page=2`, ...(json ? ['--json'] : [])], {
        SERVICE_API_URL: 'http://127.0.0.1:9',
        DEBUG: 'oclif*',
      });
      expect(r.code, r.stderr).toBe(9);
      expect(r.stdout + r.stderr).not.toContain(secret);
      expect(r.stderr).toContain('/api/me?token=****&page=2');
    }
  });
});
