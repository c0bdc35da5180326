// `gds tokens issue` / `gds tokens refresh`: integration tokens (§4.1, §4.2). A request carries table
// grants (a DATA-API token) or workspace scopes (a MANAGEMENT token), never both (DESIGN.md).
import { CliError, ExitCode } from '../cli/errors.js';
import type { ApiClient } from '../client/index.js';
import type {
  IssuedToken,
  IssueTokenRequest,
  RefreshResponse,
  TableGrant,
  WorkspaceScope,
} from '../contract/types.js';

export type TokensClient = Pick<ApiClient, 'tokens'>;

export const workspaceScopes: readonly WorkspaceScope[] = [
  'workspace:read:audit',
  'workspace:read:members',
  'workspace:write:certify',
  'workspace:write:definition',
  'workspace:write:recertify',
];

const permissions: readonly TableGrant['permissions'][number][] = ['read', 'write'];

/** `t_42:read,write` as a table grant; throws an Error saying what is wrong (the flag parser shows it). */
export function parseTableGrant(text: string): TableGrant {
  const colon = text.lastIndexOf(':');
  const tableId = colon === -1 ? '' : text.slice(0, colon).trim();
  const asked =
    colon === -1
      ? []
      : text
          .slice(colon + 1)
          .split(',')
          .map((p) => p.trim());
  if (tableId === '' || asked.length === 0 || asked.some((p) => p === '')) {
    throw new Error(
      `${JSON.stringify(text)} is not <tableId>:<permissions>, e.g. t_42:read or t_42:read,write`,
    );
  }
  const unknown = asked.filter((p) => !permissions.includes(p as TableGrant['permissions'][number]));
  if (unknown.length > 0) {
    throw new Error(
      `Unknown permission ${unknown.join(', ')} in ${JSON.stringify(text)}: use read, write or read,write`,
    );
  }
  return { tableId, permissions: [...new Set(asked)] as TableGrant['permissions'] };
}

export interface IssueTokenInput {
  name: string;
  /** An environment label, or `*` for an environment-agnostic token. */
  env: string;
  tables?: readonly TableGrant[] | undefined;
  scopes?: readonly WorkspaceScope[] | undefined;
}

/** The request of §4.1: table grants of the same table are merged, so one table appears once. */
export function issueRequest(input: IssueTokenInput): IssueTokenRequest {
  const hasTables = (input.tables?.length ?? 0) > 0;
  if (hasTables === (input.scopes?.length ?? 0) > 0) {
    throw new CliError(
      'A token holds either table grants (--table) or workspace scopes (--scope): give one kind.',
      {
        exitCode: ExitCode.Usage,
        code: 'token_audience',
        suggestion:
          'A DATA-API token: --table t_42:read,write. A MANAGEMENT token: --scope workspace:read:audit. Issue two tokens for both.',
      },
    );
  }
  const merged = new Map<string, Set<TableGrant['permissions'][number]>>();
  for (const grant of input.tables ?? []) {
    const set = merged.get(grant.tableId) ?? new Set();
    for (const p of grant.permissions) set.add(p);
    merged.set(grant.tableId, set);
  }
  const grants = [...merged].map(([tableId, set]) => ({
    tableId,
    permissions: permissions.filter((p) => set.has(p)) as TableGrant['permissions'],
  }));
  const scopes = [...new Set(input.scopes ?? [])];
  return { name: input.name, env: input.env, scopes: grants.length > 0 ? grants : scopes };
}

export async function issueToken(
  client: TokensClient,
  input: IssueTokenInput,
  options: { signal?: AbortSignal } = {},
): Promise<IssuedToken> {
  return client.tokens.issue(issueRequest(input), options);
}

/** Spends `refreshToken` (single use) for a new access and refresh token. */
export async function refreshToken(
  client: TokensClient,
  refreshToken: string,
  options: { signal?: AbortSignal } = {},
): Promise<RefreshResponse> {
  return client.tokens.refresh(refreshToken.trim(), options);
}

export type { CliTokenInfo, IntegrationTokenInfo } from '../client/areas/tokens.js';

/** `gds tokens list`: the workspace's integration tokens, or (`cli`) a person's CLI tokens. */
export async function listTokens(
  client: TokensClient,
  options: { cli: boolean; userId?: string },
): Promise<Array<Record<string, unknown>>> {
  if (options.cli) return (await client.tokens.listCli(options.userId)).tokens;
  return (await client.tokens.list()).tokens;
}

/** What a `gds tokens revoke` argument names: a CLI token by its id (`clt_…`), else an integration token. */
export function revocationTarget(reference: string): 'cli' | 'integration' {
  const ref = reference.trim();
  if (ref === '')
    throw new CliError('Name the token to revoke: a tf_… client token, an itk_… or clt_… id.', {
      exitCode: ExitCode.Usage,
      code: 'usage',
    });
  if (ref.startsWith('cli_')) {
    throw new CliError(
      'A whole CLI token is not sent anywhere: revoke it by its id (gds tokens list --cli).',
      {
        exitCode: ExitCode.Usage,
        code: 'usage',
        suggestion: 'gds tokens list --cli --json, then gds tokens revoke clt_…',
      },
    );
  }
  return ref.startsWith('clt_') ? 'cli' : 'integration';
}

/** `gds tokens revoke <tf_…|itk_…|clt_…>`: the token as listed, now revoked. */
export async function revokeToken(client: TokensClient, reference: string): Promise<Record<string, unknown>> {
  return revocationTarget(reference) === 'cli'
    ? (await client.tokens.revokeCli(reference.trim())).token
    : (await client.tokens.revoke(reference.trim())).token;
}

/** `gds auth revoke`: the credential the call is made with. */
export async function revokeOwnCredential(client: TokensClient): Promise<void> {
  await client.tokens.revokeOwn();
}
