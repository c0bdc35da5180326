// `gds push` and `gds definitions push`: a governance artifact read and parsed HERE first (the shared parser
// of src/core/artifacts), so an unsupported, malformed or sourceless file is refused before any request;
// then registered (or replaced) on the service, and for `push --wait` followed until its baseline job ends.
import { basename } from 'node:path';
import { type PollOptions, pollUntil } from './poll.js';
import { connectorsOf } from './connector-ref.js';
import { shellWord } from '../core/shell-word.js';
import { CliError, ExitCode } from '../core/errors.js';
import { onOneLine } from '../core/terminal-text.js';
import { inputTooLarge, readArtifactText } from '../io/input.js';
import { jobEnded } from '../core/job-status.js';
import { ARTIFACT_BODY_LIMIT_BYTES } from '../core/artifact-bounds.js';
import { countText } from '../core/count-text.js';
import { withoutOptimisingCompilers } from '../io/young-generation.js';
import type { ApiClient } from '../client/index.js';
import { ApiError, NetworkError } from '../client/errors.js';
import type { ArtifactPushRequest } from '../client/areas/artifacts.js';
import type { WriteOptions } from '../client/transport.js';
import type { GateJobBody, RegistrationResult } from '../contract/types.js';
import {
  artifactKindOf,
  declarationYaml,
  declaresDialect,
  definitionSummary,
  definitionText,
  formatArtifactError,
  isDialect,
  parseArtifact,
  resolveSource,
  sameDefinition,
} from '../core/artifacts/index.js';
import type {
  ArtifactKind,
  DefinitionSummary,
  Dialect,
  GovernanceArtifact,
} from '../core/artifacts/index.js';
import type { HeldDefinition } from '../client/areas/artifacts.js';
import { type GateDiffLibraries, loadGateDiffLibraries, unifiedDiff } from '../core/gate-diff.js';
import { loadYaml } from '../core/libraries/yaml.js';

/** A file that parsed as an artifact, ready to send. */
export interface LocalArtifact {
  /** The file's base name, as the service records it. */
  filename: string;
  content: string;
  mimeType: ArtifactKind;
  /** The table the artifact declares. */
  table: string;
  /** `schema.table` it governs: --source, else its own declaration. */
  source: string;
  /** --source as given; absent when the artifact declares its source. */
  sourceFlag?: string;
  /** What it declares, as compared with the definition a table holds. */
  declared: DefinitionSummary;
}

const usage = (message: string, code: string, suggestion: string) =>
  new CliError(message, { exitCode: ExitCode.Usage, code, suggestion });

/** An artifact file's text as read (within the service's bounds), and its type by its name. */
export interface ArtifactFile {
  /** The path, or for `-` (stdin) the --filename it goes by: its type, and the name the service records. */
  name: string;
  kind: ArtifactKind;
  text: string;
}

/** Reads and parses `path`; every refusal is exit 2 and nothing has been sent. */
export async function readArtifact(path: string, options: ReadOptions): Promise<LocalArtifact> {
  const file = await readArtifactFile(path, options.filename);
  return artifactOf(file, options);
}

async function readArtifactFile(path: string, filename: string | undefined): Promise<ArtifactFile> {
  const name = artifactName(path, filename);
  const kind = artifactKindOf(name);
  if (kind === undefined) {
    throw usage(
      'Unsupported file type',
      'unsupported_file_type',
      `${name}: an artifact is a .sql, .yml, .yaml or .json file.`,
    );
  }
  const { text } = await readArtifactText(path, kind, { flag: '<file>' });
  return { name, kind, text };
}

/** stdin has no name: --filename gives it one, whose extension is its type (the service records the name). */
function artifactName(path: string, filename: string | undefined): string {
  if (path === '-') {
    if (filename !== undefined) return filename;
    throw usage(
      'An artifact read from stdin (-) needs --filename: its extension gives the type, and the service records the name.',
      'filename_required',
      'Name it, e.g. cat view.sql | gds push - --filename orders.sql',
    );
  }
  if (filename === undefined) return path;
  throw usage(
    `--filename names an artifact read from stdin (-); ${path} goes by its own name.`,
    'filename_without_stdin',
    'Drop --filename (a file goes by its own name), or give - to read the artifact from stdin.',
  );
}

