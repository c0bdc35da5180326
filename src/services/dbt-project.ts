// Finds and reads a dbt project's artifacts (`--dbt DIR`): DIR/target/manifest.json (and catalog.json), or
// DIR/manifest.json (and catalog.json) for a folder that holds them; the seeds' CSV headers when DIR is the
// project. Then declareDbtProject (pure) reads them. Every refusal is a CliError with exit 2 and the fix.
import { constants } from 'node:fs';
import { open, realpath, stat, type FileHandle } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { CliError, ExitCode } from '../core/errors.js';
import { loadYaml } from '../core/libraries/yaml.js';
import { readBoundedText } from '../io/input.js';
import { MAX_PROJECT_FILE_BYTES } from './project-config.js';
import { isInsideFolder } from '../core/inside-folder.js';
import {
  DbtManifestError,
  DbtSelectionError,
  declareDbtProject,
  prepareDbtReader,
  REBUILT_WHOLE,
} from '../core/dbt/project.js';
import { csvHeader } from '../core/dbt/csv.js';
import {
  INDIRECT_SELECTION_MODES,
  isIndirectSelection,
  selectionReads,
  type SelectionReads,
} from '../core/dbt/select.js';
import { readRunResults, readSourceFreshness, type PreviousRun } from '../core/dbt/previous-run.js';
import {
  CATALOG_MEMBERS,
  CatalogReader,
  isEntry,
  MANIFEST_MEMBERS,
  ManifestReader,
  readDispatch,
  readQuoting,
} from '../core/dbt/manifest.js';
import type { CatalogTable, Manifest, ManifestOutline } from '../core/dbt/manifest.js';
import {
  catalogOlder,
  LAST_RUN_RESULT_FIELDS,
  loggedRunFailures,
  readLastRun,
} from '../core/dbt/last-run.js';
import { JsonSyntaxError, readJsonMembers } from '../io/json-members.js';
import type { JsonMembersOptions } from '../io/json-members.js';
import type {
  DbtArtifacts,
  DbtProject,
  DbtSelection,
  IndirectSelection,
  QuotePolicy,
} from '../core/dbt/types.js';

/** A manifest of a 2,000-model project is tens of MB; past this it is not a manifest gds should parse. */
export const MAX_MANIFEST_BYTES = 512 * 1024 * 1024;
export const MAX_CATALOG_BYTES = 256 * 1024 * 1024;
const MAX_SEED_HEADER_BYTES = 64 * 1024;

export interface DbtProjectFiles {
  /** The folder that was named. */
  dir: string;
  /** The project folder (holding dbt_project.yml or target/), when DIR is one; seeds are read from it. */
  projectDir?: string;
  manifestPath: string;
  catalogPath?: string;
}

const usage = (message: string, suggestion: string, code = 'invalid_dbt_project') =>
  new CliError(message, { exitCode: ExitCode.Usage, code, suggestion });

async function kindOf(path: string): Promise<'file' | 'dir' | 'other' | undefined> {
  try {
    const info = await stat(path);
    return info.isFile() ? 'file' : info.isDirectory() ? 'dir' : 'other';
  } catch {
    return undefined;
  }
}

/** Where the manifest (and catalog) of `dir` are. */
export async function findDbtArtifacts(dir: string): Promise<DbtProjectFiles> {
  const root = resolve(dir);
  const kind = await kindOf(root);
  if (kind === undefined)
    throw usage(
      `--dbt ${dir}: no such folder`,
      'Name your dbt project folder (the one holding dbt_project.yml and target/).',
    );
  if (kind !== 'dir')
    throw usage(
      `--dbt ${dir} is not a folder`,
      'Name the dbt project folder, or a folder holding manifest.json (and catalog.json), not a file.',
    );
  for (const [folder, projectDir] of [
    [join(root, 'target'), root],
    [root, undefined],
  ] as const) {
    const manifestPath = join(folder, 'manifest.json');
    if ((await kindOf(manifestPath)) !== 'file') continue;
    const catalogPath = join(folder, 'catalog.json');
    const hasCatalog = (await kindOf(catalogPath)) === 'file';
    const isProject =
      projectDir !== undefined || (await kindOf(join(root, 'dbt_project.yml'))) === 'file' ? root : undefined;
    return {
      dir: root,
      ...(isProject === undefined ? {} : { projectDir: isProject }),
      manifestPath,
      ...(hasCatalog ? { catalogPath } : {}),
    };
  }
  const isProject = (await kindOf(join(root, 'dbt_project.yml'))) === 'file';
  throw usage(
    `--dbt ${dir}: no manifest.json in ${isProject ? `${join(dir, 'target')} (the dbt project has not been compiled)` : `${dir} or ${join(dir, 'target')}`}`,
    isProject
      ? "Run `dbt compile` (or `dbt build`) in the project to write target/manifest.json, and `dbt docs generate` for target/catalog.json (the warehouse's column types)."
      : 'Name a dbt project folder (run `dbt compile` or `dbt build` there first), or a folder holding manifest.json and catalog.json.',
    'dbt_manifest_not_found',
  );
}

