// `gds review` against a service whose certify takes only the spec's body fields: a proxy in front of the
// reference server answers a certify that sends `reviewedProofId` as the server before that field did (400
// invalid_body "Unknown fields: reviewedProofId."). The walk then reads the table's newest submission from the
// queue and certifies without the field only when it is the one it showed; one filed since is said, not
// certified. gds runs in the test process, its terminal a stand-in whose input answers the walk's questions.
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
  dir = await mkdtemp(join(tmpdir(), 'gds-e2e-review-certify-spec-body-'));
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

/**
 * Forwards every request to the server, except a certify whose body holds `reviewedProofId`: that one is
 * answered 400 as the server before the field answered it, after `meanwhile` (another writer) is done.
 */
async function specBodyProxy(meanwhile: () => Promise<void> = async () => {}) {
  const certifies = { refused: 0, forwarded: 0 };
  const isCertify = (method: string, path: string) =>
    method === 'POST' && path.endsWith('/semantic-contract/certify');
  const proxy = await holdingProxy(server.url, {
    holds: isCertify,
    meanwhile,
    answer: (method, path, body) => {
      if (!isCertify(method, path)) return undefined;
      if (!('reviewedProofId' in (JSON.parse(body.toString() || '{}') as object))) {
        certifies.forwarded += 1;
        return undefined;
      }
      certifies.refused += 1;
      const error = {
        code: 'invalid_body',
        message: 'Unknown fields: reviewedProofId.',
        details: { unknown: ['reviewedProofId'] },
      };
      return { status: 400, body: { error } };
    },
  });
  return { url: proxy.url, certifies, close: proxy.close };
}

const state = async (tableId: string) =>
  (await server.sql<{ state: string }>(`SELECT state FROM gds.tables WHERE id = $1`, [tableId]))[0]?.state;

/** `gds review` as a steward signed in through the browser (certify takes no static token), through `base`. */
async function review(name: string, base: string, input: string | string[]) {
  const configDir = join(dir, name);
  const env = {
    HOME: dir,
    GDS_CONFIG_DIR: configDir,
    GDS_SECRET_STORAGE: 'file',
    GDS_DEBUG: '1',
    SERVICE_API_URL: undefined,
  };
  const profileEnv = { ...process.env, ...env };
  await withProfileLock(
    'steward',
    () =>
      saveProfile(
        'steward',
        { kind: 'session', base },
        { accessToken: server.user('STEWARD').accessToken },
        { env: profileEnv },
      ),
    { env: profileEnv },
  );
  return runInProcess(['review'], { terminal: 'stdout too', env, input });
}

// Two arrows up from Skip to Certify, then Enter.
const CERTIFY = '\u001b[A\u001b[A\r';
const SAID_ONCE = "the service refuses certify's reviewedProofId";

describe('gds review against a service whose certify refuses reviewedProofId', () => {
  it(
    'nothing submitted since it was shown: each table is certified, the refusal met and said once per walk',
    needs(noTerminalStandIn),
    async () => {
      const orders = server.table('orders');
      const customers = server.table('customers');
      await submit(orders.id);
      await submit(customers.id);
      const proxy = await specBodyProxy();
      try {
        const walk = await review('certified', proxy.url, [CERTIFY, CERTIFY]);
        expect(walk.code, walk.stderr).toBe(0);
        expect(walk.stderr).toContain('Certified orders');
        expect(walk.stderr).toContain('Certified customers');
        expect(walk.stderr).not.toContain('was not certified');
        expect(walk.stderr).toContain('2 of 2 decided.');
        expect(walk.stderr.split(SAID_ONCE)).toHaveLength(2);
        // The field is sent to the first certify only; the second goes without it.
        expect(proxy.certifies).toEqual({ refused: 1, forwarded: 2 });
      } finally {
        await proxy.close();
      }
      expect(await state(orders.id)).toBe('CERTIFIED');
      expect(await state(customers.id)).toBe('CERTIFIED');
    },
  );

  it(
    'submitted again between showing and "Certify": said on one line, not certified',
    needs(noTerminalStandIn),
    async () => {
      const customers = server.table('customers');
      await submit(customers.id);
      let resubmitted: string | undefined;
      const proxy = await specBodyProxy(async () => {
        resubmitted = await submit(customers.id);
      });
      try {
        const walk = await review('resubmitted', proxy.url, CERTIFY);
        expect(walk.code, walk.stderr).toBe(0);
        const said = walk.stderr.split('\n').filter((line) => line.includes('was not certified'));
        expect(said).toHaveLength(1);
        expect(said[0]).toContain(
          `customers was not certified: it was submitted again (proof ${resubmitted}`,
        );
        expect(said[0]).toContain('Review the new submission in the next gds review.');
        expect(walk.stderr).not.toContain('Certified customers');
        expect(walk.stderr).toContain('0 of 1 decided.');
        expect(proxy.certifies).toEqual({ refused: 1, forwarded: 0 });
      } finally {
        await proxy.close();
      }
      expect(await state(customers.id)).toBe('PENDING_REVIEW');
    },
  );
});
