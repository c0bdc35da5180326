// `gds recertification list|dismiss` (a person's requests to act on) and `gds recertify` (the pipeline
// signal of §4.8 for dbt users, with a MANAGEMENT token).
import { CliError, ExitCode } from '../cli/errors.js';
import { readTextInput } from '../cli/input.js';
import type { ApiClient } from '../client/index.js';
import type { RecertificationRequest } from '../client/areas/recertification.js';
import type { RecertifyRequest, RecertifyResponse } from '../contract/types.js';

export type RecertificationClient = Pick<ApiClient, 'recertification'>;

export function listRecertificationRequests(
  client: RecertificationClient,
  options: { tableId?: string | undefined } = {},
): Promise<RecertificationRequest[]> {
  return client.recertification.listRequests({ tableId: options.tableId });
}

export function dismissRecertificationRequest(
  client: RecertificationClient,
  requestId: string,
  reason?: string,
): Promise<RecertificationRequest> {
  return client.recertification.dismiss(requestId, reason);
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

/** The request body, from the dbt files read and parsed here (exit 2 on an unreadable or non-JSON file). */
export async function recertifyRequest(input: RecertifyInput): Promise<RecertifyRequest> {
  const body: RecertifyRequest = {};
  if (input.runResults !== undefined) {
    body.runResults = (await readJsonObject(
      input.runResults,
      '--run-results',
    )) as RecertifyRequest['runResults'];
    if (input.manifest !== undefined) body.manifest = await readJsonObject(input.manifest, '--manifest');
  } else {
    body.tables = [...(input.tables ?? [])];
  }
  if (input.environmentLabel !== undefined) body.environmentLabel = input.environmentLabel;
  if (input.trigger !== undefined) body.trigger = input.trigger;
  if (input.evidenceRunId !== undefined) body.evidence = { kind: 'dbt', runId: input.evidenceRunId };
  return body;
}

export async function recertify(
  client: RecertificationClient,
  input: RecertifyInput,
): Promise<RecertifyResponse> {
  return client.recertification.signal(await recertifyRequest(input));
}

async function readJsonObject(path: string, flag: string): Promise<object> {
  const { text } = await readTextInput(path, { flag });
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new CliError(`${path} is not JSON: ${(error as Error).message}`, {
      exitCode: ExitCode.Usage,
      code: 'invalid_json',
      suggestion: `Give ${flag} the file dbt wrote (target/${flag === '--manifest' ? 'manifest' : 'run_results'}.json).`,
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
