// `gds push` and `gds definitions push`: a governance artifact read and parsed HERE first (the shared parser
// of src/core/artifacts), so an unsupported, malformed or sourceless file is refused before any request;
// then registered (or replaced) on the service, and for `push --wait` followed until its baseline job ends.
import { basename } from 'node:path';
import { setTimeout as sleepFor } from 'node:timers/promises';
import { CliError, ExitCode } from '../cli/errors.js';
import { readTextInput } from '../cli/input.js';
import type { ApiClient } from '../client/index.js';
import { ApiError } from '../client/errors.js';
import type { ArtifactPushRequest } from '../client/areas/artifacts.js';
import type { GateJobBody, RegistrationResult } from '../contract/types.js';
import {
  artifactKindOf,
  formatArtifactError,
  parseArtifact,
  resolveSource,
} from '../core/artifacts/index.js';
import type { ArtifactKind } from '../core/artifacts/index.js';

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
}

const usage = (message: string, code: string, suggestion: string) =>
  new CliError(message, { exitCode: ExitCode.Usage, code, suggestion });

/** Reads and parses `path`; every refusal is exit 2 and nothing has been sent. */
export async function readArtifact(
  path: string,
  options: { source?: string | undefined },
): Promise<LocalArtifact> {
  const kind = artifactKindOf(path);
  if (kind === undefined) {
    throw usage(
      'Unsupported file type',
      'unsupported_file_type',
      `${path}: an artifact is a .sql, .yml, .yaml or .json file.`,
    );
  }
  const { text } = await readTextInput(path, { flag: '<file>' });
  const parsed = await parseArtifact({ fileName: path, content: text });
  if (!parsed.ok) {
    throw usage(
      formatArtifactError(path, parsed.error),
      'invalid_artifact',
      'Fix the file and push again; nothing was sent.',
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
  return {
    filename: basename(path),
    content: text,
    mimeType: kind,
    table: parsed.artifact.table,
    source: `${resolved.source.schema}.${resolved.source.table}`,
    ...(options.source === undefined ? {} : { sourceFlag: options.source }),
  };
}

export interface RegisterOptions {
  /** Absent on `push`: the service takes the one connector whose warehouse schema holds the source. */
  connectorId?: string | undefined;
  replaceId?: string | undefined;
}

function registrationBody(artifact: LocalArtifact, options: RegisterOptions): ArtifactPushRequest {
  return {
    filename: artifact.filename,
    content: artifact.content,
    mimeType: artifact.mimeType,
    ...(options.connectorId === undefined ? {} : { connectorId: options.connectorId }),
    ...(options.replaceId === undefined ? {} : { replaceId: options.replaceId }),
    ...(artifact.sourceFlag === undefined ? {} : { source: artifact.sourceFlag }),
  };
}

/** `gds push`: a person's session or CLI token. On a name collision the hint names the table to replace. */
export async function pushArtifact(
  client: Pick<ApiClient, 'artifacts' | 'tables'>,
  artifact: LocalArtifact,
  options: RegisterOptions,
): Promise<RegistrationResult> {
  try {
    return await client.artifacts.push(registrationBody(artifact, options));
  } catch (error) {
    throw await registrationFailure(error, artifact, options, async () => {
      const tables = await client.tables.list();
      return tables.find((t) => t.name.toLowerCase() === artifact.table.toLowerCase())?.id;
    });
  }
}

/** `gds definitions push`: the CI path of §4.9 (a MANAGEMENT token); 200 replaced, 202 registered. */
export async function pushDefinition(
  client: Pick<ApiClient, 'definitions'>,
  artifact: LocalArtifact,
  options: RegisterOptions & { connectorId: string },
): Promise<RegistrationResult & { replaced: boolean }> {
  try {
    return await client.definitions.register({
      ...registrationBody(artifact, options),
      connectorId: options.connectorId,
      mimeType: artifact.mimeType,
    });
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
  if (error.status === 409) {
    let suggestion: string;
    let id: string | undefined;
    if (options.replaceId !== undefined) {
      suggestion = `--replace ${options.replaceId} replaces one artifact, and another one already holds the name ${artifact.table} or the source ${artifact.source}.`;
    } else {
      id = await existingId().catch(() => undefined);
      suggestion = `To make this file the new definition of the existing artifact, run again with --replace ${id ?? '<governanceId>'}.`;
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

export const TERMINAL_JOB_STATUSES: ReadonlySet<string> = new Set(['SUCCEEDED', 'FAILED', 'CANCELLED']);

export interface WaitOptions {
  intervalMs: number;
  signal?: AbortSignal;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<unknown>;
}

/** Polls the auto-baseline (Gate 1) job until it ends; `onChange` sees each new status. */
export async function waitForBaselineJob(
  client: Pick<ApiClient, 'gateJobs'>,
  jobId: string,
  options: WaitOptions,
  onChange: (job: GateJobBody) => void | Promise<void>,
): Promise<GateJobBody> {
  const sleep = options.sleep ?? ((ms, signal) => sleepFor(ms, undefined, { signal }));
  let previous: string | undefined;
  for (;;) {
    const job = await client.gateJobs.get(jobId, { gate: 1 }, { signal: options.signal });
    if (job.status !== previous) await onChange(job);
    previous = job.status;
    if (TERMINAL_JOB_STATUSES.has(job.status)) return job;
    await sleep(options.intervalMs, options.signal);
  }
}

/** The exit a `push --wait` ends with: 0 when the baseline job SUCCEEDED, 1 when it FAILED or was CANCELLED. */
export function jobOutcomeFailure(job: GateJobBody): CliError | undefined {
  if (job.status === 'SUCCEEDED') return undefined;
  const reason = job.error?.message;
  return new CliError(
    `The baseline job ${job.id} ended ${job.status}${reason === undefined ? '' : `: ${reason}`}`,
    {
      exitCode: ExitCode.Failure,
      code: job.status === 'CANCELLED' ? 'job_cancelled' : 'job_failed',
      suggestion:
        'gds status <tableId> shows the table; fix the warehouse object or the definition and push again with --replace.',
      details: { jobId: job.id, status: job.status },
    },
  );
}
