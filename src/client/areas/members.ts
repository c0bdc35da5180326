// Workspace members (§4.5).
import type { MemberList } from '../../contract/types.js';
import type { CallOptions, Transport } from '../transport.js';

export interface MembersApi {
  /** Every active member of the caller's workspace (platform operators excluded by the service). */
  list(options?: CallOptions): Promise<MemberList>;
}

export function membersApi(transport: Transport): MembersApi {
  return {
    async list(options) {
      return transport.send<MemberList>({
        method: 'GET',
        path: '/api/workspace/members',
        ...options,
      });
    },
  };
}
