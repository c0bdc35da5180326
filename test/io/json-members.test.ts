import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { CliError } from '../../src/core/errors.js';
import { JsonSyntaxError, readJsonMembers } from '../../src/io/json-members.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gds-json-members-'));
});

const options = {
  flag: '--dbt',
  maxBytes: 1024 * 1024,
  what: 'a dbt manifest',
  each: ['nodes'],
  whole: ['metadata'],
};

async function read(text: string | Buffer, elements?: string[]) {
  const path = join(dir, `f${Math.random().toString(36).slice(2)}.json`);
  await writeFile(path, text);
  const members: Array<[string, string | undefined, unknown]> = [];
  const outline = await readJsonMembers(
    path,
    { ...options, ...(elements ? { elements } : {}) },
    (name, key, value) => members.push([name, key, value]),
  );
  return { outline, members };
}

async function failure(text: string | Buffer): Promise<unknown> {
  return read(text).then(
    () => undefined,
    (e: unknown) => e,
  );
}

describe('readJsonMembers', () => {
  it('hands over each member of the named objects, and the named members whole, in file order', async () => {
    const { outline, members } = await read(
      JSON.stringify({
        metadata: { dbt_schema_version: 'v12' },
        nodes: { 'model.a': { name: 'a', columns: { id: {} } }, 'test.b': [1, 2] },
        child_map: { 'model.a': ['test.b'] },
        sources: 'not asked for',
      }),
    );
    expect(members).toEqual([
      ['metadata', undefined, { dbt_schema_version: 'v12' }],
      ['nodes', 'model.a', { name: 'a', columns: { id: {} } }],
      ['nodes', 'test.b', [1, 2]],
    ]);
    expect(outline.root).toBe('object');
    expect(Object.fromEntries(outline.members)).toEqual({
      metadata: 'object',
      nodes: 'object',
      child_map: 'object',
      sources: 'value',
    });
  });

  it('a member written across many read chunks is handed over whole, with its non-ASCII text', async () => {
    const sql = `select 'café ☕' as x -- ${'y'.repeat(200_000)}`;
    const { members } = await read(JSON.stringify({ nodes: { 'model.big': { sql }, 'model.next': {} } }));
    expect(members.map(([, key]) => key)).toEqual(['model.big', 'model.next']);
    expect((members[0]?.[2] as { sql: string }).sql).toBe(sql);
  });

  it('says what the root and the named members were when they are not objects', async () => {
    expect((await read('[{"nodes": {}}]')).outline).toEqual({ root: 'array', members: new Map() });
    const { outline, members } = await read('{"nodes": [{"a": 1}], "metadata": 3}');
    expect(members).toEqual([['metadata', undefined, 3]]);
    expect(Object.fromEntries(outline.members)).toEqual({ nodes: 'array', metadata: 'value' });
  });

  it("hands over each element of the arrays named in elements (run_results.json's results), key undefined", async () => {
    const { members } = await read('{"results": [{"a": 1}, [2], 3], "nodes": [{"b": 1}], "metadata": {}}', [
      'results',
    ]);
    expect(members).toEqual([
      ['results', undefined, { a: 1 }],
      ['results', undefined, [2]],
      ['results', undefined, 3],
      ['metadata', undefined, {}],
    ]);
  });

  it('empty objects and arrays, strings holding brackets and quotes, and members not asked for are read past', async () => {
    const doc = {
      exposures: {},
      disabled: [],
      nodes: { 'model.a': { sql: 'select "}" as x, \'[\' -- \\"' }, 'model.b': {} },
      child_map: { 'model.a': [], 'model.b': ['model.a'] },
      metadata: { a: [{}, []] },
      nothing: null,
    };
    const { outline, members } = await read(JSON.stringify(doc, null, 2));
    expect(members).toEqual([
      ['nodes', 'model.a', doc.nodes['model.a']],
      ['nodes', 'model.b', {}],
      ['metadata', undefined, doc.metadata],
    ]);
    expect(outline.members.get('disabled')).toBe('array');
    expect(outline.members.get('nothing')).toBe('value');
  });

  it('strings with escaped quotes and runs of backslashes, short and long, wherever a read chunk ends', async () => {
    // Each text holds brackets right after an escaped quote, or ends with a backslash before its closing
    // quote, next to a text of brackets: a string's end misread anywhere cuts the members elsewhere. The
    // file is read in chunks of 64 KiB: each document moves the texts one byte across the first boundary.
    const texts = {
      short: '"}]},{"',
      ending: 'abc\\',
      brackets: '}]},{[',
      run: '\\\\"}]\\',
      long: `${'x'.repeat(40)}"}]},{${'y'.repeat(40)}\\`,
      after: '}]},{[',
    };
    const prefix = '{"nodes":{"model.a":{"pad":"'.length;
    for (let shift = 0; shift < 160; shift += 1) {
      const node = { pad: 'p'.repeat(64 * 1024 - prefix - 150 + shift), ...texts, list: [texts, {}] };
      const doc = { nodes: { 'model.a': node, 'model.b': texts }, metadata: texts };
      const { members } = await read(JSON.stringify(doc));
      expect(members, `shift ${shift}`).toEqual([
        ['nodes', 'model.a', node],
        ['nodes', 'model.b', texts],
        ['metadata', undefined, texts],
      ]);
    }
  });

  it('text that is not JSON: JsonSyntaxError (a cut file, trailing text, an empty file, a missing comma)', async () => {
    for (const text of [
      '{"nodes": {"a": {}',
      '{"nodes": {}} trailing',
      '',
      '  ',
      '{"nodes": {"a": 1 "b": 2}}',
      '{"nodes": {"a": 1,}}',
      '{"nodes": [1,]}',
      '{"nodes": {"a" 1}}',
      '{"nodes": {1: 2}}',
      '{"nodes": {"a": 1]}',
      '{"nodes": {}, }',
      '{"nodes": {} "x": 1}',
      '{"a": tru}',
      '[1, 2',
    ]) {
      const error = await failure(text);
      expect(error, text).toBeInstanceOf(JsonSyntaxError);
    }
  });

  it('bytes that are not UTF-8: the usage error of every input, naming the byte', async () => {
    const error = await failure(Buffer.from('{"nodes": {"caf\xe9": 1}}', 'latin1'));
    expect(error).toBeInstanceOf(CliError);
    expect(error).toMatchObject({ exitCode: 2, code: 'input_not_utf8', details: { byteOffset: 15 } });
  });

  it('a failure of the caller is its own, not a syntax error', async () => {
    const path = join(dir, 'throws.json');
    await writeFile(path, '{"nodes": {"a": 1}}');
    const thrown = new RangeError('mine');
    await expect(
      readJsonMembers(path, options, () => {
        throw thrown;
      }),
    ).rejects.toBe(thrown);
  });
});
