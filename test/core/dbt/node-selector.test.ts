// The --exclude value gds plan and apply name for a model: its node's name from its unique id, which dbt's
// selection matches (an aliased model's alias and a promoted table's name it does not).
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { type Manifest, readManifest } from '../../../src/core/dbt/manifest.js';
import { askedNodeSelectors, nodeSelector, nodeSelectors } from '../../../src/core/dbt/node-selector.js';
import { selectNodes } from '../../../src/core/dbt/select.js';
import { sharedFixturesDir } from '../../helpers/fixtures.js';
import { needs, noSharedFixtures } from '../../helpers/skip.js';
import { manifest, model } from './helpers.js';

/** `--exclude selector` leaves out the node and nothing else. */
function expectExcludesAlone(project: Manifest, uniqueId: string, selector: string): void {
  const all = selectNodes(project, {});
  expect(all).toContain(uniqueId);
  expect(selectNodes(project, { exclude: [selector] })).toEqual(all.filter((id) => id !== uniqueId));
}

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
    ['model.shop.orders.v2', 'orders.v2'],
    ['seed.shop.countries', 'countries'],
  ])('%s is --exclude %s, which excludes that node alone', (uniqueId, selector) => {
    expect(nodeSelector(uniqueId)).toBe(selector);
    expectExcludesAlone(project, uniqueId, selector);
  });

  it.each([null, 'customers', 'model.shop', 'model.shop.orders.2.extra'])('%s names no node', (uniqueId) => {
    expect(nodeSelector(uniqueId)).toBeUndefined();
  });

  // A name that reaches other nodes too (dbt's default method matches a folder or package of that name, and a
  // namesake in another package): the hint names the node's fqn, which only it has.
  describe('nodeSelectors', () => {
    const shared = readManifest(
      manifest(
        model('orders', { fqn: ['shop', 'orders', 'orders'] }),
        model('order_items', { fqn: ['shop', 'orders', 'order_items'] }),
        model('customers'),
        model('customers', { package_name: 'crm' }),
        model('payments'),
        model('dim_orders', {
          unique_id: 'model.shop.dim_orders.v2',
          version: 2,
          fqn: ['shop', 'dim_orders', 'v2'],
        }),
        model('dim_orders', {
          package_name: 'crm',
          unique_id: 'model.crm.dim_orders.v2',
          version: 2,
          fqn: ['crm', 'dim_orders', 'v2'],
        }),
      ),
    );
    const selectorOf = nodeSelectors([...shared.nodes.values()]);

    it.each([
      ['model.shop.orders', 'fqn:shop.orders.orders'],
      ['model.shop.order_items', 'order_items'],
      ['model.shop.customers', 'fqn:shop.customers'],
      ['model.crm.customers', 'fqn:crm.customers'],
      ['model.shop.payments', 'payments'],
      ['model.crm.dim_orders.v2', 'package:crm,fqn:crm.dim_orders.v2'],
    ])('%s is --exclude %s, which excludes that node alone', (uniqueId, selector) => {
      expect(selectorOf(uniqueId)).toBe(selector);
      expectExcludesAlone(shared, uniqueId, selector);
    });

    it('the bare name would have excluded more (what the hint gave before)', () => {
      expect(selectNodes(shared, { exclude: [nodeSelector('model.shop.orders') ?? ''] })).not.toContain(
        'model.shop.order_items',
      );
    });
  });
  // A folder beside the model that shares its fqn (`models/orders/orders/` beside `models/orders/orders.sql`):
  // `fqn:shop.orders.orders` is a prefix of the folder's models' fqns, and so reaches them too; the model's file
  // reaches it alone (with its package where another package has a file at that path).
  describe('nodeSelectors, a folder named as the model beside it', () => {
    const nested = readManifest(
      manifest(
        model('orders', { folders: ['orders'] }),
        model('order_lines', { folders: ['orders', 'orders'] }),
        model('orders', { folders: ['orders'], package_name: 'crm' }),
        model('order_notes', { folders: ['orders', 'orders'], package_name: 'crm' }),
        model('payments'),
      ),
    );
    const selectorOf = nodeSelectors([...nested.nodes.values()]);

    it.each([
      ['model.shop.orders', 'package:shop,path:models/orders/orders.sql'],
      ['model.crm.orders', 'package:crm,path:models/orders/orders.sql'],
      ['model.shop.order_lines', 'order_lines'],
      ['model.shop.payments', 'payments'],
    ])('%s is --exclude %s, which excludes that node alone', (uniqueId, selector) => {
      expect(selectorOf(uniqueId)).toBe(selector);
      expectExcludesAlone(nested, uniqueId, selector);
    });

    it('one package: the path alone', () => {
      const single = readManifest(
        manifest(
          model('orders', { folders: ['orders'] }),
          model('order_lines', { folders: ['orders', 'orders'] }),
        ),
      );
      expect(nodeSelectors([...single.nodes.values()])('model.shop.orders')).toBe(
        'path:models/orders/orders.sql',
      );
      expectExcludesAlone(single, 'model.shop.orders', 'path:models/orders/orders.sql');
      // What the hint gave before reaches the folder's model too.
      expect(selectNodes(single, { exclude: ['fqn:shop.orders.orders'] })).toEqual([]);
    });

    // dbt's path: globs the value in the root project's folder (PathSelectorMethod: root.glob), and before 1.4
    // skipped every node whose root_path was not the project's: a package's file is no path dbt selects it by,
    // unless (1.4 on) the root project has a file at that path too. The file's name, with its package and fqn
    // (file: from dbt 1.2), reaches it alone.
    const versioned = (dbtVersion: string, ...nodes: Array<Record<string, unknown>>) => {
      const written = manifest(...nodes);
      (written['metadata'] as Record<string, unknown>)['dbt_version'] = dbtVersion;
      return readManifest(written);
    };

    it("a package's file the root project does not have: not path:, which dbt globs in the root project", () => {
      const onlyCrm = versioned(
        '1.8.0',
        model('orders', { folders: ['orders'], package_name: 'crm' }),
        model('order_notes', { folders: ['orders', 'orders'], package_name: 'crm' }),
        model('payments'),
      );
      const hint = nodeSelectors([...onlyCrm.nodes.values()], onlyCrm)('model.crm.orders');
      expect(hint).toBe('package:crm,fqn:crm.orders.orders,file:orders.sql');
      expectExcludesAlone(onlyCrm, 'model.crm.orders', hint ?? '');
    });

    it('before dbt 1.4 path: skips every package node: the file name and fqn instead (the fqn alone before 1.2)', () => {
      const nodes = [
        model('orders', { folders: ['orders'] }),
        model('order_lines', { folders: ['orders', 'orders'] }),
        model('orders', { folders: ['orders'], package_name: 'crm' }),
        model('order_notes', { folders: ['orders', 'orders'], package_name: 'crm' }),
      ];
      const old = versioned('1.3.2', ...nodes);
      const selectorOf = nodeSelectors([...old.nodes.values()], old);
      expect(selectorOf('model.crm.orders')).toBe('package:crm,fqn:crm.orders.orders,file:orders.sql');
      expectExcludesAlone(old, 'model.crm.orders', 'package:crm,fqn:crm.orders.orders,file:orders.sql');
      // The root project's own model: its path still.
      expect(selectorOf('model.shop.orders')).toBe('package:shop,path:models/orders/orders.sql');
      expectExcludesAlone(old, 'model.shop.orders', 'package:shop,path:models/orders/orders.sql');
      const older = versioned('1.1.5', ...nodes);
      expect(nodeSelectors([...older.nodes.values()], older)('model.crm.orders')).toBe(
        'package:crm,fqn:crm.orders.orders',
      );
    });

    it.each([
      // A snapshot defined in a .yml that documents other nodes too (path: matches their patch_path).
      ['a .yml file', 'snapshots/orders/orders.yml'],
      // path: reads `models//orders` as `models/orders`: not the file's own spelling.
      ['a path with an empty part', 'models//orders/orders.sql'],
    ])('%s is never the hint: the package and fqn as before', (_what, file) => {
      const odd = readManifest(
        manifest(
          model('orders', { folders: ['orders'], original_file_path: file }),
          model('order_lines', { folders: ['orders', 'orders'] }),
        ),
      );
      expect(nodeSelectors([...odd.nodes.values()])('model.shop.orders')).toBe(
        'package:shop,fqn:shop.orders.orders',
      );
    });
  });
});

