// A flood of distinct bogus credentials is rate-limited per client address
// (before, each bogus token got a rate bucket of its own and a database lookup), and minting tokens is
// rate-limited per person (before, each new token bought a fresh 200/min bucket). Limits are small here.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from '../helpers/server.js';

let server: TestServer;
let crm: string;

beforeAll(async () => {
  server = await startTestServer({ failedAuthLimit: 5, mintLimit: 3, rateLimit: 1000 });
  crm = server.table('crm_contacts').id;
});

afterAll(async () => {
  await server?.close();
});

const bogus = (i: number) => `cli_bogus_${i}_${'x'.repeat(20)}`;

describe('failed authentication', () => {
  it('is limited per client address on management routes, however many distinct tokens are tried', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 7; i += 1)
      statuses.push((await server.request('GET', '/api/workspace/audit-log', { token: bogus(i) })).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429]);
    const limited = await server.request('GET', '/api/me', { token: bogus(99) });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(limited.body.error.code).toBe('rate_limited');
    server.clock.advance(61_000);
    expect((await server.request('GET', '/api/me', { token: server.user('OWNER').cliToken })).status).toBe(
      200,
    );
  });

  it('shares one bucket per address on table endpoints too, instead of one per bogus token', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 7; i += 1)
      statuses.push(
        (await server.request('GET', `/api/tables/${crm}/records`, { token: `bogus.jwt.${i}` })).status,
      );
    expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
    expect(statuses.slice(5)).toEqual([429, 429]);
    server.clock.advance(61_000);
  });

  it('counts bogus refresh tokens on the public refresh endpoint too (second probe: 400 in a row were all 401)', async () => {
    const issued = await server.issueToken('ADMIN', {
      name: 'refresh-after-flood',
      env: '*',
      scopes: [{ tableId: crm, permissions: ['read'] }],
    });
    const statuses: number[] = [];
    for (let i = 0; i < 7; i += 1)
      statuses.push(
        (
          await server.request('POST', '/api/integration/refresh', {
            body: { refreshToken: `rt_bogus${i}.${'x'.repeat(32)}` },
          })
        ).status,
      );
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429]);
    // A good refresh token from that address waits for the window too, then works.
    const refresh = () =>
      server.request('POST', '/api/integration/refresh', {
        body: { refreshToken: issued.tokens.refreshToken },
      });
    expect((await refresh()).status).toBe(429);
    server.clock.advance(61_000);
    expect((await refresh()).status).toBe(200);
    server.clock.advance(61_000);
  });
});

describe('minting', () => {
  it('is limited per person: the fourth token in a minute is 429, another person still mints', async () => {
    const mint = (role: 'OWNER' | 'ADMIN', n: number) =>
      server.request('POST', '/api/integration/tokens', {
        token: server.user(role).cliToken,
        body: { name: `m${n}`, env: '*', scopes: [{ tableId: crm, permissions: ['read'] }] },
      });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i += 1) statuses.push((await mint('OWNER', i)).status);
    expect(statuses).toEqual([201, 201, 201, 429]);
    expect((await mint('ADMIN', 9)).status).toBe(201);
    const tokens = await server.sql(
      `SELECT count(*)::int AS n FROM gds.integration_tokens WHERE name LIKE 'm%'`,
    );
    expect(tokens[0].n).toBe(4);
  });
});
