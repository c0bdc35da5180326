// Migration 65: a refresh token keeps its id across refreshes (`<tokenId>.<secret>`, only the secret rotates).
// A database of the schema before it holds refresh tokens whose rows are keyed by the id presented with them:
// each becomes its own token id, so a refresh token issued before the upgrade still refreshes after it.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { migrate } from '../../../src/server/db/migrations.js';
import { ENGINES, useEngineDb } from '../../helpers/engines.js';
import { needs } from '../../helpers/skip.js';
import { schemaBefore, T0 } from './earlier-schema.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe.each(ENGINES)('refresh tokens issued before migration 65 ($engine)', (engine) => {
  const db = useEngineDb(engine, async (opened) => {
    await schemaBefore(opened, 65);
    await opened.query(
      `INSERT INTO gds.integration_tokens (id, workspace_id, user_id, name, audience, env, scopes, client_token_hash,
                                           created_at, table_ids)
       VALUES ('itk_a', 'ws_a', 'usr_a', 'ci', 'DATA-API', 'dev', '[]', 'h', $1, '{}')`,
      [T0],
    );
    for (const [id, secret, used] of [
      ['rt_spent', 'first-secret', T0],
      ['rt_live', 'second-secret', null],
    ] as const)
      await opened.query(
        `INSERT INTO gds.refresh_tokens (id, family_id, secret_hash, created_at, expires_at, used_at)
         VALUES ($1, 'itk_a', $2, $3, '2026-02-01T00:00:00.000Z', $4)`,
        [id, sha256(secret), T0, used],
      );
    await migrate(opened);
  });

  it('makes each row its own token id, found by the pair presented', needs(engine.skip), async () => {
    const found = async (tokenId: string, secret: string) =>
      (
        await db().query<{ id: string; used: boolean }>(
          `SELECT id, used_at IS NOT NULL AS used FROM gds.refresh_tokens WHERE token_id = $1 AND secret_hash = $2`,
          [tokenId, sha256(secret)],
        )
      ).map((row) => [row.id, row.used]);
    expect(await found('rt_live', 'second-secret')).toEqual([['rt_live', false]]);
    expect(await found('rt_spent', 'first-secret')).toEqual([['rt_spent', true]]);
    expect(await found('rt_live', 'first-secret')).toEqual([]);
  });
});
