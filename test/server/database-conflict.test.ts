// A deadlock or serialization failure (SQLSTATE 40P01 / 40001) is 503 `database_conflict` with
// Retry-After, nothing stored, as src/contract/openapi.yaml documents on every write (the contract check of
// the test server fails the file on an undocumented status). The failure is arranged with a trigger that
// raises the SQLSTATE, as PostgreSQL would under a real deadlock between two server processes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.js';
import { readWriteToken, startTestServer } from '../helpers/server.js';

let server: TestServer;
let crm: string;
let token: string;

beforeAll(async () => {
  server = await startTestServer();
  crm = server.table('crm_contacts').id;
  token = await readWriteToken(server, crm, 'conflict');
});

afterAll(async () => {
  await server?.close();
});

describe('503 database_conflict', () => {
  it.each(['40P01', '40001'])(
    'SQLSTATE %s on a write: 503, Retry-After, nothing stored',
    async (sqlstate) => {
      await server.sql(`CREATE OR REPLACE FUNCTION gds.conflict() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'parallel request' USING ERRCODE = '${sqlstate}'; END $$`);
      await server.sql(
        'CREATE TRIGGER conflict BEFORE INSERT ON gds.records FOR EACH ROW EXECUTE FUNCTION gds.conflict()',
      );
      try {
        const response = await server.request('POST', `/api/tables/${crm}/records`, {
          token,
          body: { email: 'conflict@example.com', full_name: 'Conflict' },
        });
        expect(response.status).toBe(503);
        expect(response.headers.get('retry-after')).toBe('1');
        expect(response.body.error).toMatchObject({ code: 'database_conflict', details: { sqlstate } });
      } finally {
        await server.sql('DROP TRIGGER conflict ON gds.records');
      }
      const stored = await server.sql(
        `SELECT count(*)::int AS n FROM gds.records WHERE data->>'email' = $1`,
        ['conflict@example.com'],
      );
      expect(stored[0].n).toBe(0);
      // The contract documents it (close() fails the file on an undocumented status).
      expect(server.violations()).toEqual([]);
    },
  );
});
