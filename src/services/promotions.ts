// `gds env promote`: the table's artifact on another environment, directly, relayed across two
// profiles, or carried as a portable bundle file. A bundle is checked against its sha256 before it is sent.
import { shellWord } from '../core/shell-word.js';
import { CliError, ExitCode } from '../core/errors.js';
import { closest } from '../core/did-you-mean.js';
import type { ApiClient } from '../client/index.js';
import { ApiError } from '../client/errors.js';
import type { Bundle, PromotionPreview, PromotionResult } from '../client/areas/promotions.js';
import type { WriteOptions } from '../client/transport.js';
import { isSealIntact } from '../core/bundle-seal.js';
import { echoed, echoedPath } from '../core/echo.js';

export type PromotionsClient = Pick<ApiClient, 'promotions' | 'connectors' | 'artifacts'>;
type Call = { signal?: AbortSignal };

/** What a promotion did, or under `--dry-run` would do (the service compares with the target table). */
export type PromotionOutcome =
  | { kind: 'preview'; changed: boolean; diff: string }
  | { kind: 'unchanged'; result: PromotionResult }
  | { kind: 'promoted'; result: PromotionResult };

export type LandingOptions = Call & { replaceId?: string | undefined; dryRun?: boolean | undefined };

export async function promoteTable(
  client: PromotionsClient,
  tableId: string,
  to: string,
  options: LandingOptions = {},
): Promise<PromotionOutcome> {
  const { signal, ...landing } = options;
  const call = signal === undefined ? {} : { signal };
  const write = await replacing(client, landing, call);
  return custodyAdvised(to, () =>
    landed(() => client.promotions.promote(tableId, { to, ...landing }, write)),
  );
}

/**
 * A Mode B (custody) table is not promoted or bundled (docs/spec-deviations.md): the service's 400
 * `not_promotable` gets the steps that carry its rules to `to` by hand.
 */
async function custodyAdvised<T>(to: string, send: () => Promise<T>): Promise<T> {
  try {
    return await send();
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 400 && error.code === 'not_promotable')) throw error;
    const name = (error.details as { name?: unknown } | undefined)?.name;
    const table = shellWord(typeof name === 'string' ? name : '<tableId>');
    throw new CliError(error.message, {
      exitCode: ExitCode.Refused,
      code: error.code,
      suggestion:
        `Create the custody table in ${shellWord(to)} through the service (its dashboard or API), then copy the rules: ` +
        `gds gate get ${shellWord(table)} -o gate1.yml && gds gate apply <new table> -f gate1.yml, and the contract with ` +
        'gds contract set-intent <new table> --intent … --grain …. Its rows stay in its own environment.',
      details: { status: 400, server: error.details },
    });
  }
}

/**
 * A replacement (--replace, not --dry-run) reads the definition version of the table it replaces first and
 * sends it as `If-Match`: a write to that table between this read and the promotion (another push or
 * promotion) is then refused with 412 `precondition_failed` instead of being overwritten unseen. A table the
 * read does not find is left to the service's own answer (no precondition).
 */
async function replacing(
  client: Pick<ApiClient, 'artifacts'>,
  landing: Omit<LandingOptions, 'signal'>,
  call: Call,
): Promise<WriteOptions> {
  if (landing.replaceId === undefined || landing.dryRun === true) return call;
  try {
    const held = await client.artifacts.held(landing.replaceId, call);
    return { ...call, ifMatch: held.definitionVersion };
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return call;
    throw error;
  }
}

function isPreview(answer: PromotionResult | PromotionPreview): answer is PromotionPreview {
  return 'diff' in answer;
}

