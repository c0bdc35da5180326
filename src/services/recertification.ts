// `gds recertification list|dismiss` (a person's requests to act on) and `gds recertify` (the pipeline
// signal of §4.8 for dbt users, with a MANAGEMENT token).
import { createHash } from 'node:crypto';
import { CliError, ExitCode, exitCodeForStatus } from '../core/errors.js';
import { readTextInput } from '../io/input.js';
import { MANIFEST_READ_LIMIT_BYTES, REQUEST_BODY_LIMIT_BYTES } from '../core/artifact-bounds.js';
import type { ApiClient } from '../client/index.js';
import type { RecertificationRequest, RecertificationSignal } from '../client/areas/recertification.js';
import type { RecertifyRequest, RecertifyResponse } from '../contract/types.js';
import { ApiError, NetworkError } from '../client/errors.js';
import type { ReducedManifest, UnbuiltNode } from '../core/dbt-run.js';
import {
  namedTables,
  unbuiltNodes,
  readRunResults,
  reduceManifest,
  reduceRunResults,
  storableNodes,
} from '../core/dbt-run.js';
import { parseDottedName } from '../core/artifacts/identifiers.js';
import { openRunState } from './recertify-state.js';
import type { RunStateWarning } from './recertify-state.js';
import { echoedPath } from '../core/echo.js';

export type RecertificationClient = Pick<ApiClient, 'recertification'>;

/** Largest page the service serves of the request list, and the first page's size (the first line comes soon). */
const MAX_REQUEST_PAGE = 1000;
const FIRST_REQUEST_PAGE = 100;

/**
 * The requests a page at a time, for printing each as it arrives, each with every signal it keeps (the list
 * carries a request's latest 20; the rest are read for the requests that have more, 100 requests a read) unless
 * `everySignal` is false: then as listed, in as many requests as pages (the table view shows a request's
 * count and latest signal, never its earlier ones). With `limit` (-L), only that many are asked for (the
 * service pages by it) and no page after them.
 */
export async function* listRecertificationRequestPages(
  client: RecertificationClient,
  options: {
    tableId?: string | undefined;
    all?: boolean | undefined;
    limit?: number | undefined;
    everySignal?: boolean | undefined;
  } = {},
): AsyncGenerator<{ rows: RecertificationRequest[]; total?: number }, void, undefined> {
  const first = Math.min(options.limit ?? FIRST_REQUEST_PAGE, MAX_REQUEST_PAGE);
  const rest = Math.min(options.limit ?? MAX_REQUEST_PAGE, MAX_REQUEST_PAGE);
  let seen = 0;
  const query = { tableId: options.tableId, all: options.all };
  for await (const page of client.recertification.requestPages(query, [first, rest])) {
    const rows = options.everySignal === false ? page.requests : await withEverySignal(client, page.requests);
    yield { rows, ...(page.total === undefined ? {} : { total: page.total }) };
    seen += page.requests.length;
    if (options.limit !== undefined && seen >= options.limit) return;
  }
}

/** The requests one read of signals names at most (the service's bound). */
const SIGNAL_READ_REQUESTS = 100;

/**
 * The requests, each with every signal it keeps: those of the requests with earlier signals than the latest 20
 * read together, 100 requests a read (a page of 1,000 requests is a few reads, not one a request); from a service
 * from before that read (404), a request at a time.
 */
async function withEverySignal(
  client: RecertificationClient,
  requests: readonly RecertificationRequest[],
): Promise<RecertificationRequest[]> {
  const earlier = requests.filter((request) => request.earlierSignals).map((request) => request.id);
  if (earlier.length === 0) return [...requests];
  const signals = new Map<string, RecertificationSignal[]>(earlier.map((id) => [id, []]));
  try {
    for (let from = 0; from < earlier.length; from += SIGNAL_READ_REQUESTS) {
      for await (const page of client.recertification.signalsOf(
        earlier.slice(from, from + SIGNAL_READ_REQUESTS),
      ))
        for (const { requestId, ...signal } of page) signals.get(requestId)?.push(signal);
    }
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 404)) throw error;
    for (const id of earlier) {
      const one: RecertificationSignal[] = [];
      for await (const page of client.recertification.signals(id)) one.push(...page);
      signals.set(id, one);
    }
  }
  return requests.map((request) => {
    const every = signals.get(request.id);
    // None read (the request left the caller's sight meanwhile): as listed.
    return every === undefined || every.length === 0
      ? request
      : { ...request, signals: every, earlierSignals: false };
  });
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
  /** The service's base URL: a run cut off part-way is resumed only against the same service. */
  service?: string | undefined;
  /**
   * The token the signals are sent with (or drawn on): a run's state is kept per workspace, its `ws` claim
   * (or a hash of an opaque token), so two workspaces sharing a state folder never resume each other's runs.
   */
  token?: string | undefined;
  /** Where XDG_STATE_HOME is read (the process's environment by default). */
  env?: NodeJS.ProcessEnv | undefined;
  /**
   * Told before each signal is sent and after each is answered: what a stop at that moment (Ctrl-C, SIGTERM)
   * leaves signalled, perhaps signalled (the signal in flight) and not sent.
   */
  progress?: ((report: RecertifyRunReport) => void) | undefined;
}

