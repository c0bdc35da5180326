// Definition artifacts (§4.7): the CI path of push, with a MANAGEMENT token.
import type { DefinitionRequest, RegistrationResult } from '../../contract/types.js';
import { writeOptions } from '../transport.js';
import type { Transport, WriteOptions } from '../transport.js';

export interface DefinitionRegistration extends RegistrationResult {
  /** True when `replaceId` replaced an existing definition, false for a new one. The request decides: both
   * answer 202 (a replacement queues the auto-baseline job again, like a registration). */
  replaced: boolean;
}

export interface DefinitionsApi {
  /** `ifMatch` (with `replaceId`): the definition version the replacement was computed from. */
  register(request: DefinitionRequest, options?: WriteOptions): Promise<DefinitionRegistration>;
}

export function definitionsApi(transport: Transport): DefinitionsApi {
  return {
    async register(request, options) {
      const result = await transport.send<RegistrationResult>({
        method: 'POST',
        path: '/api/workspace/definitions',
        body: request,
        ...writeOptions(options),
      });
      return { ...result, replaced: request.replaceId !== undefined };
    },
  };
}
