// The service's side of the bounds of src/core/artifact-bounds.ts (gds checks the same numbers before it
// sends): a refusal is a 400 naming the limit, before the full parse.
import { artifactKindOf } from '../core/artifacts/index.js';
import {
  ARTIFACT_BODY_LIMIT_BYTES,
  artifactBoundsRefusal,
  gate1BoundsRefusal,
} from '../core/artifact-bounds.js';
import type { BoundsRefusal } from '../core/artifact-bounds.js';
import { badRequest, HttpError } from './errors.js';

export { ARTIFACT_BODY_LIMIT_BYTES } from '../core/artifact-bounds.js';

function refuse(refusal: BoundsRefusal | undefined): void {
  if (refusal) throw badRequest(refusal.code, refusal.message, refusal.details);
}

/**
 * Refuses (400 `artifact_too_large`) an artifact whose view would have more columns than PostgreSQL
 * allows, or too big to parse quickly. Kinds it cannot tell are left to the parser.
 */
export function checkArtifactBounds(input: { filename: string; content: string; mimeType?: string }): void {
  refuse(artifactBoundsRefusal(input.mimeType ?? artifactKindOf(input.filename), input.content));
}

/** Refuses (400 `gate1_too_large`) a gate1.yml too big to parse quickly (its length is the contract's maxLength). */
export function checkGate1Bounds(content: string): void {
  refuse(gate1BoundsRefusal(content));
}

/**
 * Refuses (413 `payload_too_large`, as the body limit of POST /api/artifacts answers it) a definition that,
 * sent alone as that route's body, would be over ARTIFACT_BODY_LIMIT_BYTES: a batch's item is answered as its
 * single write, though the batch's own body may be bigger.
 */
export function checkArtifactBodySize(definition: unknown): void {
  const bytes = Buffer.byteLength(JSON.stringify(definition) ?? '');
  if (bytes > ARTIFACT_BODY_LIMIT_BYTES)
    throw new HttpError(
      413,
      'payload_too_large',
      `The definition is ${bytes.toLocaleString('en')} bytes as a request body, over the ${ARTIFACT_BODY_LIMIT_BYTES.toLocaleString('en')} of POST /api/artifacts.`,
      { bytes, limitBytes: ARTIFACT_BODY_LIMIT_BYTES },
    );
}
