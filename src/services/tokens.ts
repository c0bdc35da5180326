// `gds tokens issue` / `gds tokens refresh`: integration tokens (§4.1, §4.2). A request carries table
// grants (a DATA-API token) or workspace scopes (a MANAGEMENT token), never both.
import { CliError, ExitCode } from '../core/errors.js';
import type { ResolvedCredentials } from '../auth/credentials.js';
import type { ApiClient } from '../client/index.js';
import type { CreatedCliToken, ShortLivedTokenRequest } from '../client/areas/tokens.js';
import type { MembersClient } from './members.js';
import type {
  IssuedToken,
  IssueTokenRequest,
  RefreshResponse,
  TableGrant,
  WorkspaceScope,
} from '../contract/types.js';
import { closest } from '../core/did-you-mean.js';
import { maskToken } from '../core/redact.js';
import { connectorsOf, findConnector } from './connector-ref.js';
import { resolveTableId } from './table-ref.js';
import { echoed, echoedList, quotedEcho } from '../core/echo.js';
import { shellWord } from '../core/shell-word.js';
import { Lines } from '../core/terminal-text.js';

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
    throw new Error(`${quotedEcho(text)} is not <tableId>:<permissions>, e.g. t_42:read or t_42:read,write`);
  }
  const unknown = asked.filter((p) => !permissions.includes(p as TableGrant['permissions'][number]));
  if (unknown.length > 0) {
    throw new Error(
      `Unknown permission ${echoedList(unknown)} in ${quotedEcho(text)}: use read, write or read,write`,
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

/** A row of `gds tokens list`: an integration token's or a CLI token's fields, and which kind it is. */
export type TokenRow = Record<string, unknown> & { kind: 'integration' | 'cli'; id: string };

/**
 * `gds tokens list`: the integration tokens the caller sees (an OWNER's or ADMIN's: the workspace's, anyone
 * else's: their own) and their own CLI tokens, newest first; `cli` keeps the CLI tokens; `user` (an e-mail or
 * a usr_ id) keeps that person's tokens of both kinds.
 */
export async function listTokens(
  client: TokensClient & MembersClient,
  options: { cli: boolean; user?: string | undefined },
): Promise<TokenRow[]> {
  const userId = options.user === undefined ? undefined : await resolveUserId(client, options.user);
  const cli = (await client.tokens.listCli(userId)).tokens.map((t): TokenRow => ({ kind: 'cli', ...t }));
  if (options.cli) return cli;
  const integration = (await client.tokens.list(userId)).tokens.map((t): TokenRow => ({
    kind: 'integration',
    ...t,
  }));
  return [...integration, ...cli].sort((a, b) => String(b.createdAt).localeCompare(String(a.createdAt)));
}

/** A member's user id from their e-mail (any case) or their usr_ id; an unknown e-mail is exit 5, with the nearest. */
export async function resolveUserId(client: MembersClient, user: string): Promise<string> {
  const ref = user.trim();
  if (ref.startsWith('usr_')) return ref;
  const { members } = await client.members.list();
  const found = members.find((m) => m.email.toLowerCase() === ref.toLowerCase());
  if (found) return found.userId;
  const near = closest(
    ref,
    members.map((m) => m.email),
  );
  throw new CliError(`No member ${echoed(ref)} in your workspace.`, {
    exitCode: ExitCode.NotFound,
    code: 'user_not_found',
    suggestion:
      near === undefined
        ? 'gds members list shows the e-mails of the workspace’s members.'
        : `Did you mean ${near}? gds members list shows the members’ e-mails.`,
    details: { user: ref, ...(near === undefined ? {} : { didYouMean: near }) },
  });
}

/** What `gds tokens revoke` ends: a CLI or integration token by id (or tf_ client token), and how to name it. */
export interface RevocationTarget {
  kind: 'cli' | 'integration';
  /** What is sent: a clt_ or itk_ id, or the tf_ client token. */
  reference: string;
  /** How the prompt and the reply name it (a tf_ client token masked). */
  label: string;
}

const TOKEN_IDS = /^(clt|itk)_[0-9a-f]+$/;

/**
 * The token a `gds tokens revoke` argument names: a tf_ client token, a clt_ or itk_ id, or a NAME as
 * `gds tokens list` shows it (a live token of yours, or any the workspace's integration tokens you see). A name
 * no live token has is exit 5 with the nearest; one several have is exit 2 listing their ids.
 */
export async function revocationTarget(client: TokensClient, given: string): Promise<RevocationTarget> {
  const ref = given.trim();
  if (ref === '')
    throw new CliError('Name the token to revoke: its NAME, a tf_… client token, or an itk_… or clt_… id.', {
      exitCode: ExitCode.Usage,
      code: 'usage',
    });
  if (ref.startsWith('cli_')) {
    throw new CliError(
      'A whole CLI token is not sent anywhere: revoke it by its name or id (gds tokens list).',
      {
        exitCode: ExitCode.Usage,
        code: 'usage',
        suggestion: 'gds tokens list --cli, then gds tokens revoke <NAME> or gds tokens revoke clt_…',
      },
    );
  }
  if (ref.startsWith('tf_')) {
    return { kind: 'integration', reference: ref, label: `integration token ${maskToken(ref)}` };
  }
  if (TOKEN_IDS.test(ref)) {
    const kind = ref.startsWith('clt_') ? 'cli' : 'integration';
    return { kind, reference: ref, label: `${kind === 'cli' ? 'CLI' : 'integration'} token ${ref}` };
  }
  const [cli, integration] = await Promise.all([
    client.tokens.listCli().then((r) => r.tokens),
    client.tokens.list().then((r) => r.tokens),
  ]);
  const live = [
    ...cli.map((t) => ({
      kind: 'cli' as const,
      id: t.id,
      name: t.name,
      revokedAt: t.revokedAt,
      what: 'CLI token',
    })),
    ...integration.map((t) => ({
      kind: 'integration' as const,
      id: t.id,
      name: t.name,
      revokedAt: t.revokedAt,
      what: `${t.audience} token of ${t.issuedBy ?? t.userId}`,
    })),
  ].filter((t) => t.revokedAt === null && t.name !== null);
  const named = live.filter((t) => t.name?.toLowerCase() === ref.toLowerCase());
  const [only] = named;
  if (only !== undefined && named.length === 1)
    return {
      kind: only.kind,
      reference: only.id,
      label: `${only.kind === 'cli' ? 'CLI token' : 'integration token'} "${only.name ?? ''}" (${only.id})`,
    };
  if (named.length > 1) {
    throw new CliError(`${named.length} live tokens are named ${ref}: revoke one by its id.`, {
      exitCode: ExitCode.Usage,
      code: 'ambiguous_token_name',
      suggestion: new Lines(named.map((t) => `gds tokens revoke ${shellWord(t.id)}   # ${t.what}`)),
      details: { name: ref, tokens: named.map((t) => ({ id: t.id, kind: t.kind })) },
    });
  }
  const near = closest(ref, [...new Set(live.map((t) => t.name ?? ''))]);
  throw new CliError(`No live token named ${echoed(ref)}.`, {
    exitCode: ExitCode.NotFound,
    code: 'token_not_found',
    suggestion:
      near === undefined
        ? 'gds tokens list shows your tokens’ names and ids (either goes here).'
        : `Did you mean ${near}? gds tokens list shows your tokens’ names and ids.`,
    details: { name: ref, ...(near === undefined ? {} : { didYouMean: near }) },
  });
}

/** `gds tokens revoke`: the token as listed, now revoked. */
export async function revokeToken(client: TokensClient, target: RevocationTarget): Promise<TokenRow> {
  return target.kind === 'cli'
    ? { kind: 'cli', ...(await client.tokens.revokeCli(target.reference)).token }
    : { kind: 'integration', ...(await client.tokens.revoke(target.reference)).token };
}

/**
 * `gds auth token create`: a named CLI token of the signed-in person, whole (shown this once). A CLI token
 * does not make another: refused here (exit 3), before anything is sent.
 */
export async function createCliToken(
  client: TokensClient,
  credentials: Pick<ResolvedCredentials, 'token' | 'tokenSource'> | undefined,
  name: string,
): Promise<CreatedCliToken> {
  if (credentials?.token.startsWith('cli_') === true) {
    const from =
      credentials.tokenSource === 'flag'
        ? '--token'
        : credentials.tokenSource === 'env'
          ? 'SERVICE_TOKEN'
          : `profile ${credentials.tokenSource.slice('profile:'.length)}`;
    throw new CliError(
      `Creating a CLI token needs a browser sign-in; the token from ${from} is a CLI token. Nothing was sent.`,
      {
        exitCode: ExitCode.Unauthenticated,
        code: 'interactive_login_required',
        suggestion:
          'Run `gds auth login`, then create the token again (without --token or SERVICE_TOKEN, or with --profile naming the signed-in profile).',
      },
    );
  }
  return client.tokens.createCli(name);
}

/**
 * The short-lived token a MANAGEMENT step asks for when gds holds a person's credential: `scope` in the
 * environment of `connector` (an id or a name, exit 5 when none is), and that connector's id.
 */
export async function drawForConnector(
  client: Pick<ApiClient, 'connectors'>,
  connector: string,
  scope: WorkspaceScope,
): Promise<{ connectorId: string; request: ShortLivedTokenRequest }> {
  const found = findConnector(await connectorsOf(client), connector);
  return { connectorId: found.id, request: { env: found.environmentLabel, scopes: [scope] } };
}

/**
 * The short-lived DATA-API token a records command asks for when gds holds a person's credential: the table
 * `ref` names (an id, or a name the person sees), with `permissions`, in the table's environment.
 */
export async function drawForTable(
  client: Pick<ApiClient, 'tables'>,
  ref: string,
  permissions: TableGrant['permissions'],
): Promise<{ tableId: string; request: ShortLivedTokenRequest }> {
  const tableId = await resolveTableId(client, ref, { flag: '<table>' });
  return { tableId, request: { scopes: [{ tableId, permissions }] } };
}

/** `gds auth revoke`: the credential the call is made with. */
export async function revokeOwnCredential(client: TokensClient): Promise<void> {
  await client.tokens.revokeOwn();
}