/** Where a run stands: the dbt unique ids of its rebuilt tables by what became of their signal. */
export interface RecertifyRunReport {
  partsSignalled: number;
  parts: number;
  submitted: number;
  governed: number;
  signalled: string[];
  /** The part in flight, or whose answer was lost: the service may have applied it. */
  unconfirmed: string[];
  notSent: string[];
  outcomes: RecertifyResponse['outcomes'];
  /** Whether the run's signals carry idempotency keys (a dbt invocation id): sent again, none applies twice. */
  resumable: boolean;
}

/**
 * A problem that does not stop the signal (a manifest gds cannot use), or what the run left out of it (models
 * that failed or were skipped), said once on stderr.
 */
export interface RecertifyWarning {
  code: 'manifest_ignored' | 'resumed' | 'not_rebuilt' | 'unnamed_relations' | RunStateWarning['code'];
  message: string;
  /** not_rebuilt: each model, seed or snapshot left out, with dbt's status. */
  details?: { notRebuilt: UnbuiltNode[] };
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
    const runResults = await readJsonObject(input.runResults, '--run-results');
    const reading = readRunResults(runResults);
    if (!reading.ok) throw refusedRun(input.runResults, reading);
    body.runResults = runResults as RecertifyRequest['runResults'];
    let manifest: ReducedManifest | string | undefined;
    if (input.manifest !== undefined) {
      const read = await readManifest(input.manifest);
      manifest = typeof read === 'string' ? read : read.manifest;
      if (typeof read === 'string') warn({ code: 'manifest_ignored', message: read });
      else {
        if (read.leftOut !== undefined) warn({ code: 'manifest_ignored', message: read.leftOut });
        body.manifest = read.manifest;
      }
    }
    // Named as the service names them: a run none of whose rebuilt nodes names a table is refused here too.
    const naming = namedTables(reading.built, typeof manifest === 'object' ? manifest.nodes : null);
    if (!naming.ok)
      throw refusedRun(input.runResults, naming, 'Name the rebuilt tables with --tables; nothing was sent.');
    const unbuilt = unbuiltNodes(runResults);
    if (unbuilt.length > 0) warn(notRebuiltWarning(unbuilt));
    // dbt up to 1.5 (run results v1-v4) writes no relation_name: without a manifest a node is named by its
    // unique id, which is not its table when the model has an alias (its schema unknown too), and such a
    // table goes unsignalled.
    const unnamed = reading.built.filter((b) => b.relationName === undefined).length;
    if (unnamed > 0 && input.manifest === undefined) {
      warn({
        code: 'unnamed_relations',
        message:
          `${input.runResults} names no relation for ${unnamed} of its ${reading.built.length} rebuilt models, seeds and snapshots ` +
          `(dbt${reading.dbtVersion === null ? '' : ` ${reading.dbtVersion}`} writes no relation_name): each is named by its ` +
          'unique id, so one with an alias matches no table. Pass --manifest target/manifest.json to name each by its relation.',
      });
    }
  } else {
    body.tables = (input.tables ?? []).map(signalEntry);
  }
  if (input.environmentLabel !== undefined) body.environmentLabel = input.environmentLabel;
  if (input.trigger !== undefined) body.trigger = input.trigger;
  if (input.evidenceRunId !== undefined) body.evidence = { kind: 'dbt', runId: input.evidenceRunId };
  // The run results as dbt wrote them (the service derives its evidence summary from the artifact), unless
  // the request, with every field above, would pass the service's 25 MB: then each result as the status,
  // node, relation and message the signal reads.
  if (body.runResults !== undefined && requestBytes(body) > REQUEST_BODY_LIMIT_BYTES)
    body.runResults = reduceRunResults(
      body.runResults as Record<string, unknown>,
    ) as unknown as RecertifyRequest['runResults'];
  // Checked here, with the files: a signal the service would refuse (413) is refused before a token is drawn.
  if (body.runResults !== undefined) checkPartSizes(await runParts(body), input.runResults);
  return body;
}

