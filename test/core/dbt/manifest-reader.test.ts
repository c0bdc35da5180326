import { describe, expect, it } from 'vitest';
import { ManifestReader, readManifest } from '../../../src/core/dbt/manifest.js';
import { columns, manifest, model } from './helpers.js';

const raw = {
  ...manifest(
    model('orders', {
      columns: columns({ id: 'int' }),
      raw_code: 'select 1 as id',
      checksum: { name: 'sha256', checksum: 'abc' },
      depends_on: { nodes: [], macros: ['macro.shop.cents'] },
    }),
  ),
  macros: {
    'macro.shop.cents': { unique_id: 'macro.shop.cents', macro_sql: '{% macro cents() %}{% endmacro %}' },
  },
};

function read(options: { state?: boolean }) {
  const reader = new ManifestReader(options);
  for (const [section, members] of Object.entries(raw))
    if (section === 'metadata') reader.member(section, undefined, members);
    else for (const [key, value] of Object.entries(members as object)) reader.member(section, key, value);
  return reader.manifest({ object: true, nodes: true });
}

describe('ManifestReader', () => {
  it('keeps what state: selectors compare (each node, the macros) only for a --state comparison', () => {
    const compared = read({ state: true });
    const orders = compared.nodes.get('model.shop.orders');
    expect(orders?.state).toMatchObject({
      rawCode: 'select 1 as id',
      checksum: 'abc',
      macros: ['macro.shop.cents'],
    });
    expect([...compared.macros.keys()]).toEqual(['macro.shop.cents']);
    expect(readManifest(raw)).toEqual(compared);

    const alone = read({ state: false });
    const node = alone.nodes.get('model.shop.orders');
    expect(node?.state.rawCode).toBeUndefined();
    expect(node?.state.macros).toEqual([]);
    expect(alone.macros.size).toBe(0);
    // everything else is read the same
    expect({ ...node, state: undefined }).toEqual({ ...orders, state: undefined });
  });

  it('gives back a manifest it already read', () => {
    const read = readManifest(raw);
    expect(readManifest(read)).toBe(read);
  });
});
