// The --jq filters gds evaluates without jq (src/cli/jq-subset.ts) must answer exactly as jq does: every
// filter the subset takes is compiled by jq, and on every record the subset answers, its lines are jq's.
import { describe, expect, it } from 'vitest';
import { runJqOver } from '../../src/cli/jq.js';
import { compileSimpleFilter } from '../../src/cli/jq-subset.js';
import { Output } from '../../src/cli/output.js';
import { ndjsonLine } from '../../src/core/ndjson.js';

const RECORDS: object[] = [
  {
    id: 'tbl_1',
    name: 'customers',
    state: 'CERTIFIED',
    mode: 'MODE_A',
    n: 1,
    source: null,
    ok: true,
    a: { b: { c: 'deep' } },
  },
  { id: 'tbl_2', name: 'orders', state: 'DRAFT', n: 2, ok: false, a: { b: null }, tags: ['x', 'y'] },
  { id: 'tbl_3', name: 'Ünïcödé ✓ 😀', state: 'QUARANTINED', n: -7, a: 'a string', list: [1, { x: 2 }] },
  { id: 'tbl_4', name: 'tab\there\nnewline "quoted" back\\slash', n: 1.5, a: [1, 2, 3] },
  { id: 'tbl_5', name: 'big', n: 2 ** 64, x: 1e21, y: -0, z: 0.1 },
  { id: 'tbl_6', name: '', state: 'CERTIFIED', n: 0, a: { b: { c: 3 } }, e: {}, f: [] },
  { id: 'tbl_7', name: 'del\u007f c1\u0085 ls\u2028 esc\u001b[31m bell\u0007', state: null },
  { id: 'tbl_8', name: 'pair 😀 \ud83d\ude00', '10': 'numeric key', 'with-dash': 1 },
  { id: 8, name: 42, state: ['CERTIFIED'], a: { b: { c: { d: true } } } },
  { nested: { id: 'inner', state: 'CERTIFIED' }, state: 'certified' },
  {},
];

const FILTERS = [
  '.',
  '.id',
  '.name',
  '.state',
  '.n',
  '.missing',
  '.a',
  '.a.b',
  '.a.b.c',
  '.a.b.c.d',
  '.nested.id',
  '.source',
  '.tags',
  '.x',
  '.y',
  '.z',
  'select(.state == "CERTIFIED")',
  'select(.state != "CERTIFIED")',
  'select(.state == "CERTIFIED") | .name',
  'select(.state == "CERTIFIED") | .id',
  'select( .state == "DRAFT" ) | .id',
  'select(.n == 1)',
  'select(.n == 2) | .name',
  'select(.n == -7) | .id',
  'select(.n == 0)',
  'select(.ok == true) | .id',
  'select(.ok == false) | .id',
  'select(.source == null) | .id',
  'select(.state == null) | .id',
  'select(.ok)',
  'select(.a.b) | .id',
  'select(.a.b.c == "deep") | .name',
  'select(.nested.state == "CERTIFIED") | .nested.id',
  '{id, name}',
  '{id,name,state}',
  '{ id , n }',
  '{id: .a.b}',
  '{id, inner: .nested.id}',
  '{x}',
  '.a | .b',
  '.a|.b|.c',
  'select(.state == "CERTIFIED") | {id, state}',
  '{id, name} | .name',
  '. | .id',
  '.id | .x',
  'length',
  '.name | length',
  '.a | length',
  '.tags | length',
  '.n | length',
  '.ok | length',
  '.e | length',
  '.f | length',
  '.missing | length',
  '{id, name} | length',
  '.name | ascii_downcase',
  '.name | ascii_upcase',
  '.state | ascii_downcase',
  '.id | ascii_downcase',
  '.n | ascii_upcase',
  'select(.state == "CERTIFIED") | .name | ascii_upcase',
  '.name|ascii_downcase|length',
];

/** jq over each record on its own, as --jq runs it (jq.ts): the text of its output lines, or 'ERROR'. One
 *  jq run per filter. */
async function jqAnswers(filter: string): Promise<string[]> {
  const mark = '\u0001REC';
  const { text, failure } = await runJqOver(
    RECORDS.map(ndjsonLine),
    `"${mark.replace('\u0001', '\\u0001')}", (try (${filter}) catch "\\u0001ERROR")`,
  );
  if (failure !== undefined) throw failure;
  const parts = `\n${text}`.split(`\n${mark}`).slice(1);
  return parts.map((part) => (part.includes('\u0001ERROR') ? 'ERROR' : part.slice(1)));
}

/**
 * Checks that the subset takes `filter` and that jq compiles it (a compile error rejects) and answers each
 * record the subset answers with the same text; answers how many records the subset answered.
 */
async function expectSameAsJq(filter: string): Promise<number> {
  const simple = compileSimpleFilter(filter);
  expect(simple, filter).toBeDefined();
  const expected = await jqAnswers(filter);
  let answered = 0;
  RECORDS.forEach((record, index) => {
    const mine = simple?.(ndjsonLine(record));
    if (mine === undefined) return;
    answered += 1;
    expect(mine.join('\n'), `${filter} on record ${index}`).toBe(expected[index]);
  });
  return answered;
}