/**
 * The models, seeds and snapshots the run did not rebuild (dbt's error, skipped, …): their tables are not
 * signalled, and a CI log should say so rather than leave them out of the outcomes unsaid.
 */
function notRebuiltWarning(unbuilt: readonly UnbuiltNode[]): RecertifyWarning {
  const named = unbuilt
    .slice(0, 5)
    .map((n) => `${n.uniqueId} (${n.status})`)
    .join(', ');
  const more = unbuilt.length > 5 ? `, and ${unbuilt.length - 5} more` : '';
  const [count, were] =
    unbuilt.length === 1
      ? ['1 model, seed or snapshot of the run was', 'its table is']
      : [`${unbuilt.length} models, seeds or snapshots of the run were`, 'their tables are'];
  return {
    code: 'not_rebuilt',
    message: `${count} not rebuilt (${named}${more}): ${were} not signalled.`,
    details: { notRebuilt: [...unbuilt] },
  };
}

/**
 * A `--tables` name as the signal names it: `schema.table` (or `db.schema.table`, as dbt prints a relation) is the
 * table over that relation, `{name, schema}`, and a quoted part (`"Orders"`, `` `orders` ``) is the name it
 * quotes; any other text is sent as typed. Sent as typed, such a name matched no table: not governed, silently.
 */
