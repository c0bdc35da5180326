// Saved plans: `gds plan --out FILE` writes the plan with what the service held of each table when planned
// (definition, gate1.yml and contract versions, owner); `gds apply FILE` applies exactly that plan, after
// reading the environment again: a table changed, registered or removed since is exit 6 naming it, and
// nothing is written.
import { CliError, ExitCode } from '../core/errors.js';
import { readBoundedText } from '../io/input.js';
import type { ApiClient } from '../client/index.js';
import type { PlannedTable, ProjectPlan, Seen } from './project-plan-types.js';
import type { HeldTable } from '../client/areas/tables.js';
import { projectFilePrefix, seenOf } from './project-plan.js';
import { echoedPath } from '../core/echo.js';

export const PLAN_FILE_FORMAT = 'gds-plan';
export const PLAN_FILE_VERSION = 1;
/**
 * The most bytes gds reads of a plan file: room for thousands of tables with their definitions and diffs, short
 * of a string JSON.parse cannot take. A FIFO, a device or /dev/zero named as the plan is refused, not waited on.
 */
export const MAX_PLAN_FILE_BYTES = 256 * 1024 * 1024;

/** The text of a plan file. */
export function planFileText(plan: ProjectPlan, createdAt: Date): string {
  return `${JSON.stringify({ format: PLAN_FILE_FORMAT, version: PLAN_FILE_VERSION, createdAt: createdAt.toISOString(), plan })}\n`;
}

const notAPlan = (path: string, why: string) =>
  new CliError(`${echoedPath(path)} is not a plan gds plan --out wrote: ${why}.`, {
    exitCode: ExitCode.Usage,
    code: 'invalid_plan_file',
    suggestion: 'Write one with gds plan --dbt . --out plan.json, then gds apply plan.json.',
  });

/** Reads a plan file; exit 2 when it is not one this gds wrote. */
export async function readPlanFile(path: string): Promise<ProjectPlan> {
  let text: string;
  try {
    // `-` is a file of that name here, as it always was: apply asks on the terminal, stdin is not the plan.
    ({ text } = await readBoundedText(path === '-' ? './-' : path, {
      flag: 'FILE',
      maxBytes: MAX_PLAN_FILE_BYTES,
      what: 'a plan file',
    }));
  } catch (error) {
    if (error instanceof CliError && error.code === 'input_not_found')
      throw notAPlan(path, 'there is no such file');
    throw error;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw notAPlan(path, 'it is not JSON');
  }
  const file = value as {
    format?: unknown;
    version?: unknown;
    plan?: { tables?: unknown; project?: unknown };
  };
  if (file?.format !== PLAN_FILE_FORMAT) throw notAPlan(path, `its "format" is not "${PLAN_FILE_FORMAT}"`);
  if (file.version !== PLAN_FILE_VERSION)
    throw notAPlan(
      path,
      `it is version ${String(file.version)}, this gds reads version ${PLAN_FILE_VERSION}`,
    );
  if (!Array.isArray(file.plan?.tables) || typeof file.plan?.project !== 'object')
    throw notAPlan(path, 'it holds no plan');
  const plan = file.plan as unknown as ProjectPlan;
  // Written before plans counted skipped nodes and tables to submit: none.
  const { skipped = 0, submit = 0 }: Partial<ProjectPlan['counts']> = plan.counts;
  return { ...plan, counts: { ...plan.counts, skipped, submit } };
}

const sameSeen = (a: Seen, b: Seen) =>
  a.definitionVersion === b.definitionVersion &&
  a.gate1Version === b.gate1Version &&
  a.contractRevision === b.contractRevision &&
  a.project === b.project;

function describeChange(before: Seen, now: Seen): string {
  const parts = [
    ...(before.definitionVersion === now.definitionVersion
      ? []
      : [`definition v${before.definitionVersion} → v${now.definitionVersion}`]),
    ...(before.gate1Version === now.gate1Version
      ? []
      : [`gate1.yml v${before.gate1Version} → v${now.gate1Version}`]),
    ...(before.contractRevision === now.contractRevision
      ? []
      : [`contract revision ${before.contractRevision} → ${now.contractRevision}`]),
    ...(before.project === now.project
      ? []
      : [`owner ${before.project ?? 'none'} → ${now.project ?? 'none'}`]),
  ];
  return parts.join(', ');
}