/**
 * Reads a manifest or catalog member by member (readJsonMembers): the file is never held whole, nor parsed
 * whole, only what `reader` keeps of each member.
 */
async function readArtifactMembers<T>(
  path: string,
  max: number,
  what: string,
  members: Pick<JsonMembersOptions, 'each' | 'whole' | 'elements' | 'numberArray'>,
  reader: { member(section: string, key: string | undefined, raw: unknown): void },
  result: (outline: ManifestOutline) => T,
): Promise<T> {
  const info = await stat(path);
  if (info.size > max)
    throw usage(
      `${path} is ${(info.size / 1024 / 1024).toFixed(0)} MB, over the ${max / 1024 / 1024} MB gds reads as a ${what}`,
      `Is it really dbt's ${what}? Select fewer packages when you compile, or name the right folder.`,
      'dbt_artifact_too_large',
    );
  // A regular file only, read no further than the limit, UTF-8 only: a FIFO or a link to /dev/zero (whose
  // size reads 0) is refused instead of blocking or reading forever.
  try {
    const outline = await readJsonMembers(
      path,
      { flag: '--dbt', maxBytes: max, what: `a dbt ${what}`, ...members },
      (section, key, value) => reader.member(section, key, value),
    );
    return result({ object: outline.root === 'object', nodes: outline.members.get('nodes') === 'object' });
  } catch (err) {
    if (!(err instanceof JsonSyntaxError)) throw err;
    throw usage(
      `${path} is not valid JSON: ${err.message}`,
      `Run dbt again to rewrite its ${what} (a run stopped half-way leaves a cut file).`,
      'invalid_dbt_artifact',
    );
  }
}

const readManifestFile = (path: string, options: { state: boolean; configs: boolean }) => {
  const reader = new ManifestReader(options);
  return readArtifactMembers(path, MAX_MANIFEST_BYTES, 'manifest', MANIFEST_MEMBERS, reader, (outline) =>
    reader.manifest(outline),
  );
};

const readCatalogFile = (path: string) => {
  const reader = new CatalogReader();
  return readArtifactMembers(path, MAX_CATALOG_BYTES, 'catalog', CATALOG_MEMBERS, reader, (outline) =>
    reader.catalog(outline),
  );
};

async function readSeedHeaders(projectDir: string, manifest: Manifest): Promise<Record<string, string[]>> {
  const headers: Record<string, string[]> = {};
  // The seeds first, by forEach: a for-of over the manifest's some 13,000 nodes made an entry and a result
  // object for each (no TurboFan while a project is read to elide them).
  const seeds: Array<{ id: string; originalFilePath: string; delimiter: string | undefined }> = [];
  manifest.nodes.forEach((node, id) => {
    if (node.resourceType === 'seed' && node.originalFilePath !== undefined)
      seeds.push({ id, originalFilePath: node.originalFilePath, delimiter: node.delimiter });
  });
  for (let i = 0; i < seeds.length; i++) {
    const node = seeds[i] as (typeof seeds)[number];
    const id = node.id;
    const path = resolve(projectDir, node.originalFilePath);
    if (!isInsideFolder(projectDir, path) || (await kindOf(path)) !== 'file') continue;
    const handle = await open(path, 'r');
    try {
      const buffer = Buffer.alloc(MAX_SEED_HEADER_BYTES);
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
      const delimiter = node.delimiter?.length === 1 ? node.delimiter : ',';
      const header = csvHeader(buffer.subarray(0, bytesRead).toString('utf8'), delimiter);
      if (header.length > 0) headers[id] = header;
    } finally {
      await handle.close();
    }
  }
  return headers;
}

