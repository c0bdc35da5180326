// --data-dir: state survives a restart (seeded once, signing key kept, refresh tokens still valid).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createServer } from '../../src/server/app.js';

const dataDir = mkdtempSync(join(tmpdir(), 'gds-data-'));
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
