// The `--select` / `--exclude` value that names one dbt node, for the hints of `gds plan` and `gds apply`.
import type { Manifest, ManifestNode } from './manifest.js';
import { dbtBefore1 } from './select.js';

/**
 * The node's name read from its unique id, as dbt's selection (src/core/dbt/select.ts isSelectedNode) matches
 * it: `model.shop.customers` is `customers`, a versioned model's `model.shop.dim_customers.v2` is
 * `dim_customers.v2` (dbt 1.5 read only the dot, `dim_customers_v2` from 1.6: dbt-core #7639, #7995). Not the
 * relation's alias, nor a promoted table's name (`customers_production`): dbt's selection knows neither.
 * Undefined for an id not so made.
 */
export function nodeSelector(uniqueId: string | null): string | undefined {
  const parts = uniqueId?.split('.') ?? [];
  const [, packageName, name, version] = parts;
  if (!packageName || !name) return undefined;
  if (parts.length === 3) return name;
  return parts.length === 4 && version !== undefined && /^v[A-Za-z0-9_]+$/.test(version)
    ? `${name}.${version}`
    : undefined;
}

/**
 * For each node of the manifest, the `--exclude` value that leaves out that node alone: its name
 * (nodeSelector) when that selects no other node; else `fqn:` and its whole fqn (`fqn:shop.orders.orders`,
 * which a folder of the same name, `models/orders/`, or a package, does not reach); else that and its package
 * (`package:crm,fqn:crm.customers.v2`: a versioned model's fqn reaches its namesakes in other packages); else,
 * where a folder beside the model shares its fqn (`models/orders/orders/` beside `models/orders/orders.sql`,
 * which `fqn:shop.orders.orders` reaches as a prefix), its file (`path:models/orders/orders.sql`, with its
 * package where another package has that path; a package's node only from dbt 1.4 and where the root project
 * has that path too, else `package:crm,fqn:crm.orders.orders,file:orders.sql` from dbt 1.2). One argument,
 * no shell quoting. dbt's default and fqn: methods (select.ts fqnMatches, isSelectedNode) match a selector
 * without wildcards when it is the fqn's leaf (a versioned model's: the part before its version, or the last
 * two joined by `_` equal the selector's last two so joined; dbt 1.5 joined them by `.`, which reaches no
 * more), or a prefix of the dotted fqn, with or without its package. The index is built once (each node's
 * keys), so that a plan of 5,000 models asks in O(1) per node.
 */
export function nodeSelectors(
  nodes: Iterable<SelectedBy>,
  project: Pick<Manifest, 'projectName' | 'dbtVersion'> = {},
): (uniqueId: string | null) => string | undefined {
  const root = project.projectName;
  const byKey = new Map<string, string[]>();
  const known = new Map<string, SelectedBy>();
  const add = (key: string, uniqueId: string): void => {
    const ids = byKey.get(key);
    if (ids === undefined) byKey.set(key, [uniqueId]);
    else ids.push(uniqueId);
  };
  for (const node of nodes) {
    known.set(node.uniqueId, node);
    for (const key of keysOf(node)) add(key, node.uniqueId);
    if (node.originalFilePath !== undefined) add(`file:${node.originalFilePath}`, node.uniqueId);
  }
  const reached = (selector: string): Set<string> => {
    const parts = selector.split('.');
    return new Set([
      ...(byKey.get(`leaf:${selector}`) ?? []),
      ...(byKey.get(`prefix:${selector}`) ?? []),
      ...(byKey.get(`version:${parts.slice(-2).join('_')}`) ?? []),
    ]);
  };
  const inPackage = (ids: Iterable<string>, packageName: string): number =>
    [...ids].filter((id) => known.get(id)?.packageName === packageName).length;
  const packaged = (node: SelectedBy, selector: string): string => `package:${node.packageName},${selector}`;
  return (uniqueId) => {
    const name = nodeSelector(uniqueId);
    const node = uniqueId === null ? undefined : known.get(uniqueId);
    if (name === undefined || node === undefined || WILDCARD.test(name)) return name;
    if (reached(name).size === 1) return name;
    const fqn = node.fqn.join('.');
    if (node.fqn.length === 0 || WILDCARD.test(fqn)) return name;
    const hits = reached(fqn);
    if (hits.size === 1) return `fqn:${fqn}`;
    const packageUsable = !WILDCARD.test(node.packageName);
    if (packageUsable && inPackage(hits, node.packageName) === 1) return packaged(node, `fqn:${fqn}`);
    const file = node.originalFilePath;
    if (file !== undefined && SHELL_SAFE_PATH.test(file) && file.split('/').every(isPathPart)) {
      const sharing = byKey.get(`file:${file}`) ?? [];
      // dbt's path: globs the value in the root project's folder, and before 1.4 skipped the nodes of other
      // packages (their root_path): a package's node is reached by its path only from 1.4, and only where the
      // root project has a file at that path too (the root project unknown: taken as reached).
      const pathReaches =
        root === undefined ||
        node.packageName === root ||
        (!dbtBefore1(project.dbtVersion, 4) && sharing.some((id) => known.get(id)?.packageName === root));
      if (pathReaches) {
        if (sharing.length === 1) return `path:${file}`;
        if (packageUsable && inPackage(sharing, node.packageName) === 1)
          return packaged(node, `path:${file}`);
      } else if (packageUsable && !dbtBefore1(project.dbtVersion, 2)) {
        // dbt 1.2's file: (the file's name, in every package): with the package and the fqn, the node alone
        // unless a file of the same name in the folder beside it shares the fqn too.
        const name = file.split('/').at(-1) as string;
        const same = [...hits].filter((id) => {
          const other = known.get(id);
          return (
            other?.packageName === node.packageName && other.originalFilePath?.split('/').at(-1) === name
          );
        });
        if (same.length === 1) return packaged(node, `fqn:${fqn},file:${name}`);
      }
    }
    return packageUsable ? packaged(node, `fqn:${fqn}`) : `fqn:${fqn}`;
  };
}