/** What gds reads of a project's dbt_project.yml. */
interface ProjectFile {
  /** `quoting:`: which parts of a relation's name dbt quotes. */
  quoting?: QuotePolicy;
  /** `dispatch:`: each macro namespace's search_order (empty without one); undefined: no dbt_project.yml read. */
  dispatch?: ReadonlyMap<string, readonly string[]>;
  /** `flags: indirect_selection:` (dbt 1.8+'s project flags), as written. */
  indirectSelection?: unknown;
  /** Whether `flags:` sets anything: dbt 1.8+ then reads no `config:` of profiles.yml. */
  flags?: boolean;
  /** `log-path:`, the folder of dbt's file log (dbt.log), as written: relative to the project folder. */
  logPath?: string;
}

/**
 * The project's dbt_project.yml, or nothing without one. A file gds cannot read as YAML is dbt's to refuse:
 * it is left to the manifest dbt wrote.
 */
async function readProjectFile(projectDir: string): Promise<ProjectFile> {
  const path = join(projectDir, 'dbt_project.yml');
  if ((await kindOf(path)) !== 'file') return {};
  const { text } = await readBoundedText(path, {
    flag: '--dbt',
    maxBytes: MAX_PROJECT_FILE_BYTES,
    what: 'a dbt_project.yml',
  });
  const { parse } = await loadYaml();
  let project: unknown;
  try {
    project = parse(text);
  } catch {
    return {};
  }
  if (!isEntry(project)) return {};
  const quoting = readQuoting(project['quoting']);
  const dispatch = readDispatch(project['dispatch']);
  const flags = project['flags'];
  const indirectSelection = isEntry(flags) ? flags['indirect_selection'] : undefined;
  const logPath = project['log-path'];
  return {
    ...(quoting === undefined ? {} : { quoting }),
    dispatch,
    ...(indirectSelection === undefined || indirectSelection === null ? {} : { indirectSelection }),
    ...(isEntry(flags) && Object.keys(flags).length > 0 ? { flags: true } : {}),
    ...(typeof logPath === 'string' && logPath !== '' ? { logPath } : {}),
  };
}

/** What gds reads of profiles.yml: its `config:` block's indirect_selection, nothing of a profile. */
interface ProfilesFile {
  path: string;
  /** Whether `config:` sets anything (dbt 1.8+ refuses it beside dbt_project.yml's `flags:`). */
  config: boolean;
  /** `config: indirect_selection:`, as written. */
  indirectSelection?: unknown;
}

/** Where gds looks for profiles.yml: dbt's --profiles-dir (DBT_PROFILES_DIR), else the folder gds runs in, else ~/.dbt. */
export interface ProfilesLocation {
  /** `--profiles-dir` (DBT_PROFILES_DIR). */
  profilesDir?: string | undefined;
  /** Default process.cwd(). */
  cwd?: string;
  /** Default the user's home folder. */
  home?: string;
}

/**
 * The `config:` block of the profiles.yml dbt reads (dbt's profiles dir: --profiles-dir or DBT_PROFILES_DIR,
 * else the current folder when it holds profiles.yml, as dbt 1.3+, else ~/.dbt). Only `config:` is kept: the
 * profiles' outputs (credentials) are never kept nor printed. A profiles.yml gds cannot read, or one that is
 * not YAML, is left alone (dbt drops its user config then too); undefined then, or without one.
 */
