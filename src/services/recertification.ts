// `gds recertification list|dismiss` (a person's requests to act on) and `gds recertify` (the pipeline
// signal of §4.8 for dbt users, with a MANAGEMENT token).
import { CliError, ExitCode } from '../cli/errors.js';
import { readTextInput } from '../cli/input.js';
import { MANIFEST_READ_LIMIT_BYTES, REQUEST_BODY_LIMIT_BYTES } from '../core/artifact-bounds.js';
import type { ApiClient } from '../client/index.js';
import type { RecertificationRequest } from '../client/areas/recertification.js';
import type { RecertifyRequest, RecertifyResponse } from '../contract/types.js';

export type RecertificationClient = Pick<ApiClient, 'recertification'>;

/** Largest page the service serves of the request list, and the first page's size (the first line comes soon). */
const MAX_REQUEST_PAGE = 1000;
const FIRST_REQUEST_PAGE = 100;

/**
 * The requests a page at a time, for printing each as it arrives; with `limit` (-L), only that many are
 * asked for (the service pages by it) and no page after them.
 */
export async function* listRecertificationRequestPages(
  client: RecertificationClient,
  options: { tableId?: string | undefined; all?: boolean | undefined; limit?: number | undefined } = {},
): AsyncGenerator<{ rows: RecertificationRequest[]; total?: number }, void, undefined> {
  const first = Math.min(options.limit ?? FIRST_REQUEST_PAGE, MAX_REQUEST_PAGE);
  const rest = Math.min(options.limit ?? MAX_REQUEST_PAGE, MAX_REQUEST_PAGE);
  let seen = 0;
  const query = { tableId: options.tableId, all: options.all };
  for await (const page of client.recertification.requestPages(query, [first, rest])) {
    yield { rows: page.requests, ...(page.total === undefined ? {} : { total: page.total }) };
    seen += page.requests.length;
    if (options.limit !== undefined && seen >= options.limit) return;
  }
}

export function dismissRecertificationRequest(
  client: RecertificationClient,
  requestId: string,
  reason?: string,
): Promise<RecertificationRequest> {
  return client.recertification.dismiss(requestId, reason);
}

/**
 * Dismisses the named requests and, with `tableId`, every open request of that table, one after another,
 * each reported through `onDismissed` as it is. A request that cannot be dismissed does not stop the
 * others; the first failure is thrown after them (as it is when it was the only request).
 */
export async function dismissRecertificationRequests(
  client: RecertificationClient,
  input: {
    ids: readonly string[];
    tableId?: string | undefined;
    reason?: string | undefined;
    onDismissed: (request: RecertificationRequest) => void;
  },
): Promise<{ attempted: number; dismissed: number }> {
  const ids = [...input.ids];
  if (input.tableId !== undefined) {
    const open = await client.recertification.listRequests({ tableId: input.tableId });
    ids.push(...open.map((r) => r.id));
  }
  const unique = [...new Set(ids)];
  const failures: Array<{ id: string; error: unknown }> = [];
  let dismissed = 0;
  for (const id of unique) {
    try {
      input.onDismissed(await client.recertification.dismiss(id, input.reason));
      dismissed += 1;
    } catch (error) {
      failures.push({ id, error });
    }
  }
  const [first] = failures;
  if (first === undefined) return { attempted: unique.length, dismissed };
  if (unique.length === 1) throw first.error;
  const { ApiError } = await import('../client/errors.js');
  const { exitCodeForStatus } = await import('../cli/errors.js');
  const status = first.error instanceof ApiError ? first.error.status : 0;
  const reasonOf = (error: unknown) => (error instanceof Error ? error.message : String(error));
  throw new CliError(
    `${failures.length} of ${unique.length} requests were not dismissed: ${failures
      .map((f) => `${f.id} (${reasonOf(f.error)})`)
      .join('; ')}.`,
    {
      exitCode: status === 0 ? ExitCode.Failure : exitCodeForStatus(status),
      code: first.error instanceof ApiError ? first.error.code : 'dismiss_failed',
      suggestion: 'gds recertification list --all shows each request and its status.',
      details: { dismissed, failed: failures.map((f) => f.id) },
    },
  );
}

export interface RecertifyInput {
  /** dbt's target/run_results.json. */
  runResults?: string | undefined;
  /** dbt's target/manifest.json (lets the service match models by their definition hash). */
  manifest?: string | undefined;
  tables?: readonly string[] | undefined;
  environmentLabel?: string | undefined;
  trigger?: string | undefined;
  evidenceRunId?: string | undefined;
}