/** The file's text parsed as an artifact (readArtifact, once the file is read). */
async function artifactOf(
  { name: path, kind, text }: ArtifactFile,
  options: ReadOptions,
): Promise<LocalArtifact> {
  const parsed = await parseArtifact({
    fileName: path,
    content: text,
    ...(options.dialect === undefined ? {} : { dialect: options.dialect }),
    ...(options.model === undefined ? {} : { model: options.model }),
  });
  if (!parsed.ok) {
    throw usage(
      formatArtifactError(path, parsed.error),
      'invalid_artifact',
      parsed.error.suggestion ?? 'Fix the file and push again; nothing was sent.',
    );
  }
  const resolved = resolveSource(parsed.artifact, options.source);
  if (!resolved.ok) {
    throw usage(
      resolved.error.message,
      resolved.error.code,
      'Pass --source <schema.table> naming the warehouse object, or declare it in the file.',
    );
  }
  // dbt's compiled or run SQL is sent as the declaration it was read to, so the service reads the same
  // columns whatever the file's path said (the service sees only its name).
  const asDeclaration = parsed.artifact.fromDbtSql !== undefined;
  return {
    filename: asDeclaration ? `${basename(path).replace(/\.sql$/i, '')}.yml` : basename(path),
    content: await contentToSend(parsed.artifact, text, options.dialect),
    mimeType: asDeclaration ? 'yaml' : kind,
    table: parsed.artifact.table,
    source: `${resolved.source.schema}.${resolved.source.table}`,
    ...(options.source === undefined ? {} : { sourceFlag: options.source }),
    declared: definitionSummary(parsed.artifact, `${resolved.source.schema}.${resolved.source.table}`),
  };
}

/**
 * What the service receives: the file as written, named so that the service reads it the way it was read here
 * (a dialect asked for with --dialect becomes the file's first line; a dbt model becomes its own declaration).
 */
async function contentToSend(
  artifact: GovernanceArtifact,
  text: string,
  dialect: Dialect | undefined,
): Promise<string> {
  if (artifact.fromDbtModel || artifact.fromDbtSql) return declarationYaml(await loadYaml(), artifact);
  if (artifact.kind !== 'sql' || dialect === undefined || dialect === 'postgres' || declaresDialect(text))
    return text;
  return `-- dialect: ${dialect}\n${text}`;
}

/**
 * What a read of the file gave: its text, and the artifact, a SQL refusal held back until the connector is
 * resolved, or nothing yet when the connector's type chooses the dialect (inConnectorDialect reads the text
 * then, not the file).
 */
export type LocalRead = { file: ArtifactFile } & (
  { artifact: LocalArtifact } | { refused: CliError } | { awaitsConnector: true }
);

export interface ReadOptions {
  source?: string | undefined;
  dialect?: Dialect | undefined;
  model?: string | undefined;
  /** --connector: its type may name the warehouse a .sql view is written for. */
  connectorId?: string | undefined;
  /** --filename: with `-`, the name the artifact read from stdin goes by. */
  filename?: string | undefined;
}

/**
 * readArtifact, except for a .sql view with --connector and no --dialect: without a "-- dialect:" line it is
 * not read here but by inConnectorDialect, while the connectors are asked for (as PostgreSQL, and again in
 * the dialect of the connector's type when that is another warehouse's); with one, its refusal is held back
 * until the connector is resolved, as a refusal's always was. The file's read and parses and a dry run's
 * diff are a push's short work, run without V8's optimising compilers (withoutOptimisingCompilers): push
 * --dry-run of a 262-line view peaks 9 MiB lower.
 */
export async function readArtifactLocally(path: string, options: ReadOptions): Promise<LocalRead> {
  return withoutOptimisingCompilers(async () => {
    const file = await readArtifactFile(path, options.filename);
    if (connectorMayChoose(file.name, options) && !declaresDialect(file.text))
      return { file, awaitsConnector: true };
    try {
      return { file, artifact: await artifactOf(file, options) };
    } catch (error) {
      if (
        error instanceof CliError &&
        error.code === 'invalid_artifact' &&
        connectorMayChoose(file.name, options)
      )
        return { file, refused: error };
      throw error;
    }
  });
}

function connectorMayChoose(path: string, options: ReadOptions): boolean {
  return options.connectorId !== undefined && options.dialect === undefined && artifactKindOf(path) === 'sql';
}

/** Connector types that are not a dialect's own name. */
const DIALECT_OF_CONNECTOR: Readonly<Record<string, Dialect>> = { postgresql: 'postgres', pg: 'postgres' };