async function readProfilesFile(
  where: ProfilesLocation,
  warnings: string[],
): Promise<ProfilesFile | undefined> {
  const cwd = where.cwd ?? process.cwd();
  let path: string;
  if (where.profilesDir !== undefined && where.profilesDir !== '') {
    path = join(resolve(cwd, where.profilesDir), 'profiles.yml');
    if ((await kindOf(path)) !== 'file') {
      warnings.push(
        `--profiles-dir ${where.profilesDir} (or DBT_PROFILES_DIR) holds no profiles.yml: its config: indirect_selection is not read (dbt refuses a profiles dir that does not exist)`,
      );
      return undefined;
    }
  } else {
    path = join(cwd, 'profiles.yml');
    if ((await kindOf(path)) !== 'file') path = join(where.home ?? homedir(), '.dbt', 'profiles.yml');
    if ((await kindOf(path)) !== 'file') return undefined;
  }
  let text: string;
  try {
    ({ text } = await readBoundedText(path, {
      flag: '--profiles-dir',
      maxBytes: MAX_PROJECT_FILE_BYTES,
      what: 'a profiles.yml',
    }));
  } catch {
    return undefined;
  }
  let profiles: unknown;
  try {
    // As dbt's PyYAML reads it: a key written twice keeps its last value, `<<` merges an anchor's keys.
    profiles = (await loadYaml()).parse(text, { uniqueKeys: false, merge: true });
  } catch (error) {
    // Only the line: the parser's message quotes the file, which holds credentials.
    const line = (error as { linePos?: Array<{ line: number }> }).linePos?.[0]?.line;
    warnings.push(
      `${path} is not YAML dbt reads${line === undefined ? '' : ` (line ${line})`}: its config: indirect_selection is not read`,
    );
    return undefined;
  }
  const config = isEntry(profiles) ? profiles['config'] : undefined;
  if (!isEntry(config)) return { path, config: false };
  const indirectSelection = config['indirect_selection'];
  return {
    path,
    config: Object.keys(config).length > 0,
    ...(indirectSelection === undefined || indirectSelection === null ? {} : { indirectSelection }),
  };
}

/**
 * Whether the dbt that wrote the manifest reads `indirect_selection` from profiles.yml's `config:`: 1.0 to 1.4
 * (its user config, after the flag and DBT_INDIRECT_SELECTION), and 1.8 on (as its project flags, deprecated,
 * when dbt_project.yml has no `flags:`). 1.5 to 1.7 never did (their flags take --indirect-selection's
 * default before the user config), nor did dbt before 1.0 (no indirect selection). An unknown version reads it.
 */
export function readsProfilesIndirectSelection(dbtVersion: string | undefined): boolean {
  const match = /^(\d+)\.(\d+)/.exec(dbtVersion ?? '');
  if (match === null) return true;
  const [major, minor] = [Number(match[1]), Number(match[2])];
  if (major !== 1) return major > 1;
  return minor <= 4 || minor >= 8;
}

/** A mode as written in a dbt file, or the usage error naming the file. */
function writtenMode(written: unknown, where: string, fix: string): IndirectSelection {
  const mode = typeof written === 'string' ? written.toLowerCase() : undefined;
  if (!isIndirectSelection(mode))
    throw usage(
      `${where} is ${JSON.stringify(written)}: dbt's modes are ${INDIRECT_SELECTION_MODES.join(', ')}`,
      fix,
      'invalid_indirect_selection',
    );
  return mode;
}

/**
 * The selection with dbt's precedence for the indirect selection: --indirect-selection, else
 * DBT_INDIRECT_SELECTION (both in `selection` already), else the project's `flags: indirect_selection`, else
 * (where the manifest's dbt reads it: readsProfilesIndirectSelection) profiles.yml's `config:
 * indirect_selection`, else eager (left to the selection).
 */
function withProjectFlags(
  selection: DbtSelection,
  project: ProjectFile,
  profiles: ProfilesFile | undefined,
  dbtVersion: string | undefined,
  warnings: string[],
): DbtSelection {
  if (selection.indirectSelection !== undefined) return selection;
  const readsProfiles = profiles !== undefined && readsProfilesIndirectSelection(dbtVersion);
  if (readsProfiles && project.flags === true && profiles.config)
    warnings.push(
      `${profiles.path} has a config: block and dbt_project.yml flags:, which dbt 1.8+ refuses ("Do not specify both"); gds reads dbt_project.yml's flags: (move profiles.yml's config: there)`,
    );
  if (project.indirectSelection !== undefined)
    return {
      ...selection,
      indirectSelection: writtenMode(
        project.indirectSelection,
        "dbt_project.yml's flags: indirect_selection",
        'Write one of them in dbt_project.yml (dbt refuses any other), or pass --indirect-selection.',
      ),
    };
  // dbt 1.8+ reads profiles.yml's config: only when dbt_project.yml has no flags:; a value that is no text is
  // dropped by dbt's validation of the config, with the rest of it.
  if (!readsProfiles || project.flags === true || typeof profiles.indirectSelection !== 'string')
    return selection;
  return {
    ...selection,
    indirectSelection: writtenMode(
      profiles.indirectSelection,
      `${profiles.path}'s config: indirect_selection`,
      'Write one of them in profiles.yml (dbt refuses any other), or pass --indirect-selection.',
    ),
  };
}

