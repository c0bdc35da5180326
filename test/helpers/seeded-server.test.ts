// Test servers start on a copy of a seeded template (migrated-database.ts): each has a database of its own,
// and its seeded data is dated as if the server had seeded it as it started, before what it wrote itself.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES } from './engines.js';
import type { TestServer } from './server.js';
import { startTestServer } from './server.js';
import { needs } from './skip.js';

describe.each(ENGINES)('a test server on the seeded template ($engine)', ({ postgres, skip }) => {
  let first: TestServer;
  let second: TestServer;
  let before: number;
  let after: number;

  beforeAll(async () => {
    if (skip !== undefined) return;
    const database = postgres ? 'postgres' : 'pglite';
    before = Date.now();
    first = await startTestServer({ database });
    second = await startTestServer({ database, workspaces: 2 });
    after = Date.now();
  });

  afterAll(async () => {
    await first?.close();
    await second?.close();
  });

  it("dates the seeded rows at the server's start, in the order they were written", needs(skip), async () => {
    const times = await first.sql<{ at: Date }>(
      `SELECT created_at AS at FROM gds.audit_log WHERE details->>'seeded' = 'true' OR details ? 'note'
        UNION ALL SELECT created_at FROM gds.workspaces UNION ALL SELECT created_at FROM gds.tables
        UNION ALL SELECT created_at FROM gds.records UNION ALL SELECT certified_at FROM gds.contract_versions`,
    );
    expect(times.length).toBeGreaterThan(40);
    for (const { at } of times) {
      expect(at.getTime()).toBeGreaterThanOrEqual(before);
      expect(at.getTime()).toBeLessThanOrEqual(after);
    }
    const audit = await first.sql<{ action: string; details: { note?: string }; at: Date }>(
      `SELECT action, details, created_at AS at FROM gds.audit_log ORDER BY created_at, id`,
    );
    // Registered, then certified: a seeded certification's note gives its time, moved with it.
    expect(audit[0]?.action).toBe('TABLE_REGISTERED');
    const certified = audit.find((entry) => entry.action === 'TABLE_CERTIFIED');
    const noted = Date.parse(certified?.details.note?.replace('Seeded as certified at ', '') ?? '');
    expect(noted).toBeGreaterThanOrEqual(before);
    expect(noted).toBeLessThanOrEqual(certified?.at.getTime() ?? 0);
  });

  it(
    'seeds before what the server writes as it starts: its signing key and CLI tokens come later',
    needs(skip),
    async () => {
      // The second server too: its copy is made sooner, and it wrote its key within 3 ms of the seed's end.
      for (const server of [first, second]) {
        const [{ seeded, key, tokens }] = await server.sql(
          `SELECT (SELECT max(created_at) FROM gds.tables) AS seeded,
                (SELECT min(created_at) FROM gds.signing_keys) AS key,
                (SELECT min(created_at) FROM gds.cli_tokens) AS tokens`,
        );
        expect(seeded.getTime()).toBeLessThanOrEqual(key.getTime());
        expect(seeded.getTime()).toBeLessThanOrEqual(tokens.getTime());
      }
    },
  );

  it('gives each server a database of its own, with the workspaces asked for', needs(skip), async () => {
    expect(first.ready.workspaces).toHaveLength(2);
    expect(second.ready.workspaces.map((w) => w.users.length)).toEqual([5, 4]);
    await first.sql('UPDATE gds.tables SET name = $2 WHERE id = $1', [first.table('orders').id, 'renamed']);
    const [row] = await second.sql('SELECT name FROM gds.tables WHERE id = $1', [second.table('orders').id]);
    expect(row.name).toBe('orders');
    // Its own signing key: a session of one server is refused by the other.
    const refused = await second.request('GET', '/api/me', { token: first.user('OWNER').accessToken });
    expect(refused.status).toBe(401);
  });
});
