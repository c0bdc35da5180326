// `gds gate get|apply|diff|run|submit|result|status|cancel|suggest`: gate1.yml on the service and gate runs.
// Everything that can be refused locally is refused before a request: an invalid gate1.yml, Gate 3
// without a baseline, a sample on Gate 2/3.
import { randomUUID } from 'node:crypto';
import { CliError, ExitCode } from '../core/errors.js';
import { IDEMPOTENCY_KEY_RULE, isIdempotencyKey } from '../core/idempotency-key.js';
import { MAX_CHUNKS, MAX_SAMPLE_ROWS } from '../core/gate-sample.js';
import type { ApiClient } from '../client/index.js';
import { ApiError } from '../client/errors.js';
import type { GateJobList, GateRecord } from '../client/areas/gate-jobs.js';
import type { GateNumber, GateRunResponse } from '../client/areas/gates.js';
import { type PollOptions, pollUntil } from './poll.js';
import type {
  Gate1ApplyResult,
  Gate1ProofBody,
  Gate1Suggestions,
  Gate1Version,
  GateJobBody,
  GateRunRequest,
} from '../contract/types.js';
import type { DiffSide, GateDiff } from '../core/gate-diff.js';
import { diffGateTexts, loadGateDiffLibraries, sameGateRules } from '../core/gate-diff.js';
import { countDiagnostics } from '../core/gate1/diagnostic.js';
import { validateGate1Lazily } from '../core/gate1/validate.js';
import { checkGate1Text } from '../io/input.js';
import { jobEnded } from '../core/job-status.js';

export type GatesClient = Pick<ApiClient, 'gates' | 'gateJobs'>;
type Call = { signal?: AbortSignal };

export const SAMPLE_SHAPE = /^(?:(?:head|tail|random):[1-9]\d*|chunks:[1-9]\d*@[1-9]\d*)$/;

/** `--sample` as the flag parser checks it; throws an Error saying what is accepted. */
export function parseSampleSpec(text: string): string {
  const spec = text.trim();
  if (!SAMPLE_SHAPE.test(spec)) {
    throw new Error(
      `${JSON.stringify(text)} is not a sample: use head:N, tail:N, random:N or chunks:K@N (e.g. chunks:4@100)`,
    );
  }
  // The service's bounds (400 invalid_sample past them), checked before anything is sent.
  const [rows = 0, chunks = 1] = (spec.match(/\d+/g) ?? []).map(Number).reverse();
  if (rows > MAX_SAMPLE_ROWS || chunks > MAX_CHUNKS) {
    throw new Error(
      `${JSON.stringify(text)} is out of range: N is at most ${MAX_SAMPLE_ROWS.toLocaleString('en')} rows and K at most ${MAX_CHUNKS.toLocaleString('en')} chunks`,
    );
  }
  return spec;
}

/** `--idempotency-key` as the flag parser checks it (as the service does); throws an Error saying what is taken. */
export function parseIdempotencyKey(text: string): string {
  if (!isIdempotencyKey(text)) {
    throw new Error(
      `${JSON.stringify(text)} is not an idempotency key: use ${IDEMPOTENCY_KEY_RULE} (e.g. $GITHUB_RUN_ID-t_42)`,
    );
  }
  return text;
}

/** `v3`, `V3` or `3` (what `versions list` prints, or its number) as a number from 1; undefined for anything else. */
export function versionNumberOf(text: string): number | undefined {
  const match = /^v?(\d{1,9})$/i.exec(text.trim());
  const version = match === null ? 0 : Number(match[1]);
  return version >= 1 ? version : undefined;
}

/** `v3` or `3` as the version name the service stores; throws an Error for anything else. */
export function parseGateVersion(text: string): string {
  const version = versionNumberOf(text);
  if (version === undefined)
    throw new Error(`${JSON.stringify(text)} is not a version: use vN or N, e.g. v3`);
  return `v${version}`;
}

export async function getGate(client: GatesClient, tableId: string, call: Call = {}): Promise<Gate1Version> {
  return client.gates.get(tableId, call);
}

/** What `gate apply` did, or under `--dry-run` would do: `diff` is the text diff from the current version. */
export type GateApplyOutcome =
  | { kind: 'unchanged'; current: Gate1ApplyResult }
  | { kind: 'preview'; diff: string }
  | { kind: 'applied'; applied: Gate1ApplyResult; diff: string };

