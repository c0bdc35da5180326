// The steward's queue says when a waiting table's proof went stale: a rebuild signalled after the submission
// moves the table's data version past the proof's, and certify is then blocked (stale_proof) whatever the
// proof said. The queue entry's proof carries `fresh` and what changed since it, so `gds review` and the
// dashboard no longer show "passed" for a table a steward cannot certify.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../../helpers/server.js';
import { startTestServer } from '../../helpers/server.js';
import { submit } from '../cert/arrange.js';

let server: TestServer;
let orders: string;

beforeAll(async () => {
  server = await startTestServer({ jobs: 'manual' });
  orders = server.table('orders').id;
});

afterAll(async () => {
  await server?.close();
});

const queue = async () =>
  (await server.request('GET', '/api/notifications', { token: server.user('STEWARD').cliToken })).body
    .notifications;

describe('a waiting table whose data changed after its submission', () => {
  it('is fresh until the data moves, then stale with what changed; certify says the same', async () => {
    await submit(server, orders);
    const [before] = await queue();
    expect(before.proof).toMatchObject({ fresh: true, changedSince: [] });

    const issued = await server.issueToken('ADMIN', {
      name: 'ci-rebuild',
      env: server.table('orders').environmentLabel,
      scopes: ['workspace:write:recertify'] as never,
    });
    const signal = await server.request('POST', '/api/workspace/recertify', {
      token: issued.tokens.accessToken,
      body: { tables: ['orders'], environmentLabel: server.table('orders').environmentLabel },
    });
    expect(signal.status).toBe(200);

    const [after] = await queue();
    const data = before.proof.tableVersion.data as number;
    expect(after.state).toBe('PENDING_REVIEW');
    expect(after.proof).toMatchObject({
      passed: before.proof.passed,
      fresh: false,
      changedSince: [{ what: 'data', from: data, to: data + 1 }],
    });

    const certify = await server.request('POST', `/api/tables/${orders}/semantic-contract/certify`, {
      token: server.user('OWNER').accessToken,
      body: { evidenceFileName: 'review.pdf', evidenceHash: 'a'.repeat(64) },
    });
    expect(certify.status).toBe(422);
    expect(certify.body.error.code).toBe('stale_proof');
  });
});
