// Definition artifacts (§4.7): the CI path of push, with a MANAGEMENT token.
import type { DefinitionRequest, RegistrationResult } from '../../contract/types.js';
import type { CallOptions, Transport } from '../transport.js';

export interface DefinitionRegistration extends RegistrationResult {
  /** True when `replaceId` replaced an existing definition, false for a new one. The request decides: the
   * reference server answers 202 to both, the contract also allows 200 for a replacement. */
  replaced: boolean;
}

export interface DefinitionsApi {
  register(request: DefinitionRequest, options?: CallOptions): Promise<DefinitionRegistration>;
}

export function definitionsApi(transport: Transport): DefinitionsApi {
  return {
    async register(request, options) {
      const res = await transport.request<RegistrationResult>({
        method: 'POST',
        path: '/api/workspace/definitions',
        body: request,
        ...options,
      });
      return { ...res.data, replaced: res.status === 200 || request.replaceId !== undefined };
    },
  };
}
