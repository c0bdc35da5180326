// `gds review` against a real server: after a `gds gate submit` the table waits in the steward's queue;
// --json prints it as NDJSON (proof, what changed since certified, open requests), piped it lists
// tab-separated, and a MEMBER is refused (exit 4), with gds in the test process (runInProcess). On a terminal
// (a real process), the walk rejects a table with a reason, and certifies one with a browser sign-in's
// session (a static CLI token is refused before anything is sent).
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withProfileLock } from '../../src/auth/config.js';
import { saveProfile } from '../../src/auth/profiles.js';
import type { CliResult } from '../cli/helpers/cli-process.js';
import { cliCommand, cliEnv, ensureBuilt } from '../cli/helpers/cli-process.js';
import { runInProcess } from '../helpers/run-in-process.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';
import { startTerminal } from '../helpers/tmux.js';
import { needs, noTmux } from '../helpers/skip.js';

let server: TestServer;
let dir: string;

beforeAll(async () => {
  [server] = await Promise.all([startTestServer(), ensureBuilt()]);
  dir = await mkdtemp(join(tmpdir(), 'gds-e2e-review-'));
});

afterAll(async () => {
  await server?.close();
});

const env = (role: 'STEWARD' | 'MEMBER' | 'OWNER') => ({
  GDS_CONFIG_DIR: join(dir, role, 'gds'),
  GDS_SECRET_STORAGE: 'file',
  SERVICE_API_URL: server.url,
  SERVICE_TOKEN: server.user(role).cliToken,
});

const gds = (args: string[], role: 'STEWARD' | 'MEMBER' | 'OWNER' = 'STEWARD'): Promise<CliResult> =>
  runInProcess(args, { env: env(role) });

describe('gds review', () => {
  it('lists nothing, saying so on stderr, before any submission', async () => {
    const empty = await gds(['review']);
    expect(empty.code, empty.stderr).toBe(0);
    expect(empty.stdout).toBe('');
    expect(empty.stderr).toContain('Nothing is waiting for review.');
  });

  it('--json prints one line per waiting table after gds gate submit; piped, tab-separated rows', async () => {
    const customers = server.table('customers');
    const submitted = await gds(['gate', 'submit', customers.id, '--json'], 'OWNER');
    expect(submitted.code, submitted.stderr).toBe(0);
    const proof = JSON.parse(submitted.stdout) as { id: string; passed: boolean };

    const json = await gds(['review', '--json']);
    expect(json.code, json.stderr).toBe(0);
    const lines = json.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      tableId: customers.id,
      tableName: customers.name,
      state: 'PENDING_REVIEW',
      submittedBy: { email: server.user('OWNER').email },
      proof: { id: proof.id, passed: proof.passed },
      // The seed certified it without a proof: what changed since cannot be said.
      sinceCertified: { version: 1, tableVersion: null, changed: [] },
      openRecertificationRequests: [],
    });

    const piped = await gds(['review']);
    expect(piped.code, piped.stderr).toBe(0);
    const [row] = piped.stdout.trim().split('\n');
    expect(row?.split('\t').slice(0, 3)).toEqual([customers.name, customers.id, customers.environmentLabel]);
    expect(row).toContain('certified v1; what changed since is not known');
    expect(row).toContain(server.user('OWNER').email);
  });

  it('a MEMBER is refused: exit 4, one error line on stderr under --json', async () => {
    const refused = await gds(['review', '--json'], 'MEMBER');
    expect(refused.code).toBe(4);
    expect(refused.stdout).toBe('');
    expect(JSON.parse(refused.stderr.trim()).error.code).toBe('steward_role_required');
  });

  it(
    'on a terminal, walks the queue: rejecting the table with a reason sends it to QUARANTINED',
    { ...needs(noTmux) },
    async () => {
      const customers = server.table('customers');
      const [command, args] = cliCommand(['review']);
      const term = await startTerminal([command, ...args], {
        width: 120,
        height: 40,
        env: cliEnv(env('STEWARD')),
      });
      try {
        await term.waitFor(/What about customers\?/);
        const screen = await term.screen();
        expect(screen).toContain('Proof:');
        expect(screen).toContain('certified v1; what changed since is not known');
        await term.send('Up', 'Enter');
        await term.waitFor(/Why is customers rejected\?/);
        await term.send('null rate too high', 'Enter');
        await term.waitFor(/Rejected customers: now QUARANTINED/);
      } finally {
        await term.close();
      }
      const [row] = await server.sql<{ state: string }>('SELECT state FROM gds.tables WHERE id = $1', [
        customers.id,
      ]);
      expect(row?.state).toBe('QUARANTINED');
      const audit = await server.sql<{ n: number }>(
        `SELECT count(*)::int AS n FROM gds.audit_log WHERE table_id = $1 AND details::text LIKE '%null rate too high%'`,
        [customers.id],
      );
      expect(audit[0]?.n).toBeGreaterThan(0);
    },
  );

  it(
    'on a terminal, certifies a table with the session of a browser sign-in; a static token is refused first',
    { ...needs(noTmux) },
    async () => {
      const orders = server.table('orders');
      const submitted = await gds(['gate', 'submit', orders.id, '--json'], 'OWNER');
      expect(submitted.code, submitted.stderr).toBe(0);
      expect(JSON.parse(submitted.stdout)).toMatchObject({ passed: true });
      const state = async () =>
        (await server.sql<{ state: string }>('SELECT state FROM gds.tables WHERE id = $1', [orders.id]))[0]
          ?.state;

      // Certify from SERVICE_TOKEN (a static CLI token): refused before any request, saying how to sign in.
      const walk = async (env: Record<string, string | undefined>, until: RegExp) => {
        const [command, args] = cliCommand(['review']);
        const term = await startTerminal([command, ...args], { width: 140, height: 40, env: cliEnv(env) });
        try {
          await term.waitFor(/What about orders\?/);
          await term.send('Up', 'Up', 'Enter');
          return await term.waitFor(until);
        } finally {
          await term.close();
        }
      };
      // Said, and the walk goes on (here to its end) as after any refused decision.
      const refused = await walk(env('STEWARD'), /0 of 1 decided/);
      expect(refused).toContain('orders was not certified: Certification needs interactive authentication');
      expect(refused).toContain('gds auth login');
      expect(await state()).toBe('PENDING_REVIEW');

      // The profile a browser sign-in (gds auth login) writes: a session token, no SERVICE_TOKEN.
      const configDir = join(dir, 'signed-in', 'gds');
      const profileEnv = { ...process.env, GDS_CONFIG_DIR: configDir, GDS_SECRET_STORAGE: 'file' };
      await withProfileLock(
        'steward',
        () =>
          saveProfile(
            'steward',
            { kind: 'session', base: server.url },
            { accessToken: server.user('STEWARD').accessToken },
            { env: profileEnv },
          ),
        { env: profileEnv },
      );
      await walk(
        { GDS_CONFIG_DIR: configDir, GDS_SECRET_STORAGE: 'file', SERVICE_API_URL: undefined },
        /1 of 1 decided/,
      ).then((screen) => expect(screen).toMatch(/✓ Certified orders: contract \S+/));
      expect(await state()).toBe('CERTIFIED');
      const audit = await server.sql<{ user_id: string }>(
        `SELECT user_id FROM gds.audit_log WHERE table_id = $1 AND action = 'TABLE_CERTIFIED'`,
        [orders.id],
      );
      expect(audit.map((a) => a.user_id)).toContain(server.user('STEWARD').userId);
      // Off the queue once certified.
      const queue = await gds(['review', '--json']);
      expect(queue.stdout).not.toContain(orders.id);
    },
  );
});