/**
 * Validates `content` locally (exit 2 with every diagnostic, nothing sent), its column names too when
 * `columns` gives the table's, then compares it with the current version: rules semantically identical
 * (formatting, key order, comments aside) send nothing. Otherwise stores it, unless `dryRun`, which only
 * returns the diff.
 */
export async function applyGate(
  client: GatesClient,
  tableId: string,
  input: { name: string; text: string },
  options: Call & {
    dryRun?: boolean;
    /** The table's column names, asked once the file is valid without them (an invalid file sends nothing). */
    columns?: () => Promise<Iterable<string> | undefined>;
    /** `gds apply`'s project: the service writes only that project's table (409 `owned_elsewhere`). */
    project?: string;
  } = {},
): Promise<GateApplyOutcome> {
  await checkGateLocally(input);
  const call = options.signal === undefined ? {} : { signal: options.signal };
  const [current, columns] = await Promise.all([
    currentGateOrNull(client, tableId, call),
    options.columns?.(),
  ]);
  if (columns !== undefined) await checkGateLocally(input, columns);
  const diff = await gateDiff(tableId, current, input);
  if (current !== null && diff === undefined) {
    const { content: _content, ...version } = current;
    return {
      kind: 'unchanged',
      current: { ...version, warnings: [], recertificationRequestId: null, changed: false },
    };
  }
  if (options.dryRun === true) return { kind: 'preview', diff: diff ?? '' };
  // The version compared with goes along: the service writes only if it is still the current one (a
  // parallel apply of other rules is 409), and answers `changed: false` if it already holds these rules.
  const applied = await client.gates.apply(tableId, input.text, {
    ...call,
    ifMatch: current?.version ?? 0,
    ...(options.project === undefined ? {} : { project: options.project }),
  });
  if (applied.changed === false) return { kind: 'unchanged', current: applied };
  return { kind: 'applied', applied, diff: diff ?? '' };
}

/** The diff from the current gate1.yml (none: empty) to `input`, or undefined when it holds the same rules. */
export async function gateDiff(
  tableId: string,
  current: Pick<Gate1Version, 'version' | 'content'> | null,
  input: { name: string; text: string },
): Promise<string | undefined> {
  const libraries = await loadGateDiffLibraries();
  if (current !== null && sameGateRules(libraries.yaml, current.content, input.text)) return undefined;
  const before = {
    name: current === null ? `${tableId}@none` : `${tableId}@v${current.version}`,
    text: current?.content ?? '',
  };
  return diffGateTexts(libraries, before, input, { semantic: false }).unified;
}

/**
 * Validates a gate1.yml as `gate validate` does, against the table's `columns` when given: exit 2 with every
 * diagnostic, nothing sent. A text over the service's bounds (src/core/artifact-bounds.ts) is refused first,
 * as `gate validate -f` refuses the file (a dbt model's gate1.yml is built by gds, not read with readGate1Text).
 */
export async function checkGateLocally(
  input: { name: string; text: string },
  columns?: Iterable<string>,
): Promise<void> {
  checkGate1Text(input.name, input.text);
  const { diagnostics } = await validateGate1Lazily(input.text, {
    fileName: input.name,
    ...(columns === undefined ? {} : { columns }),
  });
  const { errors } = countDiagnostics(diagnostics);
  if (errors > 0) {
    // The diagnostics are printed from details (one line each in human mode, whole under --json).
    throw new CliError(
      `${input.name} is not a valid gate1.yml (${errors} error${errors === 1 ? '' : 's'}); nothing was sent.`,
      {
        exitCode: ExitCode.Usage,
        code: 'invalid_gate1',
        suggestion: `Fix the file (gds gate validate -f ${input.name} shows the same), then apply it again.`,
        details: { diagnostics },
      },
    );
  }
}

/**
 * The column names of a table, for checking a gate1.yml before it is sent; undefined when this caller may
 * not read them (the service checks them then).
 */
export async function tableColumnsOrUndefined(
  client: Pick<ApiClient, 'tables'>,
  tableId: string,
  call: Call = {},
): Promise<string[] | undefined> {
  try {
    return (await client.tables.ddl(tableId, call)).columns;
  } catch (error) {
    if (error instanceof ApiError && (error.status === 401 || error.status === 403)) return undefined;
    throw error;
  }
}

