// `gds contract set-intent`: decision class, consumer classes and structured grain of a contract.
// The enumerations are checked here, so a typo is a usage error listing the allowed values.
import { CliError, ExitCode } from '../cli/errors.js';
import type { ApiClient } from '../client/index.js';
import type { ContractIntentRequest, LiveContract } from '../client/areas/contracts.js';
import type { Schema } from '../contract/types.js';

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
      `${flag} ${JSON.stringify(value)} is not one of ${allowed.join(', ')}.`,
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
      'Give both, e.g. --grain-type entity --grain-key customer_id,region',
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
        'e.g. --grain-type entity --grain-key customer_id',
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

export async function setIntent(
  client: IntentClient,
  tableId: string,
  request: ContractIntentRequest,
  call: { signal?: AbortSignal } = {},
): Promise<LiveContract> {
  return client.contracts.setIntent(tableId, request, call);
}
