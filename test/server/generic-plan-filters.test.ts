// The optional filters of a list are written only when given, so that a generic plan (plan_cache_mode =
// force_generic_plan: a prepared statement reused, a pooler's server-side prepares) reads them by an index as a
// custom plan does. Written `$n IS NULL OR col = $n`, the filter could not be an index condition: a token
// looked up by its id (the answer of its revocation, the check before it) read the workspace's every token,
// and the tables in a rare state (`gds tables list --state CERTIFIED`) were found, and counted, by walking the
// workspace's every table. Counted as the rows the database reads of the listed table (pg_stat_xact_user_tables), on
// PGlite and PostgreSQL.
import { describe, expect, it } from 'vitest';
import type { SessionCaller } from '../../src/server/auth/caller.js';
import { listCliTokens, listIntegrationTokens } from '../../src/server/auth/revocation.js';
import type { Queryable } from '../../src/server/db/handle.js';
import { countTables, listTablePage } from '../../src/server/governance/tables.js';
import { ENGINES, useEngineDb } from '../helpers/engines.js';
import { genericRead } from '../helpers/generic-plan.js';
import { needs } from '../helpers/skip.js';
import { schemaBefore, T0 } from './db/earlier-schema.js';

const ROWS = 20_000;
/** Rows of the listed table a lookup may read: the few it answers, with room to spare; not the workspace's. */
const FEW = 200;

const ADMIN: SessionCaller = {
  kind: 'session',
  via: 'jwt',
  userId: 'usr_a',
  workspaceId: 'ws_a',
  role: 'ADMIN',
  envScope: ['*'],
};

describe.each(ENGINES)('optional filters under a generic plan ($engine)', (engine) => {
  const db = useEngineDb(
    engine,
    async (opened) => {
      await schemaBefore(opened, Number.MAX_SAFE_INTEGER);
      await opened.query(
        `INSERT INTO gds.cli_tokens (id, workspace_id, user_id, token_hash, created_at, name, token_hint)
         SELECT 'cli_' || i, 'ws_a', 'usr_a', 'hash_' || i, $1::timestamptz + i * interval '1 ms', 'token ' || i,
                'cli_…' || i FROM generate_series(1, ${ROWS}) i`,
        [T0],
      );
      await opened.query(
        `INSERT INTO gds.integration_tokens (id, workspace_id, user_id, name, audience, env, scopes,
                                             client_token_hash, created_at, client_token_hint)
         SELECT 'itk_' || i, 'ws_a', 'usr_a', 'pipeline ' || i, 'MANAGEMENT', 'dev', '[]', 'hash_' || i,
                $1::timestamptz + i * interval '1 ms', 'tf_…' || i FROM generate_series(1, ${ROWS}) i`,
        [T0],
      );
      // The workspace's tables all quarantined but the last three, certified.
      await opened.query(
        `INSERT INTO gds.tables (id, workspace_id, slug, name, mode, state, gate_mode, environment_label, owner_id,
                                 columns, created_at, updated_at, active)
         SELECT 'tbl_' || i, 'ws_a', 'tbl_' || i, 'tbl_' || i, 'MODE_A',
                CASE WHEN i > ${ROWS - 3} THEN 'CERTIFIED' ELSE 'QUARANTINED' END, 'ADVISORY', 'dev', 'usr_a',
                '[]', $1::timestamptz + i * interval '1 ms', $1, true FROM generate_series(1, ${ROWS}) i`,
        [T0],
      );
      await opened.exec('ANALYZE');
    },
    120_000,
  );

  const generic = <T>(relation: string, read: (tx: Queryable) => Promise<T>) =>
    genericRead(db(), relation, read);

  it(
    'a CLI token by its id, its holder’s (the check before its revocation)',
    needs(engine.skip),
    async () => {
      const { answer, rowsRead } = await generic('cli_tokens', (tx) =>
        listCliTokens(tx, 'ws_a', { id: 'cli_1234', userId: 'usr_a' }),
      );
      expect(answer.map((t) => t.id)).toEqual(['cli_1234']);
      expect(rowsRead).toBeLessThan(FEW);
    },
  );

  it('an integration token by its id (the answer of its revocation)', needs(engine.skip), async () => {
    const { answer, rowsRead } = await generic('integration_tokens', (tx) =>
      listIntegrationTokens(tx, ADMIN, { id: 'itk_1234' }),
    );
    expect(answer.map((t) => t.id)).toEqual(['itk_1234']);
    expect(rowsRead).toBeLessThan(FEW);
  });

  it('the tables in a rare state', needs(engine.skip), async () => {
    const { answer, rowsRead } = await generic('tables', (tx) =>
      listTablePage(tx, { workspaceId: 'ws_a', state: 'CERTIFIED', environments: null, limit: 50 }),
    );
    expect(answer.tables.map((t) => t.id)).toEqual([`tbl_${ROWS - 2}`, `tbl_${ROWS - 1}`, `tbl_${ROWS}`]);
    expect(rowsRead).toBeLessThan(FEW);
  });

  // Their count, a first page's total (`gds tables list --state CERTIFIED --limit 2`): a generic plan takes the
  // state for half the tables, as it cannot know which; it counted them by reading the whole table.
  for (const [seen, environments] of [
    ['every environment', null],
    ['the environments of a scoped caller', ['dev', 'prod']],
  ] as const) {
    it(`how many tables a rare state holds, ${seen} seen`, needs(engine.skip), async () => {
      const { answer, rowsRead } = await generic('tables', (tx) =>
        countTables(tx, {
          workspaceId: 'ws_a',
          state: 'CERTIFIED',
          environments: environments && [...environments],
          limit: 2,
        }),
      );
      expect(answer).toBe(3);
      expect(rowsRead).toBeLessThan(FEW);
    });
  }
});

