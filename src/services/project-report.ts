// What `gds plan` and `gds apply` tell CI besides each table's diff: the CERTIFIED tables downstream of each
// change in the dbt DAG (`downstreamCertified`), whether applying a table files a recertification request
// (a CERTIFIED table whose definition or gate1.yml changes), the source checks of project-sources.ts, and
// the one summary both end with (`{"summary":{…}}`), whatever happened, nothing included.
import type { TableListRow } from '../client/areas/tables.js';
import type { DbtLineageNode } from '../core/dbt/types.js';
import type { ApplyAction, ApplySummary } from './project-apply.js';
import type { PlannedTable, ProjectPlan } from './project-plan-types.js';
import type { WarehouseSources } from './project-sources.js';
import { refuseMissingSources } from './project-sources.js';

export interface RunSummary {
  create: number;
  replace: number;
  unchanged: number;
  remove: number;
  failed: number;
  refused: number;
  /** Selected nodes gds governs nothing of (ephemeral models). */
  skipped: number;
  /** Tables QUARANTINED that nothing else changes, submitted for review (--submit). */
  submit: number;
  recertificationRequested: number;
}

/** An apply action, with whether its write filed a recertification request. */
export type ReportedAction = ApplyAction & { recertificationRequested?: boolean };

const lower = (s: string) => s.toLowerCase();

/**
 * The CERTIFIED tables downstream of each of `wanted` (children, their children, …), nearest first: walks UP
 * from each node naming a CERTIFIED table (few) once, rather than down from each change (many, each with all
 * its descendants), so the cost is that of what is found. `certifiedOf` is asked once per node.
 */
function downstreamCertifiedOf(
  lineage: readonly DbtLineageNode[],
  wanted: ReadonlySet<string>,
  certifiedOf: (node: DbtLineageNode) => string | undefined,
): Map<string, string[]> {
  const parents = new Map<string, string[]>();
  const nodes = new Map<string, DbtLineageNode>();
  for (const node of lineage) {
    nodes.set(node.uniqueId, node);
    const known = parents.get(node.uniqueId);
    if (known === undefined) parents.set(node.uniqueId, [...node.parents]);
    else known.push(...node.parents);
  }
  // By wanted node: the certified tables downstream, each with its distance and rank (its node's in the lineage).
  const found = new Map<string, Found[]>();
  let rank = 0;
  for (const node of nodes.values()) {
    rank += 1;
    const name = certifiedOf(node);
    if (name === undefined) continue;
    const distance = new Map<string, number>([[node.uniqueId, 0]]);
    const queue = [node.uniqueId];
    for (let next = 0; next < queue.length; next += 1) {
      const id = queue[next] ?? '';
      const away = (distance.get(id) ?? 0) + 1;
      for (const parent of parents.get(id) ?? []) {
        if (distance.has(parent)) continue;
        distance.set(parent, away);
        queue.push(parent);
        if (!wanted.has(parent)) continue;
        const list = found.get(parent);
        if (list === undefined) found.set(parent, [{ name, distance: away, rank }]);
        else list.push({ name, distance: away, rank });
      }
    }
  }
  const nearestFirst = (a: Found, b: Found) => a.distance - b.distance || a.rank - b.rank;
  return new Map(
    [...found].map(([id, list]) => [id, [...new Set(list.sort(nearestFirst).map((f) => f.name))]]),
  );
}

interface Found {
  name: string;
  distance: number;
  rank: number;
}

/**
 * Completes the planned tables (in place): a table whose source is not on its connector is refused, each
 * changed table names the CERTIFIED tables of the environment downstream of it in the dbt DAG, and each says
 * whether applying it files a recertification request.
 */