/** The service's answer as an outcome; its 409 (a table already there) names the --replace to pass. */
async function landed(send: () => Promise<PromotionResult | PromotionPreview>): Promise<PromotionOutcome> {
  let answer: PromotionResult | PromotionPreview;
  try {
    answer = await send();
  } catch (error) {
    if (error instanceof ApiError && error.status === 409 && error.code === 'promotion_target_exists') {
      const id = (error.details as { governanceId?: unknown } | undefined)?.governanceId;
      throw new CliError(error.message, {
        exitCode: ExitCode.Conflict,
        code: error.code,
        suggestion: `To replace the table already there, run again with --replace ${typeof id === 'string' ? shellWord(id) : '<governanceId>'} (--dry-run shows what would change).`,
        details: { status: 409, server: error.details },
      });
    }
    // Its landing's name or source held by another table: the service says what frees it (not a push's advice).
    const reason = (error instanceof ApiError ? (error.details as { reason?: unknown }) : undefined)?.reason;
    if (
      error instanceof ApiError &&
      error.status === 409 &&
      (error.code === 'name_conflict' || error.code === 'source_conflict') &&
      typeof reason === 'string'
    ) {
      throw new CliError(error.message, {
        exitCode: ExitCode.Conflict,
        code: error.code,
        suggestion: reason,
        details: { status: 409, server: error.details },
      });
    }
    const advised =
      error instanceof ApiError ? (environmentAdvice(error) ?? foreignFlagAdvice(error)) : undefined;
    if (advised !== undefined) throw advised;
    throw error;
  }
  if (isPreview(answer)) return { kind: 'preview', changed: answer.changed, diff: answer.diff };
  return answer.changed === false
    ? { kind: 'unchanged', result: answer }
    : { kind: 'promoted', result: answer };
}

/**
 * `--bundle-in`: the bundle must be the one of the table named on the command line, by its id or its name
 * (case-insensitive, as `--bundle-out <name>` suggests it); exit 2 otherwise.
 */
export function checkBundleTable(bundle: Bundle, tableId: string, name: string): void {
  const { id, name: tableName } = bundle.table as Bundle['table'] & { id?: string };
  if (id === tableId || tableName.toLowerCase() === tableId.toLowerCase()) return;
  const holds =
    id !== undefined ? `table ${id} (${tableName})` : `table ${tableName} (a bundle without a table id)`;
  throw new CliError(
    `${echoedPath(name)} is the bundle of ${holds}, not of ${echoed(tableId)}; nothing was sent.`,
    {
      exitCode: ExitCode.Usage,
      code: 'bundle_table_mismatch',
      suggestion: `Name the bundle's table: gds env promote ${shellWord(id ?? tableName)} --to <env> --bundle-in ${shellWord(name)}, or export the bundle of ${tableId}.`,
      details: { argument: tableId, bundleTable: { id: id ?? null, name: tableName } },
    },
  );
}

/** The table's bundle, for a promotion to `to`. */
export async function exportBundle(
  client: PromotionsClient,
  tableId: string,
  to: string,
  call: Call = {},
): Promise<Bundle> {
  return custodyAdvised(to, () => client.promotions.exportBundle(tableId, call));
}

/** The bundle in `text`, or exit 2 when it is not one or does not match its sha256 (nothing sent). */
export function parseBundle(text: string, name: string): Bundle {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw bundleError(`${name} is not JSON, so not a bundle.`, 'invalid_bundle');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw bundleError(
      `${name} is not a bundle (a JSON object from gds env promote --bundle-out).`,
      'invalid_bundle',
    );
  }
  const record = value as Record<string, unknown>;
  if (record.format !== 'gds-bundle') {
    throw bundleError(`${name} is not a gds bundle (format is not "gds-bundle").`, 'invalid_bundle');
  }
  if (!isSealIntact(record)) {
    throw bundleError(
      `${name} does not match its sha256: it was changed after export. Nothing was sent.`,
      'bundle_tampered',
    );
  }
  return value as Bundle;
}

function bundleError(message: string, code: string): CliError {
  return new CliError(message, {
    exitCode: ExitCode.Usage,
    code,
    suggestion:
      'Export it again from the source environment: gds env promote <tableId> --to <env> --bundle-out <file>',
  });
}