// A person's tokens (`gds tokens list --user`, a MEMBER's own list) among the many of the workspace's other
// people: with no index of their holder, each list read the workspace's every token.
describe.each(ENGINES)('a person’s tokens under a generic plan ($engine)', (engine) => {
  const PEOPLE = 50;
  const db = useEngineDb(
    engine,
    async (opened) => {
      await schemaBefore(opened, Number.MAX_SAFE_INTEGER);
      await opened.query(
        `INSERT INTO gds.users (id, email, display_name, created_at)
         SELECT 'usr_' || p, p || '@example.com', 'P' || p, $1 FROM generate_series(1, ${PEOPLE}) p`,
        [T0],
      );
      // The workspace's tokens all of the other people but the last three, usr_a's.
      const holder = (i: string) =>
        `CASE WHEN ${i} > ${ROWS - 3} THEN 'usr_a' ELSE 'usr_' || (${i} % ${PEOPLE} + 1) END`;
      await opened.query(
        `INSERT INTO gds.cli_tokens (id, workspace_id, user_id, token_hash, created_at, name, token_hint)
         SELECT 'cli_' || i, 'ws_a', ${holder('i')}, 'hash_' || i, $1::timestamptz + i * interval '1 ms',
                'token ' || i, 'cli_…' || i FROM generate_series(1, ${ROWS}) i`,
        [T0],
      );
      await opened.query(
        `INSERT INTO gds.integration_tokens (id, workspace_id, user_id, name, audience, env, scopes,
                                             client_token_hash, created_at, client_token_hint)
         SELECT 'itk_' || i, 'ws_a', ${holder('i')}, 'pipeline ' || i, 'MANAGEMENT', 'dev', '[]', 'hash_' || i,
                $1::timestamptz + i * interval '1 ms', 'tf_…' || i FROM generate_series(1, ${ROWS}) i`,
        [T0],
      );
      await opened.exec('ANALYZE');
    },
    120_000,
  );
  const newestFirst = (prefix: string) => [ROWS, ROWS - 1, ROWS - 2].map((i) => `${prefix}_${i}`);

  it('a person’s CLI tokens, listed by an admin', needs(engine.skip), async () => {
    const { answer, rowsRead } = await genericRead(db(), 'cli_tokens', (tx) =>
      listCliTokens(tx, 'ws_a', { userId: 'usr_a' }),
    );
    expect(answer.map((t) => t.id)).toEqual(newestFirst('cli'));
    expect(rowsRead).toBeLessThan(FEW);
  });

  it('a person’s integration tokens, listed by an admin', needs(engine.skip), async () => {
    const { answer, rowsRead } = await genericRead(db(), 'integration_tokens', (tx) =>
      listIntegrationTokens(tx, ADMIN, { userId: 'usr_a' }),
    );
    expect(answer.map((t) => t.id)).toEqual(newestFirst('itk'));
    expect(rowsRead).toBeLessThan(FEW);
  });

  it('a member’s own integration tokens', needs(engine.skip), async () => {
    const { answer, rowsRead } = await genericRead(db(), 'integration_tokens', (tx) =>
      listIntegrationTokens(tx, { ...ADMIN, role: 'MEMBER' }),
    );
    expect(answer.map((t) => t.id)).toEqual(newestFirst('itk'));
    expect(rowsRead).toBeLessThan(FEW);
  });
});