/**
 * The `--exclude` values of the `asked` nodes, each as nodeSelectors gives it, computed now (while the
 * manifest's nodes are in hand) so that nothing of the other nodes is kept: the answer holds only the asked
 * nodes whose value is not their name (nodeSelector), and answers any other id with its name. A name without
 * a dot reaches a node by one of four of its own strings (its leaf, the first part of its fqn with or without
 * its package, a versioned model's last two joined by `_`), so the names that reach one node alone are
 * counted in one pass over the nodes. nodeSelectors' index of every node's keys (200-300 ms for the 32,000
 * nodes of 5,000 models) is built only when an asked name reaches more, or has a dot (a versioned model's).
 */
export function askedNodeSelectors(
  nodes: readonly SelectedBy[],
  asked: Iterable<string>,
  project: Pick<Manifest, 'projectName' | 'dbtVersion'> = {},
): (uniqueId: string | null) => string | undefined {
  const reach = new Map<string, number>();
  const askedIds: string[] = [];
  for (const uniqueId of asked) {
    const name = nodeSelector(uniqueId);
    if (name === undefined || WILDCARD.test(name)) continue;
    askedIds.push(uniqueId);
    if (!name.includes('.')) reach.set(name, 0);
  }
  if (reach.size > 0)
    for (let i = 0; i < nodes.length; i++) {
      const node = nodes[i] as SelectedBy;
      const { fqn } = node;
      const versioned = node.version !== undefined;
      const keys = [
        (versioned ? fqn.at(-2) : fqn.at(-1)) ?? '',
        firstPart(fqn, 0),
        firstPart(fqn, 1),
        versioned ? fqn.slice(-2).join('_') : undefined,
      ];
      for (let k = 0; k < keys.length; k++) {
        const key = keys[k];
        // A node reached twice by one name is one node.
        if (key === undefined || keys.indexOf(key) < k) continue;
        const count = reach.get(key);
        if (count !== undefined) reach.set(key, count + 1);
      }
    }
  // A loop, not a closure over `reach`: the answer's closure would keep every asked name alive with it.
  const others: string[] = [];
  for (const id of askedIds) if (reach.get(nodeSelector(id) as string) !== 1) others.push(id);
  const exceptions = new Map<string, string>();
  if (others.length > 0) {
    const selectorOf = nodeSelectors(nodes, project);
    for (const id of others) {
      const selector = selectorOf(id);
      if (selector !== undefined && selector !== nodeSelector(id)) exceptions.set(id, selector);
    }
  }
  return (uniqueId) => (uniqueId === null ? undefined : exceptions.get(uniqueId)) ?? nodeSelector(uniqueId);
}

/** The first dot-separated part of the fqn from its `from`th segment on (nodeSelectors' shortest prefix key). */
function firstPart(fqn: readonly string[], from: number): string | undefined {
  const segment = fqn[from];
  if (segment === undefined) return undefined;
  const dot = segment.indexOf('.');
  return dot === -1 ? segment : segment.slice(0, dot);
}

/**
 * A node's own file that dbt's path: method reads as itself (no glob) and a shell passes as one word: a model,
 * seed or snapshot file (a .yml may be other nodes' patch_path too, which path: also matches).
 */
const SHELL_SAFE_PATH = /^[A-Za-z0-9_][A-Za-z0-9_./-]*\.(sql|py|csv)$/;
/** path: reads `a//b` and `a/./b` as `a/b`: a file so written is not named by its path. */
const isPathPart = (part: string): boolean => part !== '' && part !== '.' && part !== '..';
const WILDCARD = /[*?[\]\s,+@:]/;

/** What of a node dbt's fqn matching reads (a project keeps these, not its manifest's nodes, for its hints). */
export type SelectedBy = Pick<
  ManifestNode,
  'uniqueId' | 'fqn' | 'packageName' | 'version' | 'originalFilePath'
>;

/** The keys a selector without wildcards reaches the node by (see nodeSelectors). */
function keysOf(node: SelectedBy): string[] {
  const { fqn } = node;
  const keys =
    node.version !== undefined
      ? [`leaf:${fqn.at(-2) ?? ''}`, `version:${fqn.slice(-2).join('_')}`]
      : [`leaf:${fqn.at(-1) ?? ''}`];
  for (const from of [fqn, fqn.slice(1)]) {
    const flat = from.flatMap((segment) => segment.split('.'));
    for (let i = 1; i <= flat.length; i++) keys.push(`prefix:${flat.slice(0, i).join('.')}`);
  }
  return [...new Set(keys)];
}