function signalEntry(text: string): NonNullable<RecertifyRequest['tables']>[number] {
  if (!/[."`]/.test(text)) return text;
  const parts = parseDottedName(text, { backticks: true });
  const name = parts?.at(-1);
  if (parts === undefined || name === undefined) return text;
  const schema = parts.at(-2);
  return schema === undefined ? name : { name, schema };
}

/** The bytes of a request's body as the client sends it (JSON.stringify). */
const requestBytes = (request: RecertifyRequest) => Buffer.byteLength(JSON.stringify(request));

/**
 * Exit 2 before anything is sent when a signal would still pass the service's 25 MB (413): run results whose
 * results dbt wrote long messages into, reduced already, or a manifest of that many rebuilt nodes.
 */
function checkPartSizes(parts: readonly RunPart[], runResults: string | undefined): void {
  for (const [index, part] of parts.entries()) {
    const bytes = requestBytes(part.request);
    if (bytes <= REQUEST_BODY_LIMIT_BYTES) continue;
    const which = parts.length === 1 ? 'The signal' : `Part ${index + 1} of the ${parts.length} signals`;
    throw new CliError(
      `${which} of ${runResults ?? 'this run'} would be ${bytes.toLocaleString('en')} bytes as JSON, even with each run ` +
        `result reduced to what the service reads; a request to the service carries at most ` +
        `${REQUEST_BODY_LIMIT_BYTES.toLocaleString('en')} bytes. Nothing was sent.`,
      {
        exitCode: ExitCode.Usage,
        code: 'request_too_large',
        suggestion: 'Name the rebuilt tables with --tables instead.',
        details: { bytes, limitBytes: REQUEST_BODY_LIMIT_BYTES, part: index + 1, parts: parts.length },
      },
    );
  }
}

/**
 * A bare name the service found tables over `relations` (`schema.name`, several schemas) for: it signalled none
 * of them, and says which to name.
 */
export function ambiguousNote(table: string, relations: readonly string[]): string {
  const named =
    relations.slice(0, 5).join(', ') + (relations.length > 5 ? `, and ${relations.length - 5} more` : '');
  return (
    `${table} was not signalled: tables over ${named} answer to that name. Name the rebuilt one with its ` +
    `schema (--tables ${relations[0] ?? 'schema.table'}), or pass --manifest with --run-results.`
  );
}

/**
 * What a run means for the tables waiting for review it rebuilt: their proofs are stale, so certify is blocked
 * until they are submitted again (a CI job that applies with --submit before it recertifies leaves them so).
 */
export function staleSubmissionsNote(tables: readonly string[]): string {
  const unique = [...new Set(tables)];
  const named = unique.slice(0, 5).join(', ') + (unique.length > 5 ? `, and ${unique.length - 5} more` : '');
  const [count, them] =
    unique.length === 1
      ? ['1 table waiting for review was rebuilt since it was', 'it is']
      : [`${unique.length} tables waiting for review were rebuilt since they were`, 'they are'];
  return (
    `${count} submitted (${named}): certify is blocked until ${them} submitted again. ` +
    'gds apply --submit, run for their project, submits them again (in CI, run gds recertify before apply ' +
    '--submit); gds gate submit <table> submits one.'
  );
}

/** Run results gds does not send: a run that built nothing (exit 7), or a file it cannot read (exit 2). */
function refusedRun(
  path: string,
  refusal: { code: 'malformed_run_results' | 'nothing_built'; message: string },
  suggestion?: string,
): CliError {
  const built = refusal.code === 'nothing_built';
  return new CliError(`${echoedPath(path)}: ${refusal.message}`, {
    exitCode: built ? ExitCode.Refused : ExitCode.Usage,
    code: refusal.code,
    suggestion:
      suggestion ??
      (built
        ? 'Signal after dbt run, build, seed or snapshot; nothing was sent.'
        : 'Give --run-results the target/run_results.json dbt wrote; nothing was sent.'),
  });
}

/** The reduced manifest, or why it is left out (a file that cannot be read is still exit 2). */
async function readManifest(path: string): Promise<{ manifest: ReducedManifest; leftOut?: string } | string> {
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
  const manifest = reduceManifest(value);
  if (manifest === null)
    return `${path} is not a dbt manifest.json (no nodes or no manifest schema version); the signal is sent without it, so no drift detection.`;
  // The service ignores a node naming a model in text no database holds (§4.8: a bad manifest is ignored).
  const { kept, leftOut: bad } = storableNodes(manifest.nodes);
  const [first] = bad;
  if (first === undefined) return { manifest };
  manifest.nodes = kept;
  const message = `${path}: node ${first.path.slice(1)} holds ${first.problem}, text no database stores${bad.length > 1 ? ` (and ${bad.length - 1} more node${bad.length > 2 ? 's' : ''})` : ''}; the signal is sent without ${bad.length > 1 ? 'them' : 'it'}, so no drift detection for ${bad.length > 1 ? 'those models' : 'that model'}.`;
  return Object.keys(manifest.nodes).length === 0 ? message : { manifest, leftOut: message };
}

/** The most tables one signal may name (spec §4.8: `tables` 1-500; a run deriving more is refused, 400). */
export const MAX_SIGNAL_TABLES = 500;

/**
 * Signals the run (`prepared`: the request `recertifyRequest` built from the same input, so that a command can
 * read and check its files before it asks for a token).
 */
export async function recertify(
  client: RecertificationClient,
  input: RecertifyInput,
  warn?: (warning: RecertifyWarning) => void,
  prepared?: RecertifyRequest,
): Promise<RecertifyResponse> {
  const request = prepared ?? (await recertifyRequest(input, warn));
  const parts = await runParts(request);
  const only = parts[0];
  if (parts.length === 1 && only !== undefined) {
    input.progress?.(runReport(parts, new Map(), 0));
    let response: RecertifyResponse;
    try {
      response = await client.recertification.signal(request, { idempotencyKey: only.key });
    } catch (error) {
      // Refused, nothing was applied: the error as it is. Sent and unanswered: say that it may have been.
      throw mayHaveBeenApplied(error) ? partFailed(error, 0, parts, new Map()) : error;
    }
    input.progress?.(runReport(parts, new Map([[0, response]]), undefined));
    return response;
  }
  // One signal after another, each answering for its part; together they answer for the run. Each answer
  // is kept in a state file until the whole run is signalled, so a run cut off part-way and started again
  // sends only the parts not answered (and the service answers a part sent twice as the first time).
  const state = await openRunState(
    input,
    parts.map((p) => p.key),
    (warning) => warn?.(warning),
  );
  const answers = new Map<number, RecertifyResponse>(state.answered);
  if (answers.size > 0) {
    warn?.({
      code: 'resumed',
      message: `Parts ${[...answers.keys()].map((i) => i + 1).join(', ')} of the ${parts.length} signals of this run were signalled by an earlier gds recertify; sending the rest.`,
    });
  }
  const whole = (): RecertifyResponse => {
    const { submitted, governed, outcomes } = runReport(parts, answers, undefined);
    return { ...(inPartOrder(answers)[0] as RecertifyResponse), submitted, governed, outcomes };
  };
  for (const [index, part] of parts.entries()) {
    if (answers.has(index)) continue;
    input.progress?.(runReport(parts, answers, index));
    try {
      answers.set(index, await client.recertification.signal(part.request, { idempotencyKey: part.key }));
      await state.save(answers);
      input.progress?.(runReport(parts, answers, undefined));
    } catch (error) {
      // The first part refused with nothing signalled before it: as with one signal. Otherwise saying only its
      // error would tell a CI job the run was not signalled at all.
      if (answers.size === 0 && !mayHaveBeenApplied(error)) throw error;
      throw partFailed(error, index, parts, answers);
    }
  }
  await state.done();
  return whole();
}

/** One signal of a run: its body, its idempotency key, and the dbt unique ids of the tables it rebuilt. */
interface RunPart {
  request: RecertifyRequest;
  key: string | undefined;
  uniqueIds: string[];
}

/**
 * The run's standing with the parts in `answers` answered (now or by an earlier run) and part `inFlight` sent
 * without an answer yet (or whose answer was lost).
 */
function runReport(
  parts: readonly RunPart[],
  answers: ReadonlyMap<number, RecertifyResponse>,
  inFlight: number | undefined,
): RecertifyRunReport {
  const ids = (which: (i: number) => boolean) => parts.flatMap((part, i) => (which(i) ? part.uniqueIds : []));
  const done = inPartOrder(answers);
  return {
    partsSignalled: answers.size,
    parts: parts.length,
    submitted: done.reduce((sum, a) => sum + a.submitted, 0),
    governed: done.reduce((sum, a) => sum + a.governed, 0),
    signalled: ids((i) => answers.has(i)),
    unconfirmed: ids((i) => i === inFlight && !answers.has(i)),
    notSent: ids((i) => !answers.has(i) && i !== inFlight),
    outcomes: done.flatMap((a) => a.outcomes),
    resumable: parts.every((part) => part.key !== undefined),
  };
}

function inPartOrder(answers: ReadonlyMap<number, RecertifyResponse>): RecertifyResponse[] {
  return [...answers.keys()].sort((a, b) => a - b).map((i) => answers.get(i) as RecertifyResponse);
}

/**
 * Part `index` of `parts` failed: what was signalled (parts answered, now or by an earlier run), what may have
 * been (the part in flight when the connection was lost: the service may have applied it, and answers it as
 * the first time when it is sent again), and what was not sent.
 */
function partFailed(
  error: unknown,
  index: number,
  parts: readonly RunPart[],
  answers: ReadonlyMap<number, RecertifyResponse>,
): CliError {
  const reason = error instanceof Error ? error.message : String(error);
  const report = runReport(parts, answers, mayHaveBeenApplied(error) ? index : undefined);
  const { signalled: sent, unconfirmed: inFlight, notSent } = report;
  const which =
    parts.length === 1
      ? 'The signal of this run'
      : `Part ${index + 1} of the ${parts.length} signals of this run`;
  return new CliError(
    `${which} failed (${reason}). ${sent.length} of ${sent.length + inFlight.length + notSent.length} ` +
      `rebuilt tables were signalled (${report.governed} governed)` +
      (inFlight.length > 0
        ? `; the ${inFlight.length} of ${parts.length === 1 ? 'the signal' : `part ${index + 1}`} may have been (the answer was lost)`
        : '') +
      `; ${notSent.length} were not.`,
    {
      exitCode:
        error instanceof ApiError
          ? exitCodeForStatus(error.status)
          : error instanceof NetworkError
            ? ExitCode.Unavailable
            : ExitCode.Failure,
      code:
        error instanceof ApiError
          ? error.code
          : error instanceof NetworkError
            ? error.failure === 'timeout'
              ? 'timeout'
              : 'unreachable'
            : 'recertify_failed',
      suggestion: report.resumable ? RESUME_ADVICE : UNKEYED_ADVICE,
      details: report,
    },
  );
}

const UNKEYED_ADVICE =
  'Fix the cause and run the same gds recertify again: its signals carry no idempotency key (--tables, or ' +
  'run results without a dbt invocation id), so the tables already signalled are signalled again.';

const RESUME_ADVICE =
  'Fix the cause and run the same gds recertify again: it sends only the parts not signalled, and the ' +
  'service answers a part it already applied without applying it twice.';

/**
 * Whether the service may have applied a signal that failed with `error`. The service's own error answer (its
 * error envelope) means the signal's transaction was rolled back. A lost connection, or an answer that is not
 * the service's (a gateway's 502 or 504 after giving up waiting, a body that is not JSON), says nothing of it.
 */
function mayHaveBeenApplied(error: unknown): boolean {
  if (!(error instanceof ApiError)) return true;
  return error.code === 'invalid_response' || (error.status >= 500 && error.code === `http_${error.status}`);
}

/**
 * A dbt run of more than MAX_SIGNAL_TABLES rebuilt tables (a project of 2,000 models) as several signals of
 * at most that many each: the same run (metadata, args), each with its part of the rebuilt results and the
 * manifest's nodes of those, the other results (tests: evidence only) with the first. One part otherwise.
 * A run's part has an idempotency key (a hash of the part and its environment) when the run has dbt's
 * invocation id: the same run sent again is the same signals.
 */
async function runParts(request: RecertifyRequest): Promise<RunPart[]> {
  const run = request.runResults as { results?: unknown; metadata?: { invocation_id?: unknown } } | undefined;
  if (run === undefined || !Array.isArray(run.results)) {
    // --tables: the names given stand for the nodes, at most MAX_SIGNAL_TABLES a signal. No key: the same
    // names in a later run are a later rebuild, to be signalled again.
    const tables = request.tables ?? [];
    const parts: RunPart[] = [];
    for (let from = 0; from === 0 || from < tables.length; from += MAX_SIGNAL_TABLES) {
      const slice = tables.slice(from, from + MAX_SIGNAL_TABLES);
      const names = slice.map((t) => (typeof t === 'string' ? t : t.name));
      parts.push({
        request: tables.length > MAX_SIGNAL_TABLES ? { ...request, tables: slice } : request,
        key: undefined,
        uniqueIds: names,
      });
    }
    return parts;
  }
  const keyOf = (part: RecertifyRequest) =>
    typeof run.metadata?.invocation_id === 'string'
      ? `gds-recertify-${createHash('sha256')
          .update(JSON.stringify([request.environmentLabel ?? null, part]))
          .digest('hex')}`
      : undefined;
  const reading = readRunResults(run);
  if (!reading.ok || reading.built.length <= MAX_SIGNAL_TABLES) {
    return [
      { request, key: keyOf(request), uniqueIds: reading.ok ? reading.built.map((b) => b.uniqueId) : [] },
    ];
  }
  const part = new Map(reading.built.map((b, i) => [b.uniqueId, Math.floor(i / MAX_SIGNAL_TABLES)]));
  const parts = Array.from({ length: Math.ceil(reading.built.length / MAX_SIGNAL_TABLES) }, (_, i) => ({
    results: [] as unknown[],
    ids: new Set<string>(),
    built: reading.built.slice(i * MAX_SIGNAL_TABLES, (i + 1) * MAX_SIGNAL_TABLES).map((b) => b.uniqueId),
  }));
  for (const result of run.results as unknown[]) {
    const entry = (result ?? {}) as { unique_id?: unknown; node?: { unique_id?: unknown } };
    const uniqueId = typeof entry.unique_id === 'string' ? entry.unique_id : entry.node?.unique_id;
    const into = parts[typeof uniqueId === 'string' ? (part.get(uniqueId) ?? 0) : 0];
    into?.results.push(result);
    if (typeof uniqueId === 'string') into?.ids.add(uniqueId);
  }
  const manifest = request.manifest as { nodes?: Record<string, unknown> } | undefined;
  return parts.map(({ results, ids, built }) => {
    const body: RecertifyRequest = {
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
    };
    return { request: body, key: keyOf(body), uniqueIds: built };
  });
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
    throw new CliError(`${echoedPath(path)} is not JSON: ${(error as Error).message}`, {
      exitCode: ExitCode.Usage,
      code: 'invalid_json',
      suggestion: `Give ${flag} the file dbt wrote (target/run_results.json).`,
    });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new CliError(`${echoedPath(path)} is not a JSON object.`, {
      exitCode: ExitCode.Usage,
      code: 'invalid_json',
      suggestion: `Give ${flag} the file dbt wrote.`,
    });
  }
  return value;
}

export type RecertifyOutcome = RecertifyResponse['outcomes'][number];
