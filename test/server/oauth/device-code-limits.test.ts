// Device codes cannot be made without limit: each client address may start a bounded number of device
// sign-ins a minute, and the codes waiting for a person are capped across everyone. Past either bound
// POST /oauth/device/code is 429 in the contract's error body with Retry-After, and nothing is stored;
// codes long expired are deleted as new ones are made.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../../helpers/server.js';
import { startTestServer } from '../../helpers/server.js';

const LIFETIME_S = 60;

/** A device authorization, or the contract's error body. */
interface DeviceAnswer {
  user_code: string;
  error: { code: string; message: string; details?: unknown };
}

async function startDevice(server: TestServer) {
  const response = await fetch(`${server.origin}/oauth/device/code`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_id: 'gds-cli' }).toString(),
  });
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as DeviceAnswer,
  };
}

const storedCodes = async (server: TestServer) =>
  Number((await server.sql<{ n: number }>('SELECT count(*)::int AS n FROM gds.device_codes'))[0]?.n);

function expectRefused(answer: Awaited<ReturnType<typeof startDevice>>, code: string, limit: number): number {
  expect(answer.status).toBe(429);
  expect(answer.body).toEqual({ error: { code, message: expect.any(String), details: { limit } } });
  const retryAfter = Number(answer.headers.get('retry-after'));
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(LIFETIME_S);
  return retryAfter;
}

/** A server of this describe block with these device-flow bounds (a code lives LIFETIME_S). */
function useServer(bounds: { codesPerAddressPerMinute: number; maxPendingCodes: number }): () => TestServer {
  let server: TestServer | undefined;
  beforeAll(async () => {
    server = await startTestServer({ deviceFlow: { expiresInSeconds: LIFETIME_S, ...bounds } });
  });
  afterAll(async () => {
    await server?.close();
  });
  return () => {
    if (!server) throw new Error('the server did not start');
    return server;
  };
}

describe('per client address', () => {
  const server = useServer({ codesPerAddressPerMinute: 3, maxPendingCodes: 1000 });

  it('takes 3 a minute from one address, then 429 rate_limited with Retry-After until the window ends', async () => {
    for (let i = 0; i < 3; i += 1) expect((await startDevice(server())).status).toBe(200);
    const stored = await storedCodes(server());
    const refused = await startDevice(server());
    expectRefused(refused, 'rate_limited', 3);
    expect(refused.body.error.message).toContain('device sign-ins from one address');
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(await storedCodes(server())).toBe(stored);
    server().clock.advance(61_000);
    expect((await startDevice(server())).status).toBe(200);
  });
});

describe('codes waiting for a person, from everyone', () => {
  const server = useServer({ codesPerAddressPerMinute: 10_000, maxPendingCodes: 2 });

  it('caps the pending codes: 429 too_many_pending_sign_ins until one is decided or expires', async () => {
    const started = Date.now();
    const first = await startDevice(server());
    expect(first.status).toBe(200);
    server().clock.advance(10_000);
    expect((await startDevice(server())).status).toBe(200);
    const refused = await startDevice(server());
    // Retry-After: when the oldest pending code expires (50 s from now, less the real time these requests took:
    // over a second on a loaded machine).
    const retryAfter = expectRefused(refused, 'too_many_pending_sign_ins', 2);
    expect(retryAfter).toBeLessThanOrEqual(LIFETIME_S - 10);
    expect(retryAfter).toBeGreaterThanOrEqual(Math.ceil(LIFETIME_S - 10 - (Date.now() - started) / 1000));
    expect(await storedCodes(server())).toBe(2);

    // A code a person approved no longer waits: there is room for one more.
    const approved = await fetch(`${server().origin}/device`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: server().origin },
      body: new URLSearchParams({
        user_code: first.body.user_code,
        email: server().user('OWNER').email,
        action: 'approve',
      }).toString(),
    });
    expect(approved.status).toBe(200);
    expect((await startDevice(server())).status).toBe(200);
    expectRefused(await startDevice(server()), 'too_many_pending_sign_ins', 2);

    // Expired codes do not wait either.
    server().clock.advance(LIFETIME_S * 1000);
    expect((await startDevice(server())).status).toBe(200);
  });

  it('deletes codes expired for longer than their lifetime when a new one is made', async () => {
    server().clock.advance(3 * LIFETIME_S * 1000);
    expect(await storedCodes(server())).toBeGreaterThan(0);
    expect((await startDevice(server())).status).toBe(200);
    expect(await storedCodes(server())).toBe(1);
  });
});