/** A problem that does not stop the signal (a manifest gds cannot use), said once on stderr. */
export interface RecertifyWarning {
  code: 'manifest_ignored';
  message: string;
}

/**
 * The request body, from the dbt files read here: run results read as dbt means them (a run that
 * built nothing is refused, exit 7, nothing sent; a file gds cannot read is exit 2), the manifest
 * reduced to what drift detection reads (a manifest that is not one is left out with a warning).
 */
export async function recertifyRequest(
  input: RecertifyInput,
  warn: (warning: RecertifyWarning) => void = () => {},
): Promise<RecertifyRequest> {
  const body: RecertifyRequest = {};
  if (input.runResults !== undefined) {
    const { readRunResults, reduceManifest, reduceRunResults } = await import('../core/dbt-run.js');
    const runResults = await readJsonObject(input.runResults, '--run-results');
    const reading = readRunResults(runResults);
    if (!reading.ok) {
      const built = reading.code === 'nothing_built';
      throw new CliError(`${input.runResults}: ${reading.message}`, {
        exitCode: built ? ExitCode.Refused : ExitCode.Usage,
        code: reading.code,
        suggestion: built
          ? 'Signal after dbt run, build, seed or snapshot; nothing was sent.'
          : 'Give --run-results the target/run_results.json dbt wrote; nothing was sent.',
      });
    }
    body.runResults = runResults as RecertifyRequest['runResults'];
    if (input.manifest !== undefined) {
      const manifest = await readManifest(input.manifest, reduceManifest);
      if (typeof manifest === 'string') warn({ code: 'manifest_ignored', message: manifest });
      else body.manifest = manifest;
    }
    // The run results as dbt wrote them (the service derives its evidence summary from the artifact), unless
    // the request would pass the service's 25 MB: then each result as the status, node, relation and message
    // the signal reads.
    if (Buffer.byteLength(JSON.stringify(body)) > REQUEST_BODY_LIMIT_BYTES)
      body.runResults = reduceRunResults(
        runResults as Record<string, unknown>,
      ) as unknown as RecertifyRequest['runResults'];
  } else {
    body.tables = [...(input.tables ?? [])];
  }
  if (input.environmentLabel !== undefined) body.environmentLabel = input.environmentLabel;
  if (input.trigger !== undefined) body.trigger = input.trigger;
  if (input.evidenceRunId !== undefined) body.evidence = { kind: 'dbt', runId: input.evidenceRunId };
  return body;
}

/** The reduced manifest, or why it is left out (a file that cannot be read is still exit 2). */
async function readManifest(
  path: string,
  reduce: (value: unknown) => object | null,
): Promise<object | string> {
  const { text } = await readTextInput(path, {
    flag: '--manifest',
    maxBytes: MANIFEST_READ_LIMIT_BYTES,
    what: 'a dbt manifest.json',
  });
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return `${path} is not JSON (${(error as Error).message}); the signal is sent without a manifest, so no drift detection.`;
  }
  return (
    reduce(value) ??
    `${path} is not a dbt manifest.json (no nodes or no manifest schema version); the signal is sent without it, so no drift detection.`
  );
}

/** The most tables one signal may name (spec §4.8: `tables` 1-500; a run deriving more is refused, 400). */
export const MAX_SIGNAL_TABLES = 500;

export async function recertify(
  client: RecertificationClient,
  input: RecertifyInput,
  warn?: (warning: RecertifyWarning) => void,
): Promise<RecertifyResponse> {
  const request = await recertifyRequest(input, warn);
  const parts = await runParts(request);
  if (parts.length === 1) return client.recertification.signal(request);
  // One signal after another, each answering for its part; together they answer for the run.
  const answers: RecertifyResponse[] = [];
  const whole = (): RecertifyResponse => ({
    ...(answers[0] as RecertifyResponse),
    submitted: answers.reduce((sum, a) => sum + a.submitted, 0),
    governed: answers.reduce((sum, a) => sum + a.governed, 0),
    outcomes: answers.flatMap((a) => a.outcomes),
  });
  for (const [index, part] of parts.entries()) {
    try {
      answers.push(await client.recertification.signal(part));
    } catch (error) {
      // The first part refused: nothing was signalled, as with one signal. A later one: the parts before it
      // were, and saying only its error would tell a CI job the run was not signalled at all.
      if (index === 0) throw error;
      throw await partFailed(error, index, parts.length, whole());
    }
  }
  return whole();
}