/**
 * The artifact as the connector's warehouse reads it: with --connector and no dialect named, a .sql view is
 * read in the dialect of the connector's type (the client's one GET of the connectors, which resolving
 * --connector makes; the artifact is not sent). Without that type (none found, not readable with this token,
 * or PostgreSQL), it is read as readArtifact reads it. `connectorId` is --connector as it resolves: its
 * refusal comes first, then the file's, as when the connector was resolved before the file was read.
 *
 * The connectors are asked for first, and the view is read as PostgreSQL while the service answers (once the
 * request is on its way); that read is the one kept when the connector's type is PostgreSQL's or unknown, and
 * only another warehouse's connector reads the view again, in its dialect.
 */
export async function inConnectorDialect(
  client: Pick<ApiClient, 'connectors'>,
  read: LocalRead,
  options: Omit<ReadOptions, 'connectorId'>,
  connectorId: Promise<string | undefined> | string | undefined,
): Promise<LocalArtifact> {
  if (!('awaitsConnector' in read)) {
    await connectorId;
    if ('refused' in read) throw read.refused;
    return read.artifact;
  }
  const resolving = Promise.resolve(connectorId);
  // Awaited once the view is read: a refusal that comes meanwhile is thrown there, not left unhandled (which
  // ends a Node process).
  resolving.catch(() => undefined);
  // The one GET of the connectors resolving --connector made, or (a token drawn for the connector's
  // environment) this client's own.
  const listing = connectorsOf(client).catch(() => []);
  await pastTheNextPoll();
  const asPostgres = withoutOptimisingCompilers(() => artifactOf(read.file, options));
  // Its refusal is thrown below, once the connector is resolved.
  await asPostgres.catch(() => undefined);
  const id = await resolving;
  const connectors = await listing;
  const type = connectors.find((c) => c.id === id)?.type.toLowerCase() ?? '';
  const dialect = isDialect(type) ? type : DIALECT_OF_CONNECTOR[type];
  if (dialect === undefined || dialect === 'postgres') return asPostgres;
  return withoutOptimisingCompilers(() => artifactOf(read.file, { ...options, dialect }));
}

/**
 * Resolves after the event loop's next poll: a connection opened just before is then connected (loopback), or
 * its handshake under way, and the request written on it. The check phase runs setImmediate's callbacks after
 * the poll phase that is running, then after the next one.
 */
async function pastTheNextPoll(): Promise<void> {
  for (let turn = 0; turn < 2; turn += 1) await new Promise((resolve) => setImmediate(resolve));
}

export interface RegisterOptions {
  /** Absent on `push`: the service takes the one connector whose warehouse schema holds the source. */
  connectorId?: string | undefined;
  replaceId?: string | undefined;
  /** The project (`gds apply`) registering or replacing: recorded on a new table, checked on a replaced one. */
  project?: string | undefined;
}

function registrationBody(artifact: LocalArtifact, options: RegisterOptions): ArtifactPushRequest {
  return {
    filename: artifact.filename,
    content: artifact.content,
    mimeType: artifact.mimeType,
    ...(options.connectorId === undefined ? {} : { connectorId: options.connectorId }),
    ...(options.replaceId === undefined ? {} : { replaceId: options.replaceId }),
    ...(artifact.sourceFlag === undefined ? {} : { source: artifact.sourceFlag }),
    ...(options.project === undefined ? {} : { project: options.project }),
  };
}

/**
 * Exit 2 before the request is sent when its whole body is over the service's 2 MiB (a 413): the file's text
 * JSON-escaped (readArtifactText checks that alone) and the fields around it.
 */
function checkBodySize<T extends ArtifactPushRequest>(body: T): T {
  const bytes = Buffer.byteLength(JSON.stringify(body));
  if (bytes <= ARTIFACT_BODY_LIMIT_BYTES) return body;
  throw inputTooLarge(
    body.filename,
    `${countText(bytes)} bytes as the request's JSON (its text escaped, with the fields sent beside it), `,
    { maxBytes: ARTIFACT_BODY_LIMIT_BYTES, what: 'the artifact', reader: 'The service takes' },
    { sentBytes: bytes },
  );
}

/** What `push` did, or under `--dry-run` would do. */
export type PushOutcome =
  | { kind: 'unchanged'; held: HeldDefinition | RegistrationResult }
  /** `unchecked`: why the service was not asked whether it would take the push (it could not be reached). */
  | { kind: 'preview'; diff: string; unchecked?: string }
  | { kind: 'pushed'; result: RegistrationResult };

/**
 * `gds push`: a person's session or CLI token. With --replace the file is first compared with the
 * definition the table holds: the same declarations on the same connector send nothing, unless a `project`
 * (`gds apply`) is named: the service then says "no change" itself, once it has checked under the table's lock
 * that the project owns the table. `dryRun` writes nothing: the service answers what the push would (its
 * refusal, the push's own) and the diff is returned. On a name collision the hint names the table to replace.
 */
