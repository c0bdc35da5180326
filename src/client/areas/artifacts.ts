// `push`: register or replace a Mode A definition with a person's session or CLI token.
import type { RegistrationResult, Schema } from '../../contract/types.js';
import type { CallOptions, Transport } from '../transport.js';

export type ArtifactPushRequest = Schema<'ArtifactPushRequest'>;

export interface ArtifactsApi {
  push(request: ArtifactPushRequest, options?: CallOptions): Promise<RegistrationResult>;
}

export function artifactsApi(transport: Transport): ArtifactsApi {
  return {
    async push(request, options) {
      return transport.send<RegistrationResult>({
        method: 'POST',
        path: '/api/artifacts',
        body: request,
        ...options,
      });
    },
  };
}