// The plan keeps the hints of its selected nodes only, computed as the project is declared: the same answers
// as nodeSelectors', whose index of every node's keys is built only for a name that reaches more than one.
describe('askedNodeSelectors', () => {
  const declaredIds = (project: Manifest) =>
    [...project.nodes.values()]
      .filter((n) => ['model', 'seed', 'snapshot'].includes(n.resourceType) && n.enabled)
      .map((n) => n.uniqueId);
  const expectSameHints = (project: Manifest, from = 'the manifest') => {
    const nodes = [...project.nodes.values()].filter((n) => n.enabled);
    const asked = declaredIds(project);
    expect(asked.length, from).toBeGreaterThan(0);
    const indexed = nodeSelectors(nodes, project);
    const computed = askedNodeSelectors(nodes, asked, project);
    for (const id of asked) expect(computed(id), `${from}: ${id}`).toBe(indexed(id));
  };

  it.each([
    [
      'a folder and a namesake in another package',
      [
        model('orders', { fqn: ['shop', 'orders', 'orders'] }),
        model('order_items', { fqn: ['shop', 'orders', 'order_items'] }),
        model('customers'),
        model('customers', { package_name: 'crm' }),
        model('payments'),
      ],
    ],
    // dbt's default method reads a package's name too: a model named as a package reaches its nodes.
    [
      'a model named as a package',
      [model('crm'), model('leads', { package_name: 'crm' }), model('payments')],
    ],
    // `dim_orders_v2` is also what a versioned model's last two parts joined by `_` read.
    [
      "a model named as a versioned model's joined name",
      [
        model('dim_orders_v2'),
        model('dim_orders', {
          unique_id: 'model.shop.dim_orders.v2',
          version: 2,
          fqn: ['shop', 'dim_orders', 'v2'],
        }),
        model('payments'),
      ],
    ],
    [
      'a folder named as the model beside it',
      [
        model('orders', { folders: ['orders'] }),
        model('order_lines', { folders: ['orders', 'orders'] }),
        model('orders', { folders: ['orders'], package_name: 'crm' }),
        model('payments'),
      ],
    ],
    ['a folder with a dot in its name', [model('x', { fqn: ['shop', 'staging.v1', 'x'] }), model('staging')]],
  ])('%s: each model the hint nodeSelectors gives', (_what, nodes) => {
    const project = readManifest(manifest(...nodes));
    expectSameHints(project);
    // Each hint leaves out its model alone.
    const computed = askedNodeSelectors([...project.nodes.values()], declaredIds(project), project);
    for (const id of declaredIds(project)) expectExcludesAlone(project, id, computed(id) ?? '');
  });

  it('a node not asked about is answered with its name; an id that names no node, with nothing', () => {
    const project = readManifest(
      manifest(
        model('orders', { fqn: ['shop', 'orders', 'orders'] }),
        model('order_items', { fqn: ['shop', 'orders', 'order_items'] }),
      ),
    );
    const computed = askedNodeSelectors([...project.nodes.values()], ['model.shop.order_items'], project);
    expect(computed('model.shop.order_items')).toBe('order_items');
    expect(computed('model.shop.orders')).toBe('orders');
    expect(computed(null)).toBeUndefined();
  });

  // One test over them all: without ../shared it is skipped, saying why (an it.each of none would vanish).
  it(
    'on the real manifests: every declared node the hint nodeSelectors gives',
    needs(noSharedFixtures),
    () => {
      const paths = ['dbt/', 'real/dbt/'].flatMap((folder) =>
        readdirSync(`${sharedFixturesDir}${folder}`)
          .filter((f) => f.endsWith('manifest.json'))
          .map((f) => `${folder}${f}`),
      );
      expect(paths.length).toBeGreaterThan(20);
      for (const path of paths)
        expectSameHints(readManifest(JSON.parse(readFileSync(`${sharedFixturesDir}${path}`, 'utf8'))), path);
    },
  );
});