export async function pushArtifact(
  client: Pick<ApiClient, 'artifacts' | 'tables'>,
  artifact: LocalArtifact,
  options: RegisterOptions & { dryRun?: boolean },
): Promise<PushOutcome> {
  const held = options.replaceId === undefined ? null : await client.artifacts.held(options.replaceId);
  // "No change" without asking the service only for a caller it would let replace, and with no project whose
  // ownership it checks; anyone else sends, and hears the service's refusal.
  const heldHere =
    held !== null &&
    options.project === undefined &&
    held.mayReplace !== false &&
    isHeld(held, artifact.declared, options.connectorId);
  if (heldHere) {
    return { kind: 'unchanged', held };
  }
  const send = async <T>(write: (body: ArtifactPushRequest, precondition: WriteOptions) => Promise<T>) => {
    const body = checkBodySize(registrationBody(artifact, options));
    try {
      // A replacement carries the definition version it was compared with: the service compares again
      // under the table's lock and refuses (412 precondition_failed) if another write came in between.
      return await write(body, held === null ? {} : { ifMatch: held.definitionVersion });
    } catch (error) {
      // The holder alone, by name (case-insensitive): never the whole workspace's list.
      throw await registrationFailure(
        error,
        artifact,
        options,
        async () => (await client.tables.list({ name: artifact.table }))[0]?.id,
      );
    }
  };
  if (options.dryRun === true) {
    // The service says whether it would take the push (its refusal is the push's own), while the diff is made.
    const [check, diff] = await Promise.all([
      send((body, precondition) => client.artifacts.dryRun(body, precondition)).catch((error: unknown) => {
        if (isRouteMissing(error)) return undefined;
        // A dry run is a preview: with the service out of reach it is the file's diff alone, said so.
        if (error instanceof NetworkError) return { unreached: error.message };
        throw error;
      }),
      withoutOptimisingCompilers(async () =>
        definitionDiff(await loadGateDiffLibraries(), held, artifact, options.connectorId),
      ),
    ]);
    if (check !== undefined && 'unreached' in check)
      return { kind: 'preview', diff, unchecked: check.unreached };
    if (check?.changed === false && held !== null) return { kind: 'unchanged', held };
    return { kind: 'preview', diff };
  }
  const result = await send((body, precondition) => client.artifacts.push(body, precondition));
  return result.changed === false ? { kind: 'unchanged', held: result } : { kind: 'pushed', result };
}

/** A service older than POST /api/artifacts/dry-run: the dry run is then the local diff alone, as it was. */
function isRouteMissing(error: unknown): boolean {
  return error instanceof ApiError && error.status === 404 && error.code === 'route_not_found';
}

/** The same declarations on the same connector (any connector when none is named). */
export function isHeld(held: HeldDefinition, declared: DefinitionSummary, connectorId?: string): boolean {
  if (held.definition === null) return false;
  if (connectorId !== undefined && connectorId !== held.connectorId) return false;
  return sameDefinition(held.definition, declared);
}

/**
 * The unified diff from the held definition (nothing, for a new one) to the file's declarations, with the
 * connector as its first line: a replacement that moves the table to another connector changes that alone.
 */
export function definitionDiff(
  { yaml, diff }: GateDiffLibraries,
  held: HeldDefinition | null,
  artifact: LocalArtifact,
  connectorId?: string,
): string {
  const connectorLine = (id: string | null | undefined) => (id ? `connector: ${id}\n` : '');
  return unifiedDiff(
    diff,
    {
      name: held === null ? '(new)' : `${held.tableId}@definition-v${held.definitionVersion}`,
      text: held?.definition ? connectorLine(held.connectorId) + definitionText(yaml, held.definition) : '',
    },
    {
      name: artifact.filename,
      text: connectorLine(connectorId ?? held?.connectorId) + definitionText(yaml, artifact.declared),
    },
  );
}

/**
 * `gds definitions push`: the CI path of §4.9 (a MANAGEMENT token); 200 replaced, 202 registered. A
 * MANAGEMENT token cannot read a table's definition, so a replacement's precondition comes from the caller:
 * `ifMatch` (--if-match), the definition version the pipeline last pushed (its `definitionVersion`), sent
 * as `If-Match`; the service refuses with 412 `precondition_failed` when another write moved it since.
 */