/**
 * The folder of `--state DIR` (dbt's PreviousState): DIR, else DIR/target, whichever holds manifest.json, else
 * the one holding run_results.json or sources.json (what `result:` and `source_status:` read).
 */
async function stateFolder(dir: string): Promise<{ folder: string; manifestPath?: string }> {
  const root = resolve(dir);
  const folders = [root, join(root, 'target')];
  for (const folder of folders)
    if ((await kindOf(join(folder, 'manifest.json'))) === 'file')
      return { folder, manifestPath: join(folder, 'manifest.json') };
  for (const folder of folders)
    for (const name of PREVIOUS_RUN_FILES)
      if ((await kindOf(join(folder, name))) === 'file') return { folder };
  throw usage(
    `--state ${dir}: no manifest.json (nor run_results.json or sources.json) in ${dir} or ${join(dir, 'target')}`,
    "Name the folder holding the manifest.json of the state to compare with (production's, e.g. downloaded from the last deploy), as dbt's --state.",
    'dbt_state_not_found',
  );
}

const PREVIOUS_RUN_FILES = ['run_results.json', 'sources.json'];

/**
 * A run_results.json or sources.json, when the file is there: only each result's unique_id, status and
 * max_loaded_at are kept (a run's results hold each node's compiled SQL).
 */
async function readPreviousRunFile<T>(
  path: string,
  what: string,
  read: (value: unknown) => T,
): Promise<T | undefined> {
  if ((await kindOf(path)) !== 'file') return undefined;
  const value: { metadata?: unknown; results: unknown[] } = { results: [] };
  try {
    await readJsonMembers(
      path,
      {
        flag: '--state',
        maxBytes: MAX_MANIFEST_BYTES,
        what: `a dbt ${what}`,
        each: [],
        elements: ['results'],
        whole: ['metadata'],
      },
      (section, _key, raw) => {
        if (section === 'metadata') value.metadata = raw;
        else if (isEntry(raw))
          value.results.push({
            unique_id: raw['unique_id'],
            status: raw['status'],
            ...('max_loaded_at' in raw ? { max_loaded_at: raw['max_loaded_at'] } : {}),
          });
      },
    );
    return read(value);
  } catch (err) {
    if (!(err instanceof JsonSyntaxError) && !(err instanceof DbtManifestError)) throw err;
    throw usage(
      `${path}: ${err instanceof JsonSyntaxError ? 'not valid JSON: ' : ''}${err.message}`,
      `Name the --state folder of the dbt run whose ${what} to compare with, or run dbt again to rewrite it.`,
      'invalid_dbt_artifact',
    );
  }
}

/**
 * The project's run_results.json (beside its manifest), read only when the catalog is older than the manifest
 * (last-run.ts judges such a catalog by it): its metadata and args, and of each result what last-run.ts
 * reads, not its compiled SQL. A file gds cannot read is left out with a warning: the catalog is then judged
 * as without one.
 */
async function readLastRunFile(
  path: string,
  catalog: ReadonlyMap<string, CatalogTable> | undefined,
  manifest: Manifest,
  warnings: string[],
): Promise<unknown> {
  const catalogAt = catalog?.values().next().value?.generatedAt;
  if (!catalogOlder(catalogAt, manifest.generatedAt) || (await kindOf(path)) !== 'file') return undefined;
  const value: Record<string, unknown> & { results: unknown[] } = { results: [] };
  try {
    await readJsonMembers(
      path,
      {
        flag: '--dbt',
        maxBytes: MAX_MANIFEST_BYTES,
        what: 'a dbt run_results.json',
        each: [],
        elements: ['results'],
        whole: ['metadata', 'args'],
      },
      (section, _key, raw) => {
        if (section !== 'results') value[section] = raw;
        else if (isEntry(raw)) {
          const kept = Object.fromEntries(
            LAST_RUN_RESULT_FIELDS.flatMap((f) => (f in raw ? [[f, raw[f]]] : [])),
          );
          const node = raw['node'];
          if (isEntry(node))
            kept['node'] = { unique_id: node['unique_id'], resource_type: node['resource_type'] };
          value.results.push(kept);
        }
      },
    );
    return value;
  } catch (err) {
    if (!(err instanceof JsonSyntaxError) && !(err instanceof CliError)) throw err;
    warnings.push(
      `${path} is not read (${err.message}): a view or table model whose compiled SQL selects other columns than the older catalog.json lists is declared from its SQL, rebuilt or not`,
    );
    return undefined;
  }
}

