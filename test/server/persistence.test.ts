// --data-dir: state survives a restart (seeded once, signing key kept, refresh tokens still valid), and a
// restart over one database hands each seeded user the CLI token it had, without making another.
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createServer } from '../../src/server/app.js';
import { ENGINES } from '../helpers/engines.js';
import { scratchDir } from '../helpers/migrated-database.js';
import { oneDatabase } from '../helpers/one-database.js';
import { needs } from '../helpers/skip.js';

// In the folder test databases go in (memory where there is room): a data directory on disk cost the system
// a second of CPU and more.
const dataDir = mkdtempSync(join(await scratchDir(), 'gds-test-db-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe('a persistent data dir', () => {
  it('keeps workspaces, records and tokens across a restart', async () => {
    const first = await createServer({ port: 0, dataDir, contractCheck: true });
    const crm = first.ready.tables.find((t) => t.name === 'crm_contacts')?.id;
    const owner = first.ready.users.find((u) => u.role === 'OWNER');
    const issued = await fetch(`${first.url}/api/integration/tokens`, {
      method: 'POST',
      headers: { authorization: `Bearer ${owner?.accessToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        name: 'kept',
        env: '*',
        scopes: [{ tableId: crm, permissions: ['read', 'write'] }],
      }),
    }).then((r) => r.json() as Promise<{ tokens: { accessToken: string; refreshToken: string } }>);
    const created = await fetch(`${first.url}/api/tables/${crm}/records`, {
      method: 'POST',
      headers: { authorization: `Bearer ${issued.tokens.accessToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'kept@example.com', full_name: 'Kept' }),
    });
    expect(created.status).toBe(201);
    await first.close();

    const second = await createServer({ port: 0, dataDir, contractCheck: true });
    try {
      expect(second.ready.workspaceId).toBe(first.ready.workspaceId);
      expect(second.ready.tables).toEqual(first.ready.tables);
      const refreshed = await fetch(`${second.url}/api/integration/refresh`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ refreshToken: issued.tokens.refreshToken }),
      }).then((r) => r.json() as Promise<{ tokens: { accessToken: string } }>);
      const found = await fetch(`${second.url}/api/tables/${crm}/records?search=kept`, {
        headers: { authorization: `Bearer ${refreshed.tokens.accessToken}` },
      }).then((r) => r.json() as Promise<{ total: number }>);
      expect(found.total).toBe(1);
      // The old CLI token still works: it is stored (hashed) in the data dir.
      const members = await fetch(`${second.url}/api/workspace/members`, {
        headers: { authorization: `Bearer ${owner?.cliToken}` },
      });
      expect(members.status).toBe(200);
      expect([...(first.contract?.violations ?? []), ...(second.contract?.violations ?? [])]).toEqual([]);
    } finally {
      await second.close();
    }
  });
});

describe.each(ENGINES)('restarts over one database on $engine', ({ postgres, skip }) => {
  it(
    'hand each seeded user the same CLI token, make no new one, and derive another once it is revoked',
    needs(skip),
    async () => {
      // On a migrated database (an empty one is the test above's).
      const { start, remove } = await oneDatabase(postgres);
      const tokensOf = async (url: string, token: string) =>
        (
          (await fetch(`${url}/api/cli-tokens`, { headers: { authorization: `Bearer ${token}` } }).then((r) =>
            r.json(),
          )) as { tokens: Array<{ id: string; revokedAt: string | null }> }
        ).tokens;
      try {
        const first = await start();
        const owner = (ready: typeof first.ready) =>
          ready.users.find((u) => u.role === 'OWNER')?.cliToken ?? '';
        const held = await tokensOf(first.url, owner(first.ready));
        await first.close();

        const second = await start();
        expect(second.ready.users.map((u) => u.cliToken)).toEqual(first.ready.users.map((u) => u.cliToken));
        // "Last used" moves; the tokens are the same ones.
        expect((await tokensOf(second.url, owner(second.ready))).map((t) => t.id)).toEqual(
          held.map((t) => t.id),
        );
        const [seeded] = held;
        const revoked = await fetch(`${second.url}/api/cli-tokens/${seeded?.id ?? ''}/revoke`, {
          method: 'POST',
          headers: { authorization: `Bearer ${second.ready.users[0]?.accessToken ?? ''}` },
        });
        expect(revoked.status).toBe(200);
        await second.close();

        const third = await start();
        try {
          expect(owner(third.ready)).not.toBe(owner(first.ready));
          const listed = await tokensOf(third.url, owner(third.ready));
          expect(listed.filter((t) => t.revokedAt === null)).toHaveLength(1);
          expect(listed).toHaveLength(2);
        } finally {
          await third.close();
        }
      } finally {
        await remove();
      }
    },
  );
});
