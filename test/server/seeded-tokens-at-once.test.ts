// Two server processes starting at once over one PostgreSQL database both derive the seeded users' CLI
// tokens for their ready files: the one that inserts second must hand out the token the first inserted,
// not fail its start with "You already have a live CLI token named """.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type RunningServer } from '../../src/server/app.js';
import { seededCliToken } from '../../src/server/auth/cli-tokens.js';
import { systemClock } from '../../src/server/clock.js';
import type { Db } from '../../src/server/db/handle.js';
import { openDb } from '../../src/server/db/index.js';
import { createPostgresDatabase } from '../helpers/server.js';
import { needs, noPostgres } from '../helpers/skip.js';

describe('seeded CLI tokens derived by several starts at once on PostgreSQL', () => {
  let database: { url: string; drop(): Promise<void> } | undefined;
  let server: RunningServer | undefined;
  const handles: Db[] = [];
  beforeAll(async () => {
    if (noPostgres !== undefined) return;
    database = await createPostgresDatabase({ migrated: true });
    server = await createServer({ port: 0, databaseUrl: database.url });
    for (let i = 0; i < 3; i++) handles.push(await openDb({ databaseUrl: database.url }));
  });
  afterAll(async () => {
    for (const handle of handles) await handle.close();
    await server?.close();
    await database?.drop();
  });

  it('all get one token, and one live unnamed token is left', needs(noPostgres), async () => {
    const owner = server?.ready.users.find((u) => u.role === 'OWNER');
    if (owner === undefined) throw new Error('no seeded OWNER in the ready file');
    // Revoked, so the next start derives (and inserts) the next token: the moment two starts can race.
    await handles[0]?.query(
      `UPDATE gds.cli_tokens SET revoked_at = now() WHERE user_id = $1 AND name IS NULL AND revoked_at IS NULL`,
      [owner.userId],
    );
    const tokens = await Promise.all(handles.map((db) => seededCliToken({ db, clock: systemClock }, owner)));
    expect(new Set(tokens).size).toBe(1);
    expect(tokens[0]).not.toBe(owner.cliToken);
    const live = await handles[0]?.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM gds.cli_tokens WHERE user_id = $1 AND name IS NULL AND revoked_at IS NULL`,
      [owner.userId],
    );
    expect(live?.[0]?.n).toBe(1);
  });
});
