// `gds.yml` at a dbt project's root: the defaults of `gds plan` / `gds apply` for that project, so a CI job
// runs `gds plan --dbt .` with nothing else. Flags win over the file. Shape:
//
//   project: shop@con_dev         # the project's id on the service (plan proposes one on first use)
//   connector: con_dev            # the connector the tables live behind (gds connectors list)
//   schema: analytics_dev         # optional: the warehouse schema of every source, instead of dbt's own
//   select: ["staging.*", "tag:governed"]
//   exclude: ["tag:wip"]
//   targets:                      # per dbt target, picked with --target
//     prod: { connector: con_prod, schema: analytics }
//   environments:                 # per environment label, picked with --env
//     production: { connector: con_prod }
//
// An unknown key, a wrong type or a --target/--env the file does not name is exit 2 naming it.
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { CliError, ExitCode } from '../core/errors.js';
import { loadYaml } from '../core/libraries/yaml.js';
import { readBoundedText } from '../io/input.js';
import { longerThan } from '../core/text-bounds.js';

export const PROJECT_CONFIG_FILE = 'gds.yml';
/** The most bytes gds reads of a project's own small files: gds.yml, dbt_project.yml, profiles.yml. */
export const MAX_PROJECT_FILE_BYTES = 1024 * 1024;

interface Placement {
  connector?: string;
  schema?: string;
}

export interface ProjectConfig extends Placement {
  project?: string;
  select?: string[];
  exclude?: string[];
  targets?: Record<string, Placement>;
  environments?: Record<string, Placement>;
}

/** What plan and apply run with: the flags over the file's entry for --target/--env over its top level. */
export interface ProjectSettings {
  /** The project's id on the service (gds.yml's `project:`). */
  project?: string;
  connector?: string;
  schema?: string;
  select?: string[];
  exclude?: string[];
  /** dbt's --selector (a selector of selectors.yml). */
  selector?: string;
  /** The gds.yml read, when there was one. */
  configFile?: string;
}

export interface ProjectFlags {
  connector?: string | undefined;
  schema?: string | undefined;
  select?: string[] | undefined;
  exclude?: string[] | undefined;
  /** dbt's --selector: a selector of selectors.yml, instead of select and exclude (gds.yml's too). */
  selector?: string | undefined;
  target?: string | undefined;
  env?: string | undefined;
}

const invalid = (file: string, message: string) =>
  new CliError(`${file}: ${message}`, {
    exitCode: ExitCode.Usage,
    code: 'invalid_project_config',
    suggestion: `Keys of ${PROJECT_CONFIG_FILE}: project, connector, schema, select, exclude, targets, environments (each target or environment: connector, schema).`,
  });

function text(file: string, where: string, value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || value.trim() === '') throw invalid(file, `${where} must be a text`);
  return value.trim();
}

function selectors(file: string, where: string, value: unknown): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return [value];
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value as string[];
  throw invalid(file, `${where} must be a selector or a list of selectors`);
}

function placement(file: string, where: string, value: unknown): Placement {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw invalid(file, `${where} must be a mapping with connector and/or schema`);
  const entry = value as Record<string, unknown>;
  for (const key of Object.keys(entry))
    if (key !== 'connector' && key !== 'schema') throw invalid(file, `${where}.${key} is not a known key`);
  const connector = text(file, `${where}.connector`, entry.connector);
  const schema = text(file, `${where}.schema`, entry.schema);
  return { ...(connector === undefined ? {} : { connector }), ...(schema === undefined ? {} : { schema }) };
}

function placements(file: string, where: string, value: unknown): Record<string, Placement> | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value))
    throw invalid(file, `${where} must be a mapping of names to {connector, schema}`);
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>).map(([name, entry]) => [
      name,
      placement(file, `${where}.${name}`, entry),
    ]),
  );
}