export function reportPlanned(
  tables: PlannedTable[],
  context: {
    warehouse: WarehouseSources | undefined;
    /** The service's tables of the plan's environment. */
    rows: readonly TableListRow[];
    lineage: readonly DbtLineageNode[] | undefined;
    /** The names a node's table may have here: the node's, else those of its table promoted here (promotedName). */
    promotedNames?: (name: string) => string[];
    /** The --exclude value of a node (DbtProject's selectorOf); absent: its name. */
    selectorOf?: (uniqueId: string | null) => string | undefined;
  },
): void {
  refuseMissingSources(tables, context.warehouse, context.selectorOf);
  const certified = new Map(
    context.rows.filter((r) => r.state === 'CERTIFIED').map((r) => [lower(r.name), r.name]),
  );
  const certifiedIds = new Set(context.rows.filter((r) => r.state === 'CERTIFIED').map((r) => r.id));
  // A node the plan selected is its planned table (a promoted table under its promoted name, matched by source);
  // one it did not select is the table of its name, else of its name promoted here.
  const planned = new Map(
    tables.flatMap((t) => (t.uniqueId === null ? [] : [[t.uniqueId, t.table] as const])),
  );
  const certifiedOf = (node: DbtLineageNode): string | undefined => {
    const table = planned.get(node.uniqueId);
    const names = table !== undefined ? [table] : [node.name, ...(context.promotedNames?.(node.name) ?? [])];
    return names.map((name) => certified.get(lower(name))).find((name) => name !== undefined);
  };
  const changed = (table: PlannedTable) => table.action === 'create' || table.action === 'replace';
  const downstream = downstreamCertifiedOf(
    context.lineage ?? [],
    new Set(tables.flatMap((t) => (changed(t) && t.uniqueId !== null ? [t.uniqueId] : []))),
    certifiedOf,
  );
  for (const table of tables) {
    table.downstreamCertified =
      changed(table) && table.uniqueId !== null
        ? (downstream.get(table.uniqueId) ?? []).filter((name) => lower(name) !== lower(table.table))
        : [];
    table.recertificationRequested =
      table.action === 'replace' &&
      table.tableId !== null &&
      certifiedIds.has(table.tableId) &&
      (table.changes.definition || table.changes.gate1);
  }
}

/** The summary of a plan: what apply would do (`remove`: the gone tables, removed only with --prune). */
export function planSummary(plan: ProjectPlan): RunSummary {
  return {
    create: plan.counts.create,
    replace: plan.counts.replace,
    unchanged: plan.counts.unchanged,
    remove: plan.counts.gone,
    failed: 0,
    // A table owned elsewhere is refused by apply unless --adopt names it (the plan then shows it as its own).
    refused: plan.counts.refused + plan.counts.ownedElsewhere,
    skipped: plan.counts.skipped,
    submit: plan.counts.submit,
    recertificationRequested: plan.tables.filter((t) => t.recertificationRequested === true).length,
  };
}

/**
 * Marks the first write of each table planned to file a recertification request (the service files one on
 * the first change of a CERTIFIED table; the table is then QUARANTINED and later writes file none).
 */
export function recertificationMarker(plan: ProjectPlan): (action: ApplyAction) => ReportedAction {
  const pending = new Set(
    plan.tables.filter((t) => t.recertificationRequested === true).map((t) => t.tableId),
  );
  return (action) => {
    const writes = action.step === 'replace' || action.step === 'gate1';
    if (!writes || action.outcome !== 'done' || !pending.has(action.tableId)) return action;
    pending.delete(action.tableId);
    return { ...action, recertificationRequested: true };
  };
}

/**
 * What an apply did, by table: created, replaced, submitted, found unchanged, removed, failed; nothing applied:
 * the plan's.
 */
export function applySummary(
  plan: ProjectPlan,
  applied: ApplySummary | undefined,
  reported: readonly ReportedAction[] = applied?.actions ?? [],
): RunSummary {
  const actions = reported;
  const failed = new Set((applied?.failed ?? []).map((f) => f.table));
  const wrote = (table: string, steps: string[]) =>
    actions.some((a) => a.table === table && a.outcome === 'done' && steps.includes(a.step));
  const summary: RunSummary = {
    create: 0,
    replace: 0,
    unchanged: plan.counts.unchanged,
    remove: 0,
    failed: failed.size,
    refused: plan.counts.refused,
    skipped: plan.counts.skipped,
    submit: 0,
    recertificationRequested: actions.filter((a) => a.recertificationRequested === true).length,
  };
  const todo = plan.tables.filter(
    (t) =>
      (t.action === 'create' || t.action === 'replace' || t.action === 'gone' || t.action === 'submit') &&
      !failed.has(t.table),
  );
  for (const table of todo) {
    if (table.action === 'gone') {
      if (wrote(table.table, ['remove'])) summary.remove += 1;
    } else if (table.action === 'submit') {
      if (wrote(table.table, ['submit'])) summary.submit += 1;
      else if (actions.some((a) => a.table === table.table)) summary.unchanged += 1;
    } else if (table.action === 'create' && wrote(table.table, ['register'])) summary.create += 1;
    else if (wrote(table.table, ['register', 'replace', 'gate1', 'contract'])) summary.replace += 1;
    else if (actions.some((a) => a.table === table.table)) summary.unchanged += 1;
  }
  return summary;
}
