// `push`: register or replace a Mode A definition with a person's session or CLI token, and read the
// definition a table holds (what `push --replace` and `env promote` compare with before writing).
import type { RegistrationResult, Schema } from '../../contract/types.js';
import { pathOf, writeOptions } from '../transport.js';
import type { CallOptions, Transport, WriteOptions } from '../transport.js';

export type ArtifactPushRequest = Schema<'ArtifactPushRequest'>;
export type HeldDefinition = Schema<'HeldDefinition'>;

export interface ArtifactsApi {
  /** `ifMatch` (a replacement): the definition version the file was compared with. */
  push(request: ArtifactPushRequest, options?: WriteOptions): Promise<RegistrationResult>;
  /** The table's definition as declared (name, source, columns, decision context); null for Mode B. */
  held(tableId: string, options?: CallOptions): Promise<HeldDefinition>;
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
    async held(tableId, options) {
      return transport.send<HeldDefinition>({
        method: 'GET',
        path: pathOf('/api/tables/{tableId}/definition', { tableId }),
        ...options,
      });
    },
  };
}
