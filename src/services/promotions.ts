// `gds env promote`: the table's artifact on another environment, directly, relayed across two
// profiles, or carried as a portable bundle file. A bundle is checked against its sha256 before it is sent.
import { CliError, ExitCode } from '../cli/errors.js';
import type { ApiClient } from '../client/index.js';
import type { Bundle, PromotionResult } from '../client/areas/promotions.js';
import { isSealIntact } from '../core/bundle-seal.js';

export type PromotionsClient = Pick<ApiClient, 'promotions' | 'connectors'>;
type Call = { signal?: AbortSignal };

export async function promoteTable(
  client: PromotionsClient,
  tableId: string,
  to: string,
  call: Call = {},
): Promise<PromotionResult> {
  return client.promotions.promote(tableId, { to }, call);
}

export async function exportBundle(
  client: PromotionsClient,
  tableId: string,
  call: Call = {},
): Promise<Bundle> {
  return client.promotions.exportBundle(tableId, call);
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
  call: Call = {},
): Promise<PromotionResult> {
  const connectors = await client.connectors.list(call);
  const connector = connectors.find((c) => c.environmentLabel === to && c.status === 'ACTIVE');
  if (connector === undefined) {
    throw new CliError(`Environment ${to} has no active connector to register the bundle on.`, {
      exitCode: ExitCode.NotFound,
      code: 'no_connector_for_environment',
      suggestion: 'gds connectors list shows the environments with connectors; ask an admin to add one.',
    });
  }
  return client.promotions.importBundle(bundle, connector.id, call);
}

/** `--dest-profile`: reads the bundle with the source credentials, registers it with the destination's. */
export async function relayPromotion(
  source: PromotionsClient,
  destination: PromotionsClient,
  tableId: string,
  to: string,
  call: Call = {},
): Promise<PromotionResult> {
  const bundle = await source.promotions.exportBundle(tableId, call);
  return importBundle(destination, bundle, to, call);
}