export async function pushDefinition(
  client: Pick<ApiClient, 'definitions'>,
  artifact: LocalArtifact,
  options: RegisterOptions & { connectorId: string; ifMatch?: number | undefined },
): Promise<RegistrationResult & { replaced: boolean }> {
  try {
    return await client.definitions.register(
      checkBodySize({
        ...registrationBody(artifact, options),
        connectorId: options.connectorId,
        mimeType: artifact.mimeType,
      }),
      options.ifMatch === undefined ? {} : { ifMatch: options.ifMatch },
    );
  } catch (error) {
    throw await registrationFailure(error, artifact, options, async () => undefined);
  }
}

/** The §7.3 messages verbatim, with what to do next; any other failure goes on to the session's mapping. */
async function registrationFailure(
  error: unknown,
  artifact: LocalArtifact,
  options: RegisterOptions,
  existingId: () => Promise<string | undefined>,
): Promise<unknown> {
  if (!(error instanceof ApiError)) return error;
  if (error.status === 404 && error.code === 'connector_not_found') {
    return new CliError('Connector not found', {
      exitCode: ExitCode.NotFound,
      code: error.code,
      suggestion: `No connector ${options.connectorId} in your workspace: gds connectors list shows their ids.`,
      details: { status: 404, connectorId: options.connectorId },
    });
  }
  if (error.status === 412) return error;
  if (error.status === 409) {
    let suggestion: string;
    let id: string | undefined;
    if (options.replaceId !== undefined) {
      // --replace was given: another table holds the name or source, which another --replace would not free.
      const holder = (error.details as { existingId?: unknown } | undefined)?.existingId;
      const held =
        error.code === 'source_conflict' ? `the source ${artifact.source}` : `the name ${artifact.table}`;
      suggestion = `${typeof holder === 'string' ? `gds status ${shellWord(holder)}` : 'gds list'} shows the table that holds ${held}; give this definition another table name or source.`;
    } else {
      const details = error.details as
        { existingId?: unknown; replaceable?: unknown; reason?: unknown } | undefined;
      const held = details?.existingId;
      id = typeof held === 'string' ? held : await existingId().catch(() => undefined);
      suggestion =
        details?.replaceable === false
          ? typeof details.reason === 'string'
            ? details.reason
            : 'The table that holds this name cannot be replaced by a push; give the artifact another table name.'
          : id !== undefined
            ? `To make this file the new definition of the existing artifact, run again with --replace ${shellWord(id)}.`
            : 'To make this file the new definition of the existing artifact, find its id with gds list and run again with --replace and that id.';
    }
    return new CliError(error.message, {
      exitCode: ExitCode.Conflict,
      code: error.code,
      suggestion,
      details: { status: 409, ...(id === undefined ? {} : { existingId: id }), server: error.details },
    });
  }
  return error;
}

export type WaitOptions = PollOptions;

/**
 * Polls the auto-baseline (Gate 1) job until it ends (at once, after 0.25 s, then backing off up to the
 * interval); `onChange` sees each new status. `options.known` is the status the registration answered
 * (QUEUED), not reported again; the first read is at once, and the reference server holds it until the
 * job ends when that is within 0.25 s of the registration.
 */
export async function waitForBaselineJob(
  client: Pick<ApiClient, 'gateJobs'>,
  jobId: string,
  options: WaitOptions,
  onChange: (job: GateJobBody) => void | Promise<void>,
): Promise<GateJobBody> {
  return pollUntil(
    () => client.gateJobs.get(jobId, { gate: 1 }, { signal: options.signal }),
    (job) => jobEnded(job.status),
    (job) => job.status,
    options,
    onChange,
  );
}

/** The codes of jobOutcomeFailure's errors: the answer of `push --wait`, not a failure of gds. */
export const JOB_OUTCOME_CODES: readonly string[] = ['job_failed', 'job_cancelled'];

/** The exit a `push --wait` ends with: 0 when the baseline job SUCCEEDED, 1 when it FAILED or was CANCELLED. */
export function jobOutcomeFailure(job: GateJobBody): CliError | undefined {
  if (job.status === 'SUCCEEDED') return undefined;
  const reason = job.error?.message;
  // The service's status on the line of gds's `Error:`; its reason as a service's message is (apiErrorFrom):
  // its line breaks kept for --json, and a person reads it on that line, an SQL error's caret block under it.
  // details.status keeps the status as sent.
  return new CliError(
    `The baseline job ${job.id} ended ${onOneLine(job.status)}${reason === undefined ? '' : `: ${reason}`}`,
    {
      exitCode: ExitCode.Failure,
      code: job.status === 'CANCELLED' ? 'job_cancelled' : 'job_failed',
      suggestion:
        'gds status <tableId> shows the table; fix the warehouse object or the definition and push again with --replace.',
      details: { jobId: job.id, status: job.status },
    },
  );
}
