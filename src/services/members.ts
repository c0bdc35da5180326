// `gds members list`: the active members of the caller's workspace (§4.5).
import type { ApiClient } from '../client/index.js';
import type { Member } from '../contract/types.js';

export type MembersClient = Pick<ApiClient, 'members'>;

/** Every active member, owners first then by e-mail; the service already leaves platform operators out. */
export async function listMembers(
  client: MembersClient,
  options: { signal?: AbortSignal } = {},
): Promise<Member[]> {
  const { members } = await client.members.list(options);
  return [...members].sort((a, b) => roleRank(a) - roleRank(b) || a.email.localeCompare(b.email));
}

const roles: readonly Member['role'][] = ['OWNER', 'ADMIN', 'STEWARD', 'MEMBER'];

function roleRank(member: Member): number {
  return roles.indexOf(member.role);
}