const lower = (s: string | null | undefined) => (s ?? '').toLowerCase();

/**
 * The environment's tables a saved plan's check compares: those the project may own, those holding the name
 * or source of a table the plan does not own, and those of the plan's tables the first read missed (moved to
 * another project since: the check says so); not the environment's every table. The whole environment from a
 * service that cannot narrow the read.
 */
async function heldOfPlan(
  client: Pick<ApiClient, 'tables'>,
  plan: ProjectPlan,
  call: { signal?: AbortSignal },
): Promise<HeldTable[]> {
  // The check compares versions and owners, never which submissions are stale.
  const options = { ...call, staleSubmission: false as const };
  const env = plan.connector.environmentLabel;
  const tables = plan.tables.filter((t) => t.action !== 'refused');
  const names = tables
    .filter((t) => t.tableId === null || t.ownership !== 'this')
    .flatMap((t) => [t.table, ...(t.source === null ? [] : [t.source.split('.').at(-1) ?? ''])]);
  const read = await client.tables.heldMatching(
    env,
    {
      projects: [plan.project.id],
      projectPrefix: `${plan.projectName}@`,
      filePrefix: projectFilePrefix(plan.projectName),
      names,
    },
    options,
  );
  if (read === undefined) return client.tables.held(env, options);
  const ids = new Set(read.tables.map((h) => h.id));
  const missed = tables.filter((t) => t.tableId !== null && !ids.has(t.tableId)).map((t) => t.table);
  if (missed.length === 0) return read.tables;
  const more = (await client.tables.heldMatching(env, { names: missed }, options))?.tables ?? [];
  return [...read.tables, ...more.filter((h) => !ids.has(h.id))];
}

/**
 * Refuses (exit 6, naming each table) a saved plan the service moved away from: a table it would write or
 * remove changed since, or is gone, or a table it would create is registered now.
 */
export async function checkSavedPlan(
  client: Pick<ApiClient, 'tables'>,
  plan: ProjectPlan,
  options: { signal?: AbortSignal } = {},
): Promise<void> {
  const held = await heldOfPlan(client, plan, options);
  const byId = new Map(held.map((h) => [h.id, h]));
  const stale: { table: string; tableId: string | null; change: string }[] = [];
  const check = (table: PlannedTable) => {
    if (table.action === 'refused') return;
    if (table.tableId === null) {
      const taken = held.find(
        (h) =>
          lower(h.name) === lower(table.table) ||
          (table.source !== null && lower(h.source) === lower(table.source)),
      );
      if (taken !== undefined)
        stale.push({
          table: table.table,
          tableId: taken.id,
          change: `registered since the plan as ${taken.id}`,
        });
      return;
    }
    const now = byId.get(table.tableId);
    if (now === undefined) {
      stale.push({ table: table.table, tableId: table.tableId, change: 'removed since the plan' });
      return;
    }
    if (table.seen !== undefined && !sameSeen(table.seen, seenOf(now)))
      stale.push({
        table: table.table,
        tableId: table.tableId,
        change: describeChange(table.seen, seenOf(now)),
      });
  };
  plan.tables.forEach(check);
  const [first] = stale;
  if (first === undefined) return;
  throw new CliError(
    `The saved plan is out of date: ${first.table}${first.tableId === null ? '' : ` (${first.tableId})`} ${first.change}${stale.length > 1 ? `, and ${stale.length - 1} more` : ''}. Nothing was applied.`,
    {
      exitCode: ExitCode.Conflict,
      code: 'plan_stale',
      suggestion: 'Plan again (gds plan --dbt . --out FILE), review it, and apply the new file.',
      details: { stale },
    },
  );
}
