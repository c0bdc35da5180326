// `gds review` certifies the submission it showed, never one filed since: the table's owner submits it again
// (a forwarding proxy does, as gds's certify reaches it) between the walk showing the table and the steward's
// "Certify". The service refuses (409 submission_changed), the walk says so on one line and goes on, and the
// table still waits for review, its new submission with the steward. gds runs in the test process, its
// terminal a stand-in whose input answers the walk's question.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withProfileLock } from '../../src/auth/config.js';
import { saveProfile } from '../../src/auth/profiles.js';
import { holdingProxy } from '../helpers/holding-proxy.js';
import { runInProcess } from '../helpers/run-in-process.js';
import type { TestServer } from '../helpers/server.js';
import { needs, noTerminalStandIn } from '../helpers/skip.js';
import { startTestServer } from './test-server.js';

let server: TestServer;
let dir: string;

beforeAll(async () => {
  server = await startTestServer({ jobs: 'manual' });
  dir = await mkdtemp(join(tmpdir(), 'gds-e2e-review-certify-resubmitted-'));
});

afterAll(async () => {
  await server?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** `gate submit` as the table's owner: the new submission's proof id. */
const submit = async (tableId: string): Promise<string> => {
  server.clock.advance(1000);
  const answer = await server.request('POST', `/api/tables/${tableId}/gate-submissions`, {
    token: server.user('OWNER').accessToken,
    body: {},
  });
  expect(answer.status).toBe(201);
  return answer.body.id as string;
};

describe('gds review while the shown table is submitted again', () => {
  it(
    '"Certify" of the table shown is refused, said on one line; the table is not certified',
    needs(noTerminalStandIn),
    async () => {
      const orders = server.table('orders');
      await submit(orders.id);
      let resubmitted: string | undefined;
      const proxy = await holdingProxy(server.url, {
        holds: (method, path) => method === 'POST' && path.endsWith('/semantic-contract/certify'),
        meanwhile: async () => {
          resubmitted = await submit(orders.id);
        },
      });
      const facts = async () =>
        (
          await server.sql<{ state: string; versions: number; open: number }>(
            `SELECT t.state,
                  (SELECT count(*)::int FROM gds.contract_versions v
                    WHERE v.table_id = t.id AND v.kind = 'CERTIFICATION') AS versions,
                  (SELECT count(*)::int FROM gds.notifications n
                    WHERE n.table_id = t.id AND n.closed_at IS NULL) AS open
             FROM gds.tables t WHERE t.id = $1`,
            [orders.id],
          )
        )[0];
      const before = await facts();
      // A browser sign-in's profile (certify takes no static token), its base the proxy.
      const configDir = join(dir, 'gds');
      const env = {
        HOME: dir,
        GDS_CONFIG_DIR: configDir,
        GDS_SECRET_STORAGE: 'file',
        SERVICE_API_URL: undefined,
      };
      const profileEnv = { ...process.env, ...env };
      await withProfileLock(
        'steward',
        () =>
          saveProfile(
            'steward',
            { kind: 'session', base: proxy.url },
            { accessToken: server.user('STEWARD').accessToken },
            { env: profileEnv },
          ),
        { env: profileEnv },
      );
      try {
        // Two arrows up from Skip to Certify, then Enter.
        const review = await runInProcess(['review'], {
          terminal: 'stdout too',
          env,
          input: '\u001b[A\u001b[A\r',
        });
        expect(review.code, review.stderr).toBe(0);
        expect(proxy.held(), review.stderr).toBe(true);
        expect(review.stderr).toContain('What about orders?');
        const said = review.stderr.split('\n').filter((line) => line.includes('was not certified'));
        expect(said).toHaveLength(1);
        expect(said[0]).toContain(`orders was not certified: it was submitted again (proof ${resubmitted}`);
        expect(said[0]).toContain('Review the new submission in the next gds review.');
        expect(review.stderr).not.toContain('Certified orders');
        expect(review.stderr).toContain('0 of 1 decided.');
      } finally {
        await proxy.close();
      }
      expect(await facts()).toEqual({ ...before, state: 'PENDING_REVIEW' });
      // The new submission is the one waiting for the steward.
      const queue = await runInProcess(['review', '--json'], {
        env: { ...env, SERVICE_API_URL: server.url, SERVICE_TOKEN: server.user('STEWARD').cliToken },
      });
      expect(queue.code, queue.stderr).toBe(0);
      expect(JSON.parse(queue.stdout.trim())).toMatchObject({
        tableId: orders.id,
        proof: { id: resubmitted },
      });
    },
  );
});