/** Part `index` (0-based) of `count` failed after the parts before it were signalled: what was and was not. */
async function partFailed(
  error: unknown,
  index: number,
  count: number,
  signalled: RecertifyResponse,
): Promise<CliError> {
  const { ApiError, NetworkError } = await import('../client/errors.js');
  const { exitCodeForStatus } = await import('../cli/errors.js');
  const reason = error instanceof Error ? error.message : String(error);
  return new CliError(
    `Part ${index + 1} of the ${count} signals of this run failed (${reason}). Parts 1-${index} were signalled ` +
      `(${signalled.submitted} tables submitted, ${signalled.governed} governed); parts ${index + 1}-${count} were not sent.`,
    {
      exitCode:
        error instanceof ApiError
          ? exitCodeForStatus(error.status)
          : error instanceof NetworkError
            ? ExitCode.Unavailable
            : ExitCode.Failure,
      code: error instanceof ApiError ? error.code : 'recertify_failed',
      suggestion:
        'Fix the cause and run gds recertify again: it sends the whole run, so the tables already signalled hear of it twice.',
      details: {
        partsSignalled: index,
        parts: count,
        submitted: signalled.submitted,
        governed: signalled.governed,
        outcomes: signalled.outcomes,
      },
    },
  );
}

/**
 * A dbt run of more than MAX_SIGNAL_TABLES rebuilt tables (a project of 2,000 models) as several signals of
 * at most that many each: the same run (metadata, args), each with its part of the rebuilt results and the
 * manifest's nodes of those, the other results (tests: evidence only) with the first. One part otherwise.
 */
async function runParts(request: RecertifyRequest): Promise<RecertifyRequest[]> {
  const run = request.runResults as { results?: unknown } | undefined;
  if (run === undefined || !Array.isArray(run.results)) return [request];
  const { readRunResults } = await import('../core/dbt-run.js');
  const reading = readRunResults(run);
  if (!reading.ok || reading.built.length <= MAX_SIGNAL_TABLES) return [request];
  const part = new Map(reading.built.map((b, i) => [b.uniqueId, Math.floor(i / MAX_SIGNAL_TABLES)]));
  const parts = Array.from({ length: Math.ceil(reading.built.length / MAX_SIGNAL_TABLES) }, () => ({
    results: [] as unknown[],
    ids: new Set<string>(),
  }));
  for (const result of run.results as unknown[]) {
    const entry = (result ?? {}) as { unique_id?: unknown; node?: { unique_id?: unknown } };
    const uniqueId = typeof entry.unique_id === 'string' ? entry.unique_id : entry.node?.unique_id;
    const into = parts[typeof uniqueId === 'string' ? (part.get(uniqueId) ?? 0) : 0];
    into?.results.push(result);
    if (typeof uniqueId === 'string') into?.ids.add(uniqueId);
  }
  const manifest = request.manifest as { nodes?: Record<string, unknown> } | undefined;
  return parts.map(({ results, ids }) => ({
    ...request,
    runResults: { ...run, results } as unknown as RecertifyRequest['runResults'],
    ...(manifest?.nodes === undefined
      ? {}
      : {
          manifest: {
            ...manifest,
            nodes: Object.fromEntries(Object.entries(manifest.nodes).filter(([id]) => ids.has(id))),
          } as unknown as RecertifyRequest['manifest'],
        }),
  }));
}

async function readJsonObject(path: string, flag: string): Promise<object> {
  // As large as a manifest: what is sent is reduced to what the service reads (reduceRunResults).
  const { text } = await readTextInput(path, {
    flag,
    what: 'dbt run results',
    maxBytes: MANIFEST_READ_LIMIT_BYTES,
  });
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new CliError(`${path} is not JSON: ${(error as Error).message}`, {
      exitCode: ExitCode.Usage,
      code: 'invalid_json',
      suggestion: `Give ${flag} the file dbt wrote (target/run_results.json).`,
    });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new CliError(`${path} is not a JSON object.`, {
      exitCode: ExitCode.Usage,
      code: 'invalid_json',
      suggestion: `Give ${flag} the file dbt wrote.`,
    });
  }
  return value;
}

export type RecertifyOutcome = RecertifyResponse['outcomes'][number];
