// `gds contract set-intent`: decision class, consumer classes and structured grain of a contract.
// The enumerations are checked here, so a typo is a usage error listing the allowed values.
import { CliError, ExitCode } from '../core/errors.js';
import type { ApiClient } from '../client/index.js';
import { ApiError } from '../client/errors.js';
import type { ContractIntentRequest, LiveContract } from '../client/areas/contracts.js';
import type { Schema } from '../contract/types.js';
import { unifiedDiff } from '../core/gate-diff.js';
import { loadDiff } from '../core/libraries/diff.js';
import { sameJson } from '../core/same-json.js';
import { quotedEcho } from '../core/echo.js';

export type IntentClient = Pick<ApiClient, 'contracts'>;

export const intents: readonly Schema<'Intent'>[] = ['METRIC', 'DECISION', 'OPERATIONAL', 'EXPLORATORY'];
export const consumerClasses: readonly Schema<'ConsumerClass'>[] = ['HUMAN', 'AI', 'AUTOMATION', 'EXTERNAL'];

export interface IntentInput {
  intent?: string | undefined;
  allowedConsumers?: string | undefined;
  grainType?: string | undefined;
  grainKey?: string | undefined;
  grain?: string | undefined;
  meaning?: string | undefined;
}

function usage(message: string, suggestion: string): CliError {
  return new CliError(message, { exitCode: ExitCode.Usage, code: 'invalid_intent', suggestion });
}

function oneOf<T extends string>(value: string, allowed: readonly T[], flag: string): T {
  const upper = value.trim().toUpperCase();
  if (!(allowed as readonly string[]).includes(upper)) {
    throw usage(
      `${flag} ${quotedEcho(value)} is not one of ${allowed.join(', ')}.`,
      `Use one of: ${allowed.join(', ')}.`,
    );
  }
  return upper as T;
}

function list(text: string): string[] {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/** The PATCH body; fields not given are left out, so the service carries them forward. */
export function intentRequest(input: IntentInput): ContractIntentRequest {
  if ((input.grainType === undefined) !== (input.grainKey === undefined)) {
    throw usage(
      '--grain-type and --grain-key go together.',
      'Give both, e.g. --grain-type ONE_PER_ENTITY --grain-key customer_id,region',
    );
  }
  const request: ContractIntentRequest = {};
  if (input.intent !== undefined) request.intent = oneOf(input.intent, intents, '--intent');
  if (input.allowedConsumers !== undefined) {
    request.allowedConsumers = [
      ...new Set(list(input.allowedConsumers).map((c) => oneOf(c, consumerClasses, '--allowed-consumers'))),
    ];
  }
  if (input.grainType !== undefined && input.grainKey !== undefined) {
    const keys = list(input.grainKey);
    if (input.grainType.trim() === '' || keys.length === 0) {
      throw usage(
        '--grain-type and --grain-key need values.',
        'e.g. --grain-type ONE_PER_ENTITY --grain-key customer_id',
      );
    }
    request.grainType = input.grainType.trim();
    request.grainKeyColumns = keys;
  }
  if (input.grain !== undefined) request.grain = input.grain;
  if (input.meaning !== undefined) request.meaning = input.meaning;
  if (Object.keys(request).length === 0) {
    throw usage(
      'Nothing to set: give at least one of --intent, --allowed-consumers, --grain-type/--grain-key, --grain, --meaning.',
      'e.g. gds contract set-intent t_42 --intent METRIC --allowed-consumers HUMAN,AI',
    );
  }
  return request;
}

/** What `contract set-intent` did, or under `--dry-run` would do. */
export type IntentOutcome =
  | { kind: 'unchanged'; contract: LiveContract }
  | { kind: 'preview'; diff: string }
  | { kind: 'set'; contract: LiveContract };

const contractFields = [
  'intent',
  'allowedConsumers',
  'grain',
  'grainType',
  'grainKeyColumns',
  'meaning',
] as const;

/**
 * Compares the request with the live contract first: fields that are already so send nothing.
 * `dryRun` returns the diff of the fields instead of sending.
 */
export async function setIntent(
  client: IntentClient,
  tableId: string,
  request: ContractIntentRequest,
  options: { signal?: AbortSignal; dryRun?: boolean; project?: string } = {},
): Promise<IntentOutcome> {
  const call = options.signal === undefined ? {} : { signal: options.signal };
  const live = await client.contracts.get(tableId, call).catch((error: unknown) => {
    if (error instanceof ApiError && error.code === 'contract_not_found') return null;
    throw error;
  });
  const current = live?.contract ?? null;
  const diff = await intentDiff(tableId, live, request);
  if (current !== null && diff === undefined) return { kind: 'unchanged', contract: current };
  if (options.dryRun === true) return { kind: 'preview', diff: diff ?? '' };
  // The revision compared with goes along: the service compares again under the table's lock, answers
  // `changed: false` when a parallel write already set these values, and 409 when other values came in.
  const revision = current?.revision ?? (current === null ? 0 : undefined);
  const answer = await client.contracts.setIntent(tableId, request, {
    ...call,
    ...(revision === undefined ? {} : { ifMatch: revision }),
    ...(options.project === undefined ? {} : { project: options.project }),
  });
  return answer.changed === false
    ? { kind: 'unchanged', contract: answer.contract }
    : { kind: 'set', contract: answer.contract };
}

/**
 * The diff of the contract fields `request` sets against the live contract, or undefined when it holds them
 * already. "No change" only for a caller the service would let set the intent; anyone else sends, and hears
 * the service's refusal.
 */
export async function intentDiff(
  tableId: string,
  live: { contract: LiveContract; maySetIntent?: boolean } | null,
  request: ContractIntentRequest,
): Promise<string | undefined> {
  const current = live?.contract ?? null;
  const before = current === null ? null : fieldsOf(current);
  const after = { ...(before ?? {}), ...request };
  if (current !== null && live?.maySetIntent !== false && sameFields(after, before ?? {})) return undefined;
  return unifiedDiff(
    await loadDiff(),
    { name: current === null ? `${tableId}@none` : `${tableId}@contract`, text: fieldsText(before ?? {}) },
    { name: `${tableId}@contract`, text: fieldsText(after) },
  );
}

function fieldsOf(contract: LiveContract): Partial<LiveContract> {
  return Object.fromEntries(contractFields.map((key) => [key, contract[key]]));
}

/**
 * fieldsText(a) === fieldsText(b), told field by field (a plan compares the contract of every table), but for
 * the allowed consumer classes: a subset (spec §2.6), the same classes in another order, as the service
 * compares them.
 */
function sameFields(a: Partial<LiveContract>, b: Partial<LiveContract>): boolean {
  for (const key of contractFields) {
    const value = key === 'allowedConsumers' ? asSet(a[key]) : a[key];
    const other = key === 'allowedConsumers' ? asSet(b[key]) : b[key];
    if (value === undefined || other === undefined) {
      if (value !== other) return false;
    } else if (!sameJson(value, other)) return false;
  }
  return true;
}

const asSet = (list: readonly string[] | undefined): string[] | undefined =>
  list === undefined ? undefined : [...new Set(list)].sort();

/** One `key: value` line per field, in a fixed order (a field not set yet is left out). */
function fieldsText(fields: Partial<LiveContract>): string {
  return contractFields
    .filter((key) => fields[key] !== undefined)
    .map((key) => `${key}: ${JSON.stringify(fields[key])}\n`)
    .join('');
}

/** The fields a request sets, one `key: value` line each, as the contract diffs show them. */
export function intentText(request: ContractIntentRequest): string {
  return fieldsText(request as Partial<LiveContract>);
}
