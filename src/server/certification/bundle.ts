// Portable bundles (`env promote --bundle-out/--bundle-in`): a table's artifact, gate1.yml and
// contract as JSON, sealed with a sha256 over a canonical serialisation of everything else.
import { bundleDigest } from '../../core/bundle-seal.js';
import { badRequest } from '../errors.js';
import type { ContractFields } from './contracts.js';

export const BUNDLE_FORMAT = 'gds-bundle';
export const BUNDLE_FORMAT_VERSION = 1;

export interface BundleArtifact {
  filename: string;
  content: string;
  mimeType: 'sql' | 'yaml' | 'json';
}

export interface BundleBody {
  format: typeof BUNDLE_FORMAT;
  formatVersion: typeof BUNDLE_FORMAT_VERSION;
  table: {
    id?: string;
    name: string;
    mode: 'MODE_A' | 'MODE_B';
    environmentLabel: string;
    source: string | null;
    /** The source table's connector (bundles exported before it was added have none). */
    connectorId?: string;
    /**
     * The project (`gds apply`) recorded on the source table, when it has one (bundles exported before it was
     * added have none): an import records on the table it registers what a promotion would (promotedProject).
     */
    project?: string;
  };
  artifact: BundleArtifact;
  gate1?: { version: number; content: string };
  contract?: ContractFields;
  createdAt: string;
}

export type Bundle = BundleBody & { sha256: string };

export function sealBundle(body: BundleBody): Bundle {
  return { ...body, sha256: bundleDigest(body as unknown as Record<string, unknown>) };
}

/** The bundle minus its seal, after checking the format and that the seal matches (400 otherwise). */
export function openBundle(input: Record<string, unknown>): BundleBody {
  const { sha256, ...body } = input;
  if (body.format !== BUNDLE_FORMAT || body.formatVersion !== BUNDLE_FORMAT_VERSION) {
    throw badRequest(
      'unsupported_bundle_format',
      `This server reads ${BUNDLE_FORMAT} format version ${BUNDLE_FORMAT_VERSION}; got ${JSON.stringify(body.format)} version ${JSON.stringify(body.formatVersion)}.`,
      { format: body.format ?? null, formatVersion: body.formatVersion ?? null },
    );
  }
  if (typeof sha256 !== 'string' || sha256 !== bundleDigest(body)) {
    throw badRequest(
      'bundle_tampered',
      'The bundle does not match its sha256: it was changed after export. Export it again from the source environment.',
      { expected: typeof sha256 === 'string' ? sha256 : null },
    );
  }
  return body as unknown as BundleBody;
}
