// `push`: register or replace a Mode A definition with a person's session or CLI token, and read the
// definition a table holds (what `push --replace` and `env promote` compare with before writing).
import type { RegistrationResult, Schema } from '../../contract/types.js';
import { LONG_WORK_TIMEOUT_MS, pathOf, writeOptions } from '../transport.js';
import type { CallOptions, Transport, WriteOptions } from '../transport.js';

export type ArtifactPushRequest = Schema<'ArtifactPushRequest'>;
export type HeldDefinition = Schema<'HeldDefinition'>;
export type ArtifactBatchItem = Schema<'ArtifactBatchItem'>;
export type ArtifactDryRun = Schema<'ArtifactDryRun'>;
export type ArtifactBatchItemResult = Schema<'ArtifactBatchItemResult'>;

export interface ArtifactsApi {
  /** `ifMatch` (a replacement): the definition version the file was compared with. */
  push(request: ArtifactPushRequest, options?: WriteOptions): Promise<RegistrationResult>;
  /** What `push` would answer, nothing written: the same refusal, or what the push would do. */
  dryRun(request: ArtifactPushRequest, options?: WriteOptions): Promise<ArtifactDryRun>;
  /** The table's definition as declared (name, source, columns, decision context); null for Mode B. */
  held(tableId: string, options?: CallOptions): Promise<HeldDefinition>;
  /** Up to 100 definitions with their gate1.yml and contract intent in one request; a result per item. */
  batch(items: ArtifactBatchItem[], options?: CallOptions): Promise<ArtifactBatchItemResult[]>;
}

export function artifactsApi(transport: Transport): ArtifactsApi {
  return {
    async push(request, options) {
      return transport.send<RegistrationResult>({
        method: 'POST',
        path: '/api/artifacts',
        body: request,
        ...writeOptions(options),
      });
    },
    async dryRun(request, options) {
      return transport.send<ArtifactDryRun>({
        method: 'POST',
        path: '/api/artifacts/dry-run',
        body: request,
        ...writeOptions(options),
      });
    },
    async batch(items, options) {
      const { results } = await transport.send<Schema<'ArtifactBatchResult'>>({
        method: 'POST',
        path: '/api/artifacts/batch',
        body: { items },
        // A hundred tables are written one after another: as long as a gate run may take.
        headersTimeoutMs: LONG_WORK_TIMEOUT_MS,
        ...options,
      });
      // A step's error is what its single write would have answered: masked as that answer would be.
      return results.map((result) => {
        const masked = { ...result };
        for (const step of ['definition', 'gate1', 'contract'] as const) {
          const held = result[step];
          if (held?.error !== undefined) masked[step] = { ...held, error: transport.masked(held.error) };
        }
        return masked;
      });
    },
    async held(tableId, options) {
      return transport.send<HeldDefinition>({
        method: 'GET',
        path: pathOf('/api/tables/{tableId}/definition', { tableId }),
        ...options,
      });
    },
  };
}
