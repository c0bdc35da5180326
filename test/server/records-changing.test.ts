// A listing read page after page by cursor while the table changes (§4.3's records, gds's cursor): a row
// that is there all along is served once, never skipped nor twice; where the service cannot promise that
// (a warehouse object without a key, rewritten or changed mid-read), it says so instead of serving a
// silently wrong listing.
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES } from '../helpers/engines.js';
import type { TestServer } from '../helpers/server.js';
import { pushDevDefinition } from '../helpers/push.js';
import { startTestServer } from '../helpers/server.js';
import { needs } from '../helpers/skip.js';
import { testClient } from '../helpers/client.js';
import type { ExportClient } from '../../src/services/records-export.js';
import { exportRecords } from '../../src/services/records-export.js';
import { CliError } from '../../src/core/errors.js';

describe.each(ENGINES)(
  'a keyless warehouse table changing under a cursor listing on $engine',
  ({ postgres, skip }) => {
    let server: TestServer;
    let token: string;
    let tableId: string;
    let viewId: string;

    beforeAll(async () => {
      if (skip !== undefined) return;
      server = await startTestServer(postgres ? { database: 'postgres' } : {});
      // A warehouse table whose id is no key (it repeats): its rows have no order but where they lie.
      await server.sql(`CREATE TABLE analytics_dev.keyless (id integer, label text)`);
      const pushed = await pushDevDefinition(server, 'keyless', ['id', 'label']);
      expect(pushed.status, JSON.stringify(pushed.body)).toBe(202);
      tableId = pushed.body.governanceId as string;
      // A view has no physical row: it is read by offset.
      await server.sql(`CREATE VIEW analytics_dev.keyless_view AS SELECT * FROM analytics_dev.keyless`);
      const view = await pushDevDefinition(server, 'keyless_view', ['id', 'label']);
      expect(view.status, JSON.stringify(view.body)).toBe(202);
      viewId = view.body.governanceId as string;
      token = (
        await server.issueToken('OWNER', {
          name: 'changing',
          env: 'dev',
          scopes: [tableId, viewId].map((id) => ({ tableId: id, permissions: ['read' as const] })),
        })
      ).tokens.accessToken;
    });

    afterAll(async () => {
      await server?.close();
    });

    const fill = async (labels: string[]) => {
      await server.sql('TRUNCATE analytics_dev.keyless');
      await server.sql(
        `INSERT INTO analytics_dev.keyless SELECT 1, label FROM unnest($1::text[]) WITH ORDINALITY AS u(label, n) ORDER BY n`,
        [labels],
      );
    };

    const read = (query: string, of = tableId) =>
      server.request('GET', `/api/tables/${of}/records${query}`, { token });

    /** Every page after `cursor`; `between` runs after the first page. */
    async function walk(between: () => Promise<unknown>, of = tableId) {
      let page = await read('?limit=2', of);
      expect(page.status).toBe(200);
      const labels: string[] = page.body.records.map((r: { label: string }) => r.label);
      await between();
      let last = page;
      while (page.body.nextCursor !== null) {
        page = await read(`?limit=2&cursor=${encodeURIComponent(page.body.nextCursor)}`, of);
        last = page;
        if (page.status !== 200) break;
        labels.push(...page.body.records.map((r: { label: string }) => r.label));
      }
      return { labels, last };
    }

    it('serves every row that stays once when a row already read is deleted', needs(skip), async () => {
      await fill(['a', 'b', 'c', 'd', 'e', 'f']);
      const { labels, last } = await walk(() =>
        server.sql(`DELETE FROM analytics_dev.keyless WHERE label = 'a'`),
      );
      expect(last.status).toBe(200);
      expect(labels).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
    });

    it(
      'says the listing changed when a row not yet read is updated (it may move before the cursor)',
      needs(skip),
      async () => {
        await fill(['a', 'b', 'c', 'd', 'e', 'f']);
        await server.sql(`DELETE FROM analytics_dev.keyless WHERE label = 'b'`);
        await server.sql('VACUUM analytics_dev.keyless');
        // The first page is a and c; e's new version may take b's free slot, before the cursor.
        const { labels, last } = await walk(() =>
          server.sql(`UPDATE analytics_dev.keyless SET label = 'E' WHERE label = 'e'`),
        );
        expect(last.status).toBe(200);
        // The rows no one wrote are served once each; the one written may be missed or twice, and the last page
        // says so.
        expect(labels.filter((l) => l.toLowerCase() !== 'e')).toEqual(['a', 'c', 'd', 'f']);
        expect(last.body.changedWhileListed, JSON.stringify({ labels, body: last.body })).toBe(true);
      },
    );

    it('says nothing changed when nothing was written while it was read', needs(skip), async () => {
      await fill(['a', 'b', 'c', 'd', 'e']);
      const { labels, last } = await walk(async () => undefined);
      expect(labels).toEqual(['a', 'b', 'c', 'd', 'e']);
      expect(last.body).not.toHaveProperty('changedWhileListed');
    });

    it(
      'refuses to go on when the object was rewritten under the listing (TRUNCATE and reload)',
      needs(skip),
      async () => {
        await fill(['a', 'b', 'c', 'd', 'e', 'f']);
        const { last } = await walk(() => fill(['a', 'b', 'c', 'd', 'e', 'f', 'g']));
        expect(last.status).toBe(409);
        expect(last.body.error.code).toBe('listing_changed');
      },
    );

    it(
      'a view (read by offset) says it changed when rows were deleted or inserted meanwhile',
      needs(skip),
      async () => {
        await fill(['a', 'b', 'c', 'd', 'e', 'f']);
        const quiet = await walk(async () => undefined, viewId);
        expect(quiet.labels.sort()).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
        expect(quiet.last.body).not.toHaveProperty('changedWhileListed');
        const deleted = await walk(
          () => server.sql(`DELETE FROM analytics_dev.keyless WHERE label IN ('a', 'b')`),
          viewId,
        );
        expect(deleted.last.status).toBe(200);
        expect(deleted.last.body.changedWhileListed).toBe(true);
      },
    );

    it('a view without an id column is read by offset too', needs(skip), async () => {
      await fill(['a', 'b', 'c']);
      await server.sql(`CREATE VIEW analytics_dev.labels_only AS SELECT label FROM analytics_dev.keyless`);
      const pushed = await pushDevDefinition(server, 'labels_only', ['label']);
      expect(pushed.status, JSON.stringify(pushed.body)).toBe(202);
      const labelsOnly = pushed.body.governanceId as string;
      const reader = (
        await server.issueToken('OWNER', {
          name: 'labels-only',
          env: 'dev',
          scopes: [{ tableId: labelsOnly, permissions: ['read' as const] }],
        })
      ).tokens.accessToken;
      const page = await server.request('GET', `/api/tables/${labelsOnly}/records?limit=2`, {
        token: reader,
      });
      expect(page.status, JSON.stringify(page.body)).toBe(200);
      expect(page.body.records.map((r: { label: string }) => r.label)).toEqual(['a', 'b']);
      const rest = await server.request(
        'GET',
        `/api/tables/${labelsOnly}/records?limit=2&cursor=${encodeURIComponent(page.body.nextCursor)}`,
        { token: reader },
      );
      expect(rest.status, JSON.stringify(rest.body)).toBe(200);
      expect(rest.body.records.map((r: { label: string }) => r.label)).toEqual(['c']);
    });

    it('the GraphQL door says so too, on its last page', needs(skip), async () => {
      await fill(['a', 'b', 'c', 'd', 'e', 'f']);
      const page = (after: string | null) =>
        server.request('POST', `${server.origin}/graphql`, {
          token,
          body: {
            query:
              'query($t: ID!, $after: String) { records(tableId: $t, first: 2, after: $after) { nextCursor changedWhileListed } }',
            variables: { t: viewId, after },
          },
        });
      let answer = await page(null);
      await server.sql(`DELETE FROM analytics_dev.keyless WHERE label IN ('a', 'b')`);
      while (answer.body.data?.records.nextCursor != null)
        answer = await page(answer.body.data.records.nextCursor);
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      expect(answer.body.data.records.changedWhileListed).toBe(true);
    });

    /** exportRecords through the real client, `between` run once after the first page. */
    async function exportWhile(between: () => Promise<unknown>) {
      const client = testClient(server.url, token);
      let pages = 0;
      const wrapped: ExportClient = {
        records: {
          ...client.records,
          list: async (...args: Parameters<typeof client.records.list>) => {
            if (pages++ === 1) await between();
            return client.records.list(...args);
          },
        },
      };
      const chunks: string[] = [];
      const stdout = new Writable({
        write(chunk: Buffer, _encoding, done) {
          chunks.push(chunk.toString('utf8'));
          done();
        },
      });
      const outcome = await exportRecords(wrapped, tableId, { format: 'ndjson', pageSize: 2, stdout }).then(
        (result) => ({ result, error: undefined }),
        (error: unknown) => ({ result: undefined, error }),
      );
      const labels = chunks
        .join('')
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => (JSON.parse(line) as { label: string }).label);
      return { ...outcome, labels };
    }

    it(
      'export fails (exit 6) when a row was written while it read, after writing what it read',
      needs(skip),
      async () => {
        await fill(['a', 'b', 'c', 'd', 'e', 'f']);
        const { error, labels } = await exportWhile(() =>
          server.sql(`UPDATE analytics_dev.keyless SET label = 'E' WHERE label = 'e'`),
        );
        expect(error).toBeInstanceOf(CliError);
        expect(error).toMatchObject({ exitCode: 6, code: 'changed_while_exported' });
        expect(labels.filter((l) => l.toLowerCase() !== 'e')).toEqual(['a', 'b', 'c', 'd', 'f']);
        const quiet = await exportWhile(async () => undefined);
        expect(quiet.error).toBeUndefined();
        expect(quiet.result?.rows).toBe(6);
      },
    );

    it(
      'export fails (exit 6, listing_changed) when the object is rewritten under it',
      needs(skip),
      async () => {
        await fill(['a', 'b', 'c', 'd', 'e', 'f']);
        const { error } = await exportWhile(() => fill(['x', 'y']));
        expect(error).toBeInstanceOf(CliError);
        expect(error).toMatchObject({ exitCode: 6, code: 'listing_changed' });
        expect((error as CliError).message).toContain('rewritten');
      },
    );
  },
);
