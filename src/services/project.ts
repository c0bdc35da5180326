// What `gds plan` and `gds apply` share: gds.yml read and merged under the flags, the dbt project read
// (src/services/dbt-project.ts) with the selection, and the plan made against the service.
import { CliError, ExitCode } from '../core/errors.js';
import {
  collectGarbage,
  holdYoungGeneration,
  withOldGenerationRoom,
  withoutTopTierCompiler,
} from '../io/young-generation.js';
import type { PlanClient, ProjectPlan } from './project-plan-types.js';
import { chooseConnector, notMappedTests, planProject, withObjectsReadOnce } from './project-plan.js';
import { warehouseColumns } from './warehouse-case.js';
import { projectSettings, readProjectConfig, type ProjectFlags } from './project-config.js';
import { loadDbtProject } from './dbt-project.js';
import { INDIRECT_SELECTION_MODES, isIndirectSelection, type IndirectSelection } from '../core/dbt/select.js';

export interface ProjectCommandFlags extends ProjectFlags {
  dbt: string;
  /** The folder of the manifest `state:` selectors compare with. */
  state?: string | undefined;
  strict?: boolean | undefined;
  /** Tables owned elsewhere to take over (by name). */
  adopt?: string[] | undefined;
  /** Plan as apply --submit (QUARANTINED tables nothing else changes are `submit`). */
  submit?: boolean | undefined;
  /** dbt's --indirect-selection: which tests of the selected models dbt runs, so map. */
  'indirect-selection'?: string | undefined;
  /** dbt's --profiles-dir (DBT_PROFILES_DIR): the folder of the profiles.yml whose config: gds reads. */
  'profiles-dir'?: string | undefined;
}

/** Reads gds.yml and the dbt project, then plans against the service (reads only). */
export async function readProject(client: PlanClient, flags: ProjectCommandFlags): Promise<ProjectPlan> {
  holdYoungGeneration();
  const settings = projectSettings(flags, await readProjectConfig(flags.dbt));
  // The connectors and their warehouse objects, read once: a PostgreSQL project's tests are resolved against
  // the objects' columns while it is declared, and the plan compares with the same reads.
  client = withConnectorsReadOnce(client);
  const read = client;
  const warehouse = async () => {
    try {
      const connectors = await read.connectors.list({});
      const connector = chooseConnector(connectors, { connectorId: settings.connector, env: flags.env });
      const ids =
        connector.id === null
          ? connectors.filter((c) => c.environmentLabel === connector.environmentLabel).map((c) => c.id)
          : [connector.id];
      const { columns } = await warehouseColumns(read, ids, {});
      return { columns, ...(settings.schema === undefined ? {} : { schema: settings.schema }) };
    } catch {
      // The plan reads them again, and says what went wrong.
      return undefined;
    }
  };
  // TurboFan stays off while the plan tells the tables that are the same: planProject asks for it back at
  // its first table to change.
  return withoutTopTierCompiler(async () => {
    const project = await withOldGenerationRoom(() =>
      loadDbtProject(
        flags.dbt,
        {
          ...(settings.select === undefined ? {} : { select: settings.select }),
          ...(settings.exclude === undefined ? {} : { exclude: settings.exclude }),
          ...(settings.selector === undefined ? {} : { selector: settings.selector }),
          ...(flags.strict === true ? { strict: true } : {}),
          ...indirectSelection(flags['indirect-selection']),
        },
        { state: flags.state, profiles: { profilesDir: flags['profiles-dir'] }, warehouse },
      ),
    );
    // The manifest's nodes, live while the project was declared, are garbage now (and the old generation's
    // next limit is set from what is live after it, at V8's own growth).
    collectGarbage();
    return planProject(client, project, {
      project: settings.project,
      adopt: flags.adopt,
      submit: flags.submit,
      connectorId: settings.connector,
      env: flags.env,
      schema: settings.schema,
    });
  });
}

/** The client with its connectors list and each connector's objects read once, whoever asks. */
function withConnectorsReadOnce(client: PlanClient): PlanClient {
  const once = withObjectsReadOnce(client);
  let listed: ReturnType<PlanClient['connectors']['list']> | undefined;
  const list: PlanClient['connectors']['list'] = (options) => (listed ??= client.connectors.list(options));
  return { ...once, connectors: { ...once.connectors, list } };
}

function indirectSelection(value: string | undefined): { indirectSelection?: IndirectSelection } {
  if (value === undefined || value === '') return {};
  const mode = value.toLowerCase();
  if (!isIndirectSelection(mode))
    throw new CliError(
      `--indirect-selection ${value}: dbt's modes are ${INDIRECT_SELECTION_MODES.join(', ')}.`,
      {
        exitCode: ExitCode.Usage,
        code: 'invalid_indirect_selection',
        suggestion: 'Pass one of them (or set DBT_INDIRECT_SELECTION to one), as for dbt.',
      },
    );
  return { indirectSelection: mode };
}

/** `--strict`: a dbt test that maps to no rule, or a refused model, is exit 7 (after the plan is shown). */
export function strictFailure(plan: ProjectPlan): CliError | undefined {
  const tests = notMappedTests(plan);
  const refused = plan.tables.filter((t) => t.action === 'refused');
  if (tests.length === 0 && refused.length === 0) return undefined;
  const parts = [
    ...(tests.length === 0 ? [] : [`${tests.length} dbt test${tests.length === 1 ? '' : 's'} not mapped`]),
    ...(refused.length === 0 ? [] : [`${refused.length} model${refused.length === 1 ? '' : 's'} refused`]),
  ];
  return new CliError(`--strict: ${parts.join(' and ')}.`, {
    exitCode: ExitCode.Refused,
    code: 'not_mapped',
    suggestion:
      'Each is listed above with its reason: write the rule in a gate1.yml by hand, drop or change the test, or run without --strict.',
    details: { notMappedTests: tests, refused: refused.map((t) => ({ table: t.table, reason: t.reason })) },
  });
}