/** Registers the bundle on the first active connector of `to`. */
export async function importBundle(
  client: PromotionsClient,
  bundle: Bundle,
  to: string,
  options: LandingOptions = {},
): Promise<PromotionOutcome> {
  const { signal, ...landing } = options;
  const call = signal === undefined ? {} : { signal };
  const connectors = await client.connectors.list(call);
  const connector = connectors.find((c) => c.environmentLabel === to && c.status === 'ACTIVE');
  if (connector === undefined) {
    const environments = [...new Set(connectors.map((c) => c.environmentLabel))].sort();
    throw environments.includes(to)
      ? noActiveConnector(to, `Environment ${to} has no active connector to register the bundle on.`)
      : unknownEnvironment(to, environments, `Environment ${echoed(to)} has no connector in this workspace.`);
  }
  const write = await replacing(client, landing, call);
  return landed(() => client.promotions.importBundle(bundle, connector.id, write, landing));
}

/** `--dest-profile`: reads the bundle with the source credentials, registers it with the destination's. */
export async function relayPromotion(
  source: PromotionsClient,
  destination: PromotionsClient,
  tableId: string,
  to: string,
  options: LandingOptions = {},
): Promise<PromotionOutcome> {
  const bundle = await exportBundle(
    source,
    tableId,
    to,
    options.signal === undefined ? {} : { signal: options.signal },
  );
  return importBundle(destination, bundle, to, options);
}

/**
 * The service words some refusals for `push` (`pass --source / source naming one of its tables`); env
 * promote has no --source: the message keeps what was wrong and the advice names what promote can do.
 */
function foreignFlagAdvice(error: ApiError): CliError | undefined {
  if (!/\bpass --source\b/.test(error.message)) return undefined;
  const message = error.message.replace(/:\s*pass --source[^.]*\.?$/, '.').replace(/\.\.$/, '.');
  return new CliError(message, {
    exitCode: error.status === 422 || error.status === 400 ? ExitCode.Refused : ExitCode.Failure,
    code: error.code,
    suggestion:
      'The target environment has no such warehouse object: create it there first, or promote to another ' +
      'environment (--to); --dry-run checks the target without changing it.',
    details: { status: error.status, server: error.details },
  });
}

/** The service's refusals of the target environment, with what a CLI user does next. */
function environmentAdvice(error: ApiError): CliError | undefined {
  const details = (error.details ?? {}) as { environmentLabel?: unknown; environments?: unknown };
  const to = typeof details.environmentLabel === 'string' ? details.environmentLabel : undefined;
  if (to === undefined) return undefined;
  if (error.status === 404 && error.code === 'environment_not_found') {
    const known = Array.isArray(details.environments) ? details.environments.map(String) : [];
    return unknownEnvironment(to, known, error.message);
  }
  if (error.status === 400 && error.code === 'no_connector_for_environment') {
    return noActiveConnector(to, error.message);
  }
  return undefined;
}

/** `--to` names no environment of the workspace: exit 5, as for any unknown name, with the one meant. */
function unknownEnvironment(to: string, environments: readonly string[], message: string): CliError {
  const near = closest(to, environments);
  const choices = environments.length === 0 ? 'none yet' : environments.join(', ');
  return new CliError(message, {
    exitCode: ExitCode.NotFound,
    code: 'environment_not_found',
    suggestion: `${near === undefined ? '' : `Did you mean ${near}? `}--to takes an environment of the workspace: ${choices}.`,
    details: { environmentLabel: to, environments, ...(near === undefined ? {} : { didYouMean: near }) },
  });
}

/** The environment exists, but nothing there can hold the table: exit 7, and how to get a connector. */
function noActiveConnector(to: string, message: string): CliError {
  return new CliError(message, {
    exitCode: ExitCode.Refused,
    code: 'no_connector_for_environment',
    suggestion: `A workspace admin adds (or reactivates) a connector of ${to} on the service; gds connectors list shows each connector's environment and status. Then promote again.`,
    details: { environmentLabel: to },
  });
}
