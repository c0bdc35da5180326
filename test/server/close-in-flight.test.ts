// Closing the server waits for the requests it is still handling before its database closes. Fastify's close
// waits for open connections only, so a request whose client went away (a CLI that ended on the first of two
// answers) went on after the pool had ended: its next statement failed, 500, and its work was half-done (seen
// in CI: `gds plan` with a revoked token, exit 3 on the first 401 while the second request was still checking
// its token). Arranged on PostgreSQL: the request's token check waits on a lock the test holds while the
// client goes away and the server closes.
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createServer } from '../../src/server/app.js';
import { createPostgresDatabase, postgresTestUrl } from '../helpers/server.js';
import { needs } from '../helpers/skip.js';

const target = postgresTestUrl();

async function until(condition: () => Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((resolve) => setImmediate(resolve));
}

const refused = (origin: string) =>
  new Promise<boolean>((resolve) => {
    const { hostname, port } = new URL(origin);
    const socket = connect(Number(port), hostname);
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });

describe('closing the server', () => {
  it(
    'answers a request whose client went away from an open database, then closes it',
    needs('skip' in target ? target.skip : undefined),
    async () => {
      const database = await createPostgresDatabase({ migrated: true });
      const locker = new pg.Client({ connectionString: database.url });
      try {
        const running = await createServer({
          port: 0,
          contractCheck: true,
          jobs: 'manual',
          databaseUrl: database.url,
        });
        await locker.connect();
        await locker.query('BEGIN');
        await locker.query('LOCK TABLE gds.cli_tokens IN ACCESS EXCLUSIVE MODE');
        // An unknown CLI token: its check reads gds.cli_tokens (held), then counts a failed authentication.
        const sent = httpRequest(`${running.url}/api/connectors`, {
          headers: { authorization: 'Bearer cli_unknownTokenForTheCloseTest' },
        });
        sent.on('error', () => undefined);
        sent.end();
        await until(async () => {
          const { rows } = await locker.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
              WHERE c.relname = 'cli_tokens' AND NOT l.granted`,
          );
          return (rows[0]?.n ?? 0) > 0;
        });
        sent.destroy();
        const closing = running.close();
        await until(() => refused(running.origin));
        await locker.query('COMMIT');
        await closing;
        expect(running.contract?.violations ?? []).toEqual([]);
        // The failed authentication the request counted is stored: its work ran to the end.
        const { rows } = await locker.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM gds.rate_windows WHERE key LIKE 'failed-auth:%'`,
        );
        expect(rows[0]?.n).toBeGreaterThan(0);
      } finally {
        await locker.end().catch(() => undefined);
        await database.drop();
      }
    },
  );
});