describe('--jq filters gds evaluates itself', () => {
  it('takes every filter of the list, and each answers as jq does wherever it answers', async () => {
    let answered = 0;
    for (const filter of FILTERS) answered += await expectSameAsJq(filter);
    // Most of them are answered here (the rest go to jq): the comparison is not vacuous.
    expect(answered).toBeGreaterThan(FILTERS.length * RECORDS.length * 0.6);
  });

  it('leaves to jq what jq would fail on or might print otherwise', () => {
    const answer = (filter: string, record: object) => compileSimpleFilter(filter)?.(ndjsonLine(record));
    expect(answer('.a.b', { a: 'text' })).toBeUndefined(); // jq: cannot index string
    expect(answer('.a', [1])).toBeUndefined();
    expect(answer('.n', { n: 1.5 })).toBeUndefined();
    expect(answer('.', { n: 2 ** 60 })).toBeUndefined();
    expect(answer('.name', { name: 'a\u007fb' })).toBeUndefined();
    expect(answer('.name', { name: 'a\u0000b' })).toBeUndefined(); // jq-wasm's output ends at a NUL
    expect(answer('.name', { name: '' })).toBeUndefined();
    expect(answer('.', { '1': 'a' })).toBeUndefined();
    expect(answer('.id', { id: 'a', n: 'lone \ud800' })).toBeUndefined(); // jq: parse error
  });

  it('refuses every filter outside its grammar (jq then runs it)', () => {
    for (const filter of [
      '',
      ' ',
      '.[]',
      '.[0]',
      '.["id"]',
      '.id?',
      '. id',
      '.a .b',
      '.and',
      '.if.then',
      '{if}',
      '{a, a}',
      '{"a"}',
      '{(.a): 1}',
      '{}',
      '.id, .name',
      'select(.n > 1)',
      'select(.n == 1.5)',
      'select(.n == 1e3)',
      'select(.n == 0123)',
      'select(.a == "x\\"y")',
      'select(.a == "\\(1)")',
      'select(.a == .b)',
      'select("x" == .a)',
      'select(.a == "b") | .c == "d"',
      'map(.id)',
      'length(.)',
      'ascii',
      'ascii_downcase(.a)',
      '.id | tostring',
      'select(length == 1)',
      '$__loc__',
      'input',
      '..',
      '.a | select(.b == "x\u0007")',
      '|.id',
      '.id|',
      '.id || .name',
      '.a-b',
      '.a.1',
    ]) {
      expect(compileSimpleFilter(filter), JSON.stringify(filter)).toBeUndefined();
    }
  });

  it('takes only filters jq compiles, over generated ones', async () => {
    const paths = ['.', '.id', '.a.b', '.state', '.x_1', '._'];
    const literals = ['"CERTIFIED"', '""', '1', '-2', '0', 'true', 'false', 'null', '"a b|c)"', '"{x}"'];
    const stages = [
      ...paths,
      ...paths.filter((p) => p !== '.').map((p) => `select(${p})`),
      ...paths.flatMap((p) => literals.flatMap((l) => [`select(${p} == ${l})`, `select(${p} != ${l})`])),
      '{id}',
      '{id, state}',
      '{id: .a.b, s: .state}',
      'length',
      'ascii_downcase',
      'ascii_upcase',
    ];
    const generated: string[] = [];
    for (let i = 0; i < 120; i++) {
      const count = 1 + (i % 3);
      generated.push(
        Array.from({ length: count }, (_, k) => stages[(i * 7 + k * 13) % stages.length]).join(
          i % 2 === 0 ? ' | ' : '|',
        ),
      );
    }
    for (const filter of generated) await expectSameAsJq(filter);
  });
});

describe('Output with a filter gds evaluates itself', () => {
  class Capture {
    text = '';
    readonly isTTY = false;
    write(chunk: string): boolean {
      this.text += chunk;
      return true;
    }
  }

  it('writes at once, in order with the records jq answers, and stops at jq’s failure', async () => {
    const stdout = new Capture();
    const out = new Output({ json: true, jq: '.a.b', stdout, stderr: new Capture(), env: {} });
    expect(out.jqIsSimple).toBe(true);
    out.record({ a: { b: 'one' } });
    expect(stdout.text).toBe('one\n'); // no jq run: written before any wait
    out.record({ a: { b: 1.5 } }); // printed by jq (not a safe integer)
    out.record({ a: { b: 'three' } }); // queued behind it, to keep the order
    out.record({ a: 'text' }); // jq fails: cannot index a string
    out.record({ a: { b: 'five' } });
    await expect(out.flush()).rejects.toMatchObject({ code: 'jq_failed' });
    expect(stdout.text).toBe('one\n1.5\nthree\n');
  });
});