/** The most of a model's SQL in target/run that is read (a model's DDL is its compiled SQL and a few lines). */
const MAX_RUN_SQL_BYTES = 4 * 1024 * 1024;

/**
 * The SQL dbt last ran for each model the last command only compiled (DbtArtifacts.runSql): target/run/<package>/
 * <original_file_path>, which dbt run and build write and dbt compile leaves as it was. A file missing, larger
 * than MAX_RUN_SQL_BYTES, outside target/run (by its name or a symlink) or that cannot be read is left out.
 */
async function readRunSql(
  targetDir: string,
  runResults: unknown,
  manifest: Manifest,
): Promise<{ sql: Record<string, string>; writtenAt: Map<string, number> } | undefined> {
  const run = readLastRun(runResults);
  if (run === undefined) return undefined;
  const runDir = join(targetDir, 'run');
  // Only a view or table model with compiled SQL is judged by its SQL against the catalog (project.ts).
  const paths: Array<[string, string]> = [];
  for (const [id, result] of run.results) {
    if (result.status !== 'success' || run.built.has(id)) continue;
    const node = manifest.nodes.get(id);
    if (node?.resourceType !== 'model' || node.originalFilePath === undefined) continue;
    if (node.compiledSql === undefined || !REBUILT_WHOLE.has((node.materialized ?? 'view').toLowerCase()))
      continue;
    const path = resolve(runDir, node.packageName, node.originalFilePath);
    if (isInsideFolder(runDir, path)) paths.push([id, path]);
  }
  if (paths.length === 0) return undefined;
  // A symlink may lead out of target/run (the project's folder): only a file that is inside it once resolved.
  const realRunDir = await realpath(runDir).catch(() => undefined);
  if (realRunDir === undefined) return undefined;
  const found: Record<string, string> = {};
  const writtenAt = new Map<string, number>();
  // 32 files at a time: 5,000 models of a dbt compile took 0.8-1.4 s one by one, 0.4-0.6 s so (a loaded machine).
  for (let at = 0; at < paths.length; at += 32)
    await Promise.all(
      paths.slice(at, at + 32).map(async ([id, path]) => {
        const file = await readRunFile(realRunDir, path);
        if (file === undefined) return;
        found[id] = file.sql;
        writtenAt.set(id, file.writtenAt);
      }),
    );
  return writtenAt.size === 0 ? undefined : { sql: found, writtenAt };
}

/**
 * A model's target/run file, when it is a regular file of UTF-8 of at most MAX_RUN_SQL_BYTES inside `realRunDir`
 * once its symlinks are resolved; undefined otherwise, and when it cannot be read (another owner's, or removed
 * by a dbt clean meanwhile): it only tells whether a build since the catalog happened.
 */
async function readRunFile(
  realRunDir: string,
  path: string,
): Promise<{ sql: string; writtenAt: number } | undefined> {
  try {
    const real = await realpath(path);
    if (!isInsideFolder(realRunDir, real)) return undefined;
    // A regular file only (a FIFO is not waited on), no larger than the limit, UTF-8.
    const { text } = await readBoundedText(real, {
      flag: '--dbt',
      maxBytes: MAX_RUN_SQL_BYTES,
      what: 'a dbt run file',
    });
    return { sql: text, writtenAt: (await stat(real)).mtimeMs };
  } catch {
    return undefined;
  }
}

/** The most of dbt's file log read, from its end (dbt 1.x rotates logs/dbt.log at 10 MB unless told not to). */
const MAX_DBT_LOG_BYTES = 32 * 1024 * 1024;

/**
 * The file dbt logs a run of the project to: dbt.log in DBT_LOG_PATH, else in dbt_project.yml's `log-path:`,
 * else in logs, each relative to the project folder (dbt 1.5+ takes `log-path:` from it; DBT_LOG_PATH from
 * the folder dbt runs in, which gds takes to be the project's). dbt's --log-path is not known to gds. `shown`:
 * as the plan names it, relative to the project folder inside it, else absolute (not `../../…`).
 */
function dbtLogFile(
  projectDir: string,
  logPath: string | undefined,
  env: NodeJS.ProcessEnv,
): { path: string; shown: string } {
  const fromEnv = env['DBT_LOG_PATH'];
  const folder = fromEnv !== undefined && fromEnv !== '' ? fromEnv : (logPath ?? 'logs');
  const project = resolve(projectDir);
  const path = join(resolve(project, folder), 'dbt.log');
  return { path, shown: isInsideFolder(project, path) ? relative(project, path) : path };
}

