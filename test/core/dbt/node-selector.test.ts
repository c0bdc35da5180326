// The --exclude value gds plan and apply name for a model: its node's name from its unique id, which dbt's
// selection matches (an aliased model's alias and a promoted table's name it does not).
import { describe, expect, it } from 'vitest';
import { readManifest } from '../../../src/core/dbt/manifest.js';
import { nodeSelector } from '../../../src/core/dbt/node-selector.js';
import { selectNodes } from '../../../src/core/dbt/select.js';
import { manifest, model } from './helpers.js';

describe('nodeSelector', () => {
  const project = readManifest(
    manifest(
      model('customers', { alias: 'dim_customers' }),
      model('customers_production'),
      model('orders', { unique_id: 'model.shop.orders.v2', version: 2, fqn: ['shop', 'orders', 'v2'] }),
      model('orders', { unique_id: 'model.shop.orders.v1', version: 1, fqn: ['shop', 'orders', 'v1'] }),
      { ...model('countries'), unique_id: 'seed.shop.countries', resource_type: 'seed' },
    ),
  );

  it.each([
    ['model.shop.customers', 'customers'],
    ['model.shop.orders.v2', 'orders_v2'],
    ['seed.shop.countries', 'countries'],
  ])('%s is --exclude %s, which excludes that node alone', (uniqueId, selector) => {
    expect(nodeSelector(uniqueId)).toBe(selector);
    const all = selectNodes(project, {});
    expect(all).toContain(uniqueId);
    expect(selectNodes(project, { exclude: [selector] })).toEqual(all.filter((id) => id !== uniqueId));
  });

  it.each([null, 'customers', 'model.shop', 'model.shop.orders.2.extra'])('%s names no node', (uniqueId) => {
    expect(nodeSelector(uniqueId)).toBeUndefined();
  });
});
