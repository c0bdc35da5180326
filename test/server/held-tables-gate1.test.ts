// GET /api/held-tables answers each table's newest gate1.yml. The server keeps the versions it has read (a
// version is never rewritten), so this checks that a version stored after a page was read is the one the next
// page answers: on PostgreSQL stored through another server process over the same database.
import { describe, expect, it } from 'vitest';
import type { createServer } from '../../src/server/app.js';
import { ENGINES } from '../helpers/engines.js';
import { oneDatabase } from '../helpers/one-database.js';
import { needs } from '../helpers/skip.js';

type Running = Awaited<ReturnType<typeof createServer>>;

const GATE = (name: string) =>
  `customPredicates:\n  - name: ${name}\n    sql: id IS NOT NULL\n    severity: HARD_FAIL\n`;

describe.each(ENGINES)('the held tables’ gate1.yml on $engine', ({ postgres, skip }) => {
  it(
    'is the newest version, also one stored after the page was read (by another server process on PostgreSQL)',
    needs(skip),
    async () => {
      const { start, remove } = await oneDatabase(postgres);
      const started: Running[] = [];
      try {
        const reader = await start();
        started.push(reader);
        const writer = postgres ? await start() : reader;
        if (writer !== reader) started.push(writer);
        const ownerOf = (running: Running) =>
          running.ready.users.find((u) => u.role === 'OWNER')?.cliToken ?? '';
        const table = reader.ready.tables.find((t) => t.name === 'customers');
        if (!table) throw new Error('no seeded customers table');
        const call = async (running: Running, method: string, path: string, body?: unknown) => {
          const response = await fetch(`${running.url}${path}`, {
            method,
            headers: {
              authorization: `Bearer ${ownerOf(running)}`,
              ...(body === undefined ? {} : { 'content-type': 'application/json' }),
            },
            ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          });
          return { status: response.status, body: (await response.json()) as Record<string, unknown> };
        };
        const held = async () => {
          const page = await call(reader, 'GET', `/api/held-tables?environment=${table.environmentLabel}`);
          expect(page.status).toBe(200);
          const tables = page.body.tables as Array<{ id: string; gate1: Record<string, unknown> | null }>;
          return tables.find((t) => t.id === table.id)?.gate1;
        };
        const apply = async (running: Running, content: string) => {
          const applied = await call(running, 'PUT', `/api/tables/${table.id}/gate1`, { content });
          expect(applied.status, JSON.stringify(applied.body)).toBe(200);
          return applied.body.version as number;
        };
        const current = async () => (await call(reader, 'GET', `/api/tables/${table.id}/gate1`)).body;

        const first = await apply(reader, GATE('held_first'));
        expect(await held()).toEqual({ ...(await current()), tableId: table.id });
        expect((await held())?.content).toBe(GATE('held_first'));

        const second = await apply(writer, GATE('held_second'));
        expect(second).toBe(first + 1);
        const after = await held();
        expect(after).toMatchObject({ tableId: table.id, version: second, content: GATE('held_second') });
        expect(after).toEqual({ ...(await current()), tableId: table.id });
      } finally {
        for (const running of started.reverse()) await running.close();
        await remove();
      }
    },
  );
});