/** Parses the text of a gds.yml (pure). */
export async function parseProjectConfig(file: string, content: string): Promise<ProjectConfig> {
  const { parse } = await loadYaml();
  let raw: unknown;
  try {
    raw = parse(content);
  } catch (error) {
    throw invalid(file, `not YAML: ${(error as Error).message.split('\n')[0] ?? ''}`);
  }
  if (raw === null || raw === undefined) return {};
  if (typeof raw !== 'object' || Array.isArray(raw)) throw invalid(file, 'must be a mapping');
  const known = ['project', 'connector', 'schema', 'select', 'exclude', 'targets', 'environments'];
  const doc = raw as Record<string, unknown>;
  for (const key of Object.keys(doc))
    if (!known.includes(key)) throw invalid(file, `${key} is not a known key`);
  const top = placement(file, '(top level)', { connector: doc.connector, schema: doc.schema });
  const select = selectors(file, 'select', doc.select);
  const exclude = selectors(file, 'exclude', doc.exclude);
  const targets = placements(file, 'targets', doc.targets);
  const environments = placements(file, 'environments', doc.environments);
  const project = text(file, 'project', doc.project);
  if (project !== undefined && (longerThan(project, 200) || /[\u0000-\u001f\u007f]/.test(project)))
    throw invalid(file, 'project must be at most 200 characters, without control characters');
  return {
    ...(project === undefined ? {} : { project }),
    ...top,
    ...(select === undefined ? {} : { select }),
    ...(exclude === undefined ? {} : { exclude }),
    ...(targets === undefined ? {} : { targets }),
    ...(environments === undefined ? {} : { environments }),
  };
}

/** Reads DIR/gds.yml when there is one. */
export async function readProjectConfig(
  dir: string,
): Promise<{ file: string; config: ProjectConfig } | undefined> {
  const file = join(dir, PROJECT_CONFIG_FILE);
  // None is no settings; one is read as dbt_project.yml is: a regular file (a FIFO there would block), bounded.
  const found = await stat(file).catch((error: unknown) => {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  });
  if (found === undefined) return undefined;
  const { text } = await readBoundedText(file, {
    flag: '--dbt',
    maxBytes: MAX_PROJECT_FILE_BYTES,
    what: `a ${PROJECT_CONFIG_FILE}`,
  });
  return { file, config: await parseProjectConfig(file, text) };
}

/** The flags over the file: --target/--env pick an entry of targets/environments, over the top level. */
export function projectSettings(
  flags: ProjectFlags,
  read: { file: string; config: ProjectConfig } | undefined,
): ProjectSettings {
  const config = read?.config ?? {};
  const file = read?.file ?? PROJECT_CONFIG_FILE;
  const pick = (name: string | undefined, entries: Record<string, Placement> | undefined, what: string) => {
    if (name === undefined) return {};
    const entry = entries?.[name];
    if (entry === undefined && read !== undefined && entries !== undefined)
      throw invalid(file, `no ${what} ${name} (it names ${Object.keys(entries).join(', ') || 'none'})`);
    return entry ?? {};
  };
  const chosen = {
    ...pick(flags.env, config.environments, 'environment'),
    ...pick(flags.target, config.targets, 'target'),
  };
  const connector = flags.connector ?? chosen.connector ?? config.connector;
  const schema = flags.schema ?? chosen.schema ?? config.schema;
  // --selector is the whole selection, as a flag wins over gds.yml's select and exclude.
  const select = flags.selector === undefined ? (flags.select ?? config.select) : flags.select;
  const exclude = flags.selector === undefined ? (flags.exclude ?? config.exclude) : flags.exclude;
  if (flags.target !== undefined && read === undefined)
    throw new CliError(`--target ${flags.target} needs a ${PROJECT_CONFIG_FILE} naming it under targets.`, {
      exitCode: ExitCode.Usage,
      code: 'invalid_project_config',
      suggestion: `Write ${PROJECT_CONFIG_FILE} beside dbt_project.yml (targets: {${flags.target}: {connector: con_…}}), or pass --connector.`,
    });
  return {
    ...(config.project === undefined ? {} : { project: config.project }),
    ...(connector === undefined ? {} : { connector }),
    ...(schema === undefined ? {} : { schema }),
    ...(select === undefined ? {} : { select }),
    ...(exclude === undefined ? {} : { exclude }),
    ...(flags.selector === undefined ? {} : { selector: flags.selector }),
    ...(read === undefined ? {} : { configFile: read.file }),
  };
}