async function currentGateOrNull(
  client: GatesClient,
  tableId: string,
  call: Call,
): Promise<Gate1Version | null> {
  try {
    return await client.gates.get(tableId, call);
  } catch (error) {
    if (error instanceof ApiError && error.code === 'gate1_not_found') return null;
    throw error;
  }
}

export type DiffTarget =
  { kind: 'current'; after: DiffSide } | { kind: 'versions'; from: string; to: string };

export interface ServerGateDiff extends GateDiff {
  /** The table has no gate1.yml yet: the local file was compared with an empty one. */
  noneApplied: boolean;
}

/**
 * The server half of `gate diff`: a local file against the current version, or two stored versions. A
 * table with no gate1.yml yet has an empty one to compare with: the file differs from it (exit 1), as
 * the spec's "exit code 0 identical, 1 different" has it.
 */
export async function diffWithServer(
  client: GatesClient,
  tableId: string,
  target: DiffTarget,
  options: { semantic: boolean } & Call,
): Promise<ServerGateDiff> {
  const call = options.signal === undefined ? {} : { signal: options.signal };
  const side = (v: Gate1Version): DiffSide => ({ name: `${tableId}@v${v.version}`, text: v.content });
  let before: DiffSide;
  let after: DiffSide;
  let noneApplied = false;
  if (target.kind === 'current') {
    const current = await currentGateOrNull(client, tableId, call);
    noneApplied = current === null;
    before = current === null ? { name: `${tableId} (no gate1.yml yet)`, text: '' } : side(current);
    after = target.after;
  } else {
    // Both asked at once; when neither exists, the error said is --from's, whichever answer came first.
    const [from, to] = await Promise.allSettled([
      client.gates.version(tableId, target.from, call).then(side),
      client.gates.version(tableId, target.to, call).then(side),
    ]);
    if (from.status === 'rejected') throw from.reason;
    if (to.status === 'rejected') throw to.reason;
    [before, after] = [from.value, to.value];
  }
  const diff = await diffGateTexts(await loadGateDiffLibraries(), before, after, {
    semantic: options.semantic,
  });
  return { ...diff, noneApplied };
}

export const gate3NeedsBaseline = '--baseline <reportId> is required for Gate 3';

/** The run request, refused locally (exit 2) when the flags do not fit the gate. */
export function gateRunRequest(input: {
  gate: GateNumber;
  baseline?: string | undefined;
  sample?: string | undefined;
}): GateRunRequest {
  const usage = (message: string, code: string, suggestion: string) =>
    new CliError(message, { exitCode: ExitCode.Usage, code, suggestion });
  if (input.gate === 3 && input.baseline === undefined) {
    throw usage(
      gate3NeedsBaseline,
      'baseline_required',
      'Pass the id of a finished auto-baseline job (gds gate jobs <tableId> lists them, finished ones included): gds gate run <tableId> --gate 3 --baseline <reportId>',
    );
  }
  if (input.gate !== 3 && input.baseline !== undefined) {
    throw usage(
      `--baseline applies to Gate 3 only.`,
      'baseline_gate3_only',
      'Drop --baseline, or add --gate 3.',
    );
  }
  if (input.gate !== 1 && input.sample !== undefined) {
    throw usage(`--sample applies to Gate 1 only.`, 'sample_gate1_only', 'Drop --sample for Gate 2 and 3.');
  }
  return {
    gate: input.gate,
    ...(input.baseline === undefined ? {} : { baseline: input.baseline }),
    ...(input.sample === undefined ? {} : { sample: input.sample }),
  };
}

export async function runGate(
  client: GatesClient,
  tableId: string,
  request: GateRunRequest,
  call: Call = {},
): Promise<GateRunResponse> {
  return client.gates.run(tableId, request, call);
}

/**
 * What `gate submit` did: submitted (the proof; `replayed`: the service had taken a submission with this
 * `key` already and answered as then), or skipped a CERTIFIED table (`--if-not-certified`).
 */
export type SubmitOutcome =
  | { kind: 'submitted'; proof: Gate1ProofBody; replayed: boolean; key: string }
  | { kind: 'skipped'; tableId: string; state: string; certifiedView: string | null; reason: string }
  /** `ifStale`: the table already waits for review on a fresh proof (`proof`, submitted by someone since). */
  | { kind: 'fresh'; proof: Gate1ProofBody };

