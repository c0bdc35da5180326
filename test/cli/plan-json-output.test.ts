// `gds plan --json` (and `apply --json`): stdout holds one line per table, and what the human plan says
// besides the tables (the reader's warnings, such as columns declared without types, and the dbt tests on no
// selected table) is not dropped: each is one `{"warning":…}` line on stderr, as every warning under --json.
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { Output } from '../../src/cli/output.js';
import { printPlan, printPlanNotes } from '../../src/cli/project-views.js';
import type { ProjectPlan } from '../../src/services/project-plan-types.js';

function capture(json: boolean) {
  const stdout = { text: '', write: (c: string) => ((stdout.text += c), true) };
  const stderr = { text: '', write: (c: string) => ((stderr.text += c), true) };
  return { out: new Output({ json, stdout, stderr, env: {} }), stdout, stderr };
}

const plan: ProjectPlan = {
  projectName: 'shop',
  project: { id: 'shop@con_1', from: 'derived' },
  untouched: { otherProjects: 0, byHand: 0 },
  connector: { id: 'con_1', environmentLabel: 'dev' },
  tables: [
    {
      table: 'orders',
      source: 'analytics.orders',
      action: 'create',
      tableId: null,
      uniqueId: 'model.shop.orders',
      resourceType: 'model',
      mappedTests: [],
      notMappedTests: [],
      changes: { definition: true, gate1: false, contract: false },
      diffs: {},
    },
  ],
  otherTests: [{ test: 'test.shop.source_not_null_raw_orders_id.abc', reason: 'it tests the dbt source …' }],
  warnings: [
    'model.shop.orders: only the 2 column(s) its properties file documents are declared, without types',
  ],
  counts: {
    create: 1,
    replace: 0,
    unchanged: 0,
    gone: 0,
    refused: 0,
    ownedElsewhere: 0,
    skipped: 0,
    submit: 0,
  },
};

const parsed = (text: string) =>
  text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('plan --json', () => {
  it('one line per table on stdout; the warnings and the tests on no selected table on stderr', async () => {
    const { out, stdout, stderr } = capture(true);
    await printPlan(out, plan);
    expect(parsed(stdout.text).map((l) => l['table'])).toEqual(['orders']);
    const notes = parsed(stderr.text).map((l) => (l['warning'] as { message: string }).message);
    expect(notes).toHaveLength(2);
    expect(notes.join('\n')).toContain('only the 2 column(s)');
    expect(notes.join('\n')).toContain('test.shop.source_not_null_raw_orders_id.abc');
  });

  it('apply --json, which prints no plan, says the same on stderr', () => {
    const { out, stdout, stderr } = capture(true);
    printPlanNotes(out, plan);
    expect(stdout.text).toBe('');
    expect(parsed(stderr.text)).toHaveLength(2);
  });

  it('piped to a reader slower than gds, each table waits for room: the plan is never held whole', async () => {
    // A pipe's reader that takes each chunk a turn of the event loop later, as `| jq` on a busy machine.
    let queuedMost = 0;
    let text = '';
    const pipe = new Writable({
      highWaterMark: 4096,
      write(chunk: Buffer, _encoding, done) {
        text += chunk.toString();
        setImmediate(done);
      },
    });
    const write = pipe.write.bind(pipe);
    const stdout = Object.assign(pipe, {
      write: (chunk: string) => {
        const room = write(chunk);
        queuedMost = Math.max(queuedMost, pipe.writableLength);
        return room;
      },
    });
    const stderr = { write: () => true };
    const [table] = plan.tables;
    if (table === undefined) throw new Error('no table');
    const tables = Array.from({ length: 500 }, (_, at) => ({ ...table, table: `orders_${at}` }));
    await printPlan(new Output({ json: true, stdout, stderr, env: {} }), { ...plan, tables });
    await new Promise<void>((resolve) => pipe.end(resolve));
    const lines = parsed(text);
    expect(lines.map((l) => l['table'])).toEqual(tables.map((t) => t.table));
    expect(Buffer.byteLength(text)).toBeGreaterThan(20 * 4096);
    expect(queuedMost).toBeLessThan(2 * 4096);
  });
});