/** Why a file could not be read, in words (permission denied, a directory), not Node's message naming it. */
function unreadableBecause(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'EISDIR') return 'it is a directory';
  return code ?? (err instanceof Error ? err.message : String(err));
}

/**
 * Of the models whose target/run file was read (`sql`; `writtenAt`: each file's modification time), those whose
 * dbt run or build that wrote it failed, as dbt's file log `logFile` tells (last-run.ts's loggedRunFailures): its
 * last MAX_DBT_LOG_BYTES, the line cut there left out. A file written after the log's last line is of a run
 * logged elsewhere (--log-path): the log's last run of that model is an earlier one and tells nothing of it.
 * `unread`: why a log that is there could not be read (no log at all is dbt logging elsewhere: nothing said).
 */
async function readRunFailures(
  logFile: string,
  runFiles: { sql: Readonly<Record<string, string>>; writtenAt: ReadonlyMap<string, number> },
  adapter: string | undefined,
): Promise<{ failed?: string[]; unread?: string }> {
  let log: FileHandle;
  try {
    // O_NONBLOCK: a FIFO there is not waited on (the type is checked next).
    log = await open(logFile, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch (err) {
    // No log there (ENOENT), nor a folder for one (ENOTDIR: a file where its folder would be): dbt logged elsewhere.
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTDIR' ? {} : { unread: unreadableBecause(err) };
  }
  try {
    const info = await log.stat();
    if (!info.isFile())
      return { unread: info.isDirectory() ? 'it is a directory' : 'it is not a regular file' };
    const logged = Object.fromEntries(
      Object.entries(runFiles.sql).filter(([id]) => (runFiles.writtenAt.get(id) ?? Infinity) <= info.mtimeMs),
    );
    if (Object.keys(logged).length === 0) return {};
    const length = Math.min(info.size, MAX_DBT_LOG_BYTES);
    const bytes = Buffer.alloc(length);
    const { bytesRead } = await log.read(bytes, 0, length, info.size - length);
    const text = bytes.subarray(0, bytesRead).toString('utf8');
    const whole = length === info.size ? text : text.slice(text.indexOf('\n') + 1);
    const failed = loggedRunFailures(whole, logged, adapter);
    return failed.size === 0 ? {} : { failed: [...failed] };
  } catch (err) {
    return { unread: unreadableBecause(err) };
  } finally {
    await log.close().catch(() => undefined);
  }
}

/** What `result:` and `source_status:` compare with, read only when the selection may use them. */
async function readPreviousRun(
  reads: SelectionReads,
  stateDir: string | undefined,
  targetDir: string,
): Promise<PreviousRun> {
  const [results, sources, sourcesCurrent] = await Promise.all([
    reads.results && stateDir !== undefined
      ? readPreviousRunFile(join(stateDir, 'run_results.json'), 'run_results.json', readRunResults)
      : undefined,
    reads.freshness && stateDir !== undefined
      ? readPreviousRunFile(join(stateDir, 'sources.json'), 'sources.json', readSourceFreshness)
      : undefined,
    reads.freshness
      ? readPreviousRunFile(join(targetDir, 'sources.json'), 'sources.json', readSourceFreshness)
      : undefined,
  ]);
  return {
    ...(results === undefined ? {} : { results }),
    ...(sources === undefined ? {} : { sources }),
    ...(sourcesCurrent === undefined ? {} : { sourcesCurrent }),
  };
}

/** Reads and declares the dbt project in `dir` (see findDbtArtifacts); CliError exit 2 on any refusal. */
export async function loadDbtProject(
  dir: string,
  selection: DbtSelection,
  options: {
    state?: string | undefined;
    profiles?: ProfilesLocation;
    /**
     * The warehouse the plan reads (its objects' column names), asked once the manifest is read when its
     * adapter is PostgreSQL's: a table the catalog does not list has its tests resolved against it.
     */
    warehouse?: () => Promise<DbtArtifacts['warehouse'] | undefined>;
    /** Where DBT_LOG_PATH is read (default process.env). */
    env?: NodeJS.ProcessEnv;
  } = {},
): Promise<DbtProject> {
  const files = await findDbtArtifacts(dir);
  const stateDir = options.state === undefined ? undefined : await stateFolder(options.state);
  const statePath = stateDir?.manifestPath;
  // Each node's config is kept only for a selection that compares one (a YAML selector is looked into once
  // the manifest is read: the manifest is read again with them when it does).
  const configs = selectionReads(selection).configs;
  const readProjectManifest = (withConfigs: boolean) =>
    readManifestFile(files.manifestPath, { state: statePath !== undefined, configs: withConfigs }).catch(
      manifestError(files.manifestPath),
    );
  const [read, catalog, state, dbtReader] = await Promise.all([
    readProjectManifest(configs),
    files.catalogPath === undefined
      ? undefined
      : readCatalogFile(files.catalogPath).catch(manifestError(files.catalogPath)),
    statePath === undefined
      ? undefined
      : readManifestFile(statePath, { state: true, configs: false }).catch(
          manifestError(statePath, 'the --state manifest: '),
        ),
    prepareDbtReader(),
  ]);
  const reads = selectionReads(selection, read.selectors);
  const manifest = reads.configs && !configs ? await readProjectManifest(true) : read;
  const previous = await readPreviousRun(reads, stateDir?.folder, dirname(files.manifestPath));
  const seeds =
    files.projectDir === undefined ? undefined : await readSeedHeaders(files.projectDir, manifest);
  const projectFile = files.projectDir === undefined ? {} : await readProjectFile(files.projectDir);
  const { quoting, dispatch } = projectFile;
  const warnings: string[] = [];
  // profiles.yml is read only when neither the flag nor the variable decides (it holds credentials).
  const profiles =
    selection.indirectSelection === undefined
      ? await readProfilesFile(options.profiles ?? {}, warnings)
      : undefined;
  const selected = withProjectFlags(selection, projectFile, profiles, manifest.dbtVersion, warnings);
  const runResults = await readLastRunFile(
    join(dirname(files.manifestPath), 'run_results.json'),
    catalog,
    manifest,
    warnings,
  );
  const runFiles =
    runResults === undefined
      ? undefined
      : await readRunSql(dirname(files.manifestPath), runResults, manifest);
  const runSql = runFiles?.sql;
  const runLog =
    files.projectDir === undefined
      ? undefined
      : dbtLogFile(files.projectDir, projectFile.logPath, options.env ?? process.env);
  const runLogRead =
    runFiles === undefined || runLog === undefined
      ? undefined
      : await readRunFailures(runLog.path, runFiles, manifest.adapter);
  const runFailed = runLogRead?.failed;
  const runLogUnread = runLogRead?.unread;
  const warehouse =
    manifest.adapter === 'postgres' && options.warehouse !== undefined
      ? await options.warehouse()
      : undefined;
  try {
    const project = declareDbtProject(
      {
        manifest,
        ...(catalog === undefined ? {} : { catalog }),
        ...(seeds === undefined ? {} : { seeds }),
        ...(state === undefined ? {} : { state }),
        previous,
        ...(runResults === undefined ? {} : { runResults }),
        ...(runSql === undefined ? {} : { runSql }),
        ...(runFailed === undefined || runLog === undefined ? {} : { runFailed, runLog: runLog.shown }),
        ...(runLogUnread === undefined || runLog === undefined ? {} : { runLogUnread, runLog: runLog.shown }),
        ...(quoting === undefined ? {} : { quoting }),
        ...(dispatch === undefined ? {} : { dispatch }),
        ...(warehouse === undefined ? {} : { warehouse }),
      },
      selected,
      dbtReader,
    );
    return warnings.length === 0 ? project : { ...project, warnings: [...warnings, ...project.warnings] };
  } catch (err) {
    if (err instanceof DbtSelectionError)
      throw usage(
        err.message,
        'Check the selector: dbt ls --select … lists what it matches.',
        'invalid_dbt_selector',
      );
    throw manifestError(files.manifestPath)(err);
  }
}

/** A DbtManifestError of the file at `path` as the usage error that names it (anything else as it is). */
function manifestError(path: string, prefix = ''): (err: unknown) => never {
  return (err) => {
    if (!(err instanceof DbtManifestError)) throw err;
    throw usage(
      `${path}: ${prefix}${err.message}`,
      'Run `dbt compile` (or `dbt build`) to write target/manifest.json, and `dbt docs generate` for target/catalog.json.',
      'invalid_dbt_manifest',
    );
  };
}
