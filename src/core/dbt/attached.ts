// Which node a dbt test is attached to, and what a `ref()` or `source()` of a test's arguments names: for
// placing a test on its model (project.ts) and for selecting the model of a selected test (select.ts).
import type { Manifest, ManifestNode } from './manifest.js';
import { DECLARED_TYPES, text } from './manifest.js';

/**
 * The node a test is attached to: its `attached_node`, else (older manifests) its `model` argument, its one
 * parent, or a relationships test's parent that is not its `to:`. Undefined for a singular test.
 */
export function attachedNode(manifest: Manifest, test: ManifestNode): string | undefined {
  const info = test.test;
  if (info?.attachedNode !== undefined) return info.attachedNode;
  const model = text(info?.kwargs['model']);
  if (model !== undefined) {
    const found = resolveCall(manifest, model, test.dependsOn);
    if (found) return found;
  }
  if (info?.name === undefined) return undefined;
  const parents = test.dependsOn.filter((id) => !id.startsWith('macro.'));
  if (parents.length === 1) return parents[0];
  const to = text(info.kwargs['to']);
  if (to !== undefined) {
    const target = resolveCall(manifest, to, test.dependsOn);
    const rest = parents.filter((p) => p !== target);
    if (rest.length === 1) return rest[0];
  }
  return undefined;
}

/** The unique id a `ref('x')`, `ref('pkg', 'x')`, `ref('x', v=2)` or `source('s', 't')` names. */
export function resolveCall(manifest: Manifest, call: string, near: string[]): string | undefined {
  const ref =
    /\bref\(\s*['"]([^'"]+)['"](?:\s*,\s*['"]([^'"]+)['"])?(?:\s*,\s*(?:v|version)\s*=\s*['"]?([\w.]+)['"]?)?\s*\)/.exec(
      call,
    );
  if (ref) {
    const [, first, second, version] = ref;
    const name = second ?? first ?? '';
    const pkg = second === undefined ? undefined : first;
    const fits = (node: ManifestNode) =>
      DECLARED_TYPES.has(node.resourceType) &&
      node.name === name &&
      (pkg === undefined || node.packageName === pkg) &&
      (version === undefined || node.version === version);
    const nearby = near.map((id) => manifest.nodes.get(id)).filter((n): n is ManifestNode => !!n && fits(n));
    if (nearby.length >= 1) return nearby[0]?.uniqueId;
    return [...manifest.nodes.values()].find(fits)?.uniqueId;
  }
  const source = /\bsource\(\s*['"]([^'"]+)['"]\s*,\s*['"]([^'"]+)['"]\s*\)/.exec(call);
  if (source) {
    const suffix = `.${source[1] ?? ''}.${source[2] ?? ''}`;
    return (
      near.find((id) => id.startsWith('source.') && id.endsWith(suffix)) ??
      [...manifest.sources.keys()].find((id) => id.endsWith(suffix))
    );
  }
  return undefined;
}