/**
 * Submits the table (full scan, proof, PENDING_REVIEW). With `ifNotCertified` the service leaves a CERTIFIED
 * table and its certified view as they are (409 `table_certified`, checked before the scan and when the
 * proof is written), which is a skip here, not an error. With `ifStale`, a table already waiting for review
 * on a fresh proof (submitted since the caller looked) is left as it is: `fresh`. The submission carries
 * `idempotencyKey` (a pipeline's own, so that its step run again gets the first answer), else a fresh random
 * key: the transport's retries of this one request after a lost connection are answered, never applied twice,
 * and each call is a new submission (never a key derived from the table: a person submitting again on
 * purpose gets a new one).
 */
export async function submitGate(
  client: GatesClient,
  tableId: string,
  options: { ifNotCertified?: boolean; project?: string; ifStale?: boolean; idempotencyKey?: string } = {},
  call: Call = {},
): Promise<SubmitOutcome> {
  const ifNotCertified = options.ifNotCertified === true;
  const key = options.idempotencyKey ?? randomUUID();
  try {
    const { proof, replayed } = await client.gates.submit(
      tableId,
      { ifNotCertified },
      {
        ...call,
        ...(options.project === undefined ? {} : { project: options.project }),
        ...(options.ifStale === true ? { ifStale: true } : {}),
        idempotencyKey: key,
      },
    );
    return proof.skipped === 'fresh' ? { kind: 'fresh', proof } : { kind: 'submitted', proof, replayed, key };
  } catch (error) {
    if (!ifNotCertified || !(error instanceof ApiError) || error.code !== 'table_certified') throw error;
    const details = (error.details ?? {}) as { tableId?: unknown; state?: unknown; certifiedView?: unknown };
    return {
      kind: 'skipped',
      tableId: typeof details.tableId === 'string' ? details.tableId : tableId,
      state: typeof details.state === 'string' ? details.state : 'CERTIFIED',
      certifiedView: typeof details.certifiedView === 'string' ? details.certifiedView : null,
      reason: error.message,
    };
  }
}

/** A job's status, or the persisted Gate 1 proof a `prf_…` id (printed by `gate submit`) names. */
export async function gateJobStatus(
  client: GatesClient,
  jobId: string,
  gate: GateNumber,
  call: Call = {},
): Promise<GateRecord> {
  return client.gateJobs.lookup(jobId, { gate }, call);
}

/** The report of a terminal job (409 `job_not_terminal` before it ends), or a persisted proof. */
export async function gateJobResult(
  client: GatesClient,
  jobId: string,
  call: Call = {},
): Promise<GateRecord> {
  return client.gates.result(jobId, undefined, call);
}

export function isProof(record: GateRecord): record is Gate1ProofBody {
  return 'passed' in record;
}

/**
 * `gate status --watch`: polls until the job ends (a proof has ended already), calling `onChange`
 * with the first answer and with each one that differs.
 */
export async function watchGateJob(
  client: GatesClient,
  jobId: string,
  gate: GateNumber,
  options: PollOptions,
  onChange: (record: GateRecord) => void | Promise<void>,
): Promise<GateRecord> {
  const call = options.signal === undefined ? {} : { signal: options.signal };
  return pollUntil(
    () => client.gateJobs.lookup(jobId, { gate }, call),
    (record) => isProof(record) || jobEnded(record.status),
    (record) => JSON.stringify(record),
    options,
    onChange,
  );
}

/** `gate jobs`: the table's recent gate jobs and Gate 1 submissions, newest first. */
export async function listGateJobs(
  client: GatesClient,
  tableId: string,
  limit: number | undefined,
  call: Call = {},
): Promise<GateJobList['jobs']> {
  return (await client.gateJobs.list(tableId, { limit }, call)).jobs;
}

export async function cancelGateJob(
  client: GatesClient,
  jobId: string,
  gate: GateNumber,
  call: Call = {},
): Promise<GateJobBody> {
  return client.gates.cancel(jobId, gate, call);
}

export async function suggestGate(
  client: GatesClient,
  tableId: string,
  call: Call = {},
): Promise<Gate1Suggestions> {
  return client.gates.suggest(tableId, call);
}
