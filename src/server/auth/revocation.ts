// Revocation (spec §2.1: the `tf_` client token is "used for labeling, revocation scripts and audit trails";
// §5.9: CLI tokens are revocable). An integration token is revoked by its `tf_` client token or its id: the
// family's access tokens are refused on their next call (the authenticator checks revoked_at) and its
// refresh tokens are spent. Lists show a masked client token, never a whole one.
import type { Schema } from '../../contract/types.js';
import { recordAudit } from '../audit.js';
import type { AppContext } from '../context.js';
import { requireRole, visibleTokenEnvironments, workspaceEnvironments } from '../certification/access.js';
import { roleAtLeast } from '../../core/scopes.js';
import type { Queryable } from '../db/handle.js';
import { WhereClause } from '../db/where.js';
import type { HttpError } from '../errors.js';
import { forbidden, notFound } from '../errors.js';
import { sha256 } from '../ids.js';
import { checkIds } from '../input-rule.js';
import type { SessionCaller } from './caller.js';
import { CLIENT_TOKEN_PREFIX } from './caller.js';
import { ACCESS_TOKEN_TTL_MS } from './tokens.js';
import { revokeIntegrationFamily } from './integration-tokens.js';
import { maskToken } from './mask-token.js';
import { isoOrNull } from '../db/timestamps.js';

/** A row of `GET /api/integration/tokens` (and the revoked token's answer): the contract's type. */
export type IntegrationTokenRow = Schema<'IntegrationTokenInfo'>;
/** A row of `GET /api/cli/tokens`: the contract's type. */
export type CliTokenRow = Schema<'CliTokenInfo'>;

/**
 * Integration tokens the caller may see: an OWNER or ADMIN sees the workspace's in the environments they see
 * (§5.6, visibleEnvironments: an environment-scoped ADMIN only tokens of those, a `*` token only with every
 * one), anyone else the tokens they issued. `userId` keeps one issuer's (another's: OWNER or ADMIN only).
 */
export async function listIntegrationTokens(
  q: Queryable,
  caller: SessionCaller,
  options: { userId?: string | undefined; id?: string } = {},
): Promise<IntegrationTokenRow[]> {
  const admin = roleAtLeast(caller.role, 'ADMIN');
  if (!admin && options.userId !== undefined && options.userId !== caller.userId)
    requireRole(caller, 'ADMIN', "list another person's integration tokens");
  const issuer = admin ? options.userId : caller.userId;
  const environments = admin
    ? visibleTokenEnvironments(caller, await workspaceEnvironments(q, caller.workspaceId))
    : null;
  const where = new WhereClause<string | string[]>();
  where
    .and(`t.workspace_id = ${where.param(caller.workspaceId)}`)
    .given(environments, (p) => `t.env = ANY(${p}::text[])`)
    .given(issuer, (p) => `t.user_id = ${p}::text`)
    .given(options.id, (p) => `t.id = ${p}::text`);
  const rows = await q.query<{
    id: string;
    name: string;
    client_token_hint: string | null;
    /** A CHECK constraint keeps it to the contract's values. */
    audience: IntegrationTokenRow['audience'];
    scopes: string[];
    env: string;
    user_id: string;
    email: string | null;
    created_at: Date;
    last_used_at: Date | null;
    revoked_at: Date | null;
  }>(
    `SELECT t.id, t.name, t.client_token_hint, t.audience, t.scopes, t.env, t.user_id, u.email, t.created_at,
            t.last_used_at, t.revoked_at
       FROM gds.integration_tokens t LEFT JOIN gds.users u ON u.id = t.user_id
      WHERE ${where.sql}
      ORDER BY t.created_at DESC, t.id`,
    where.params,
  );
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    clientToken: r.client_token_hint ?? `${CLIENT_TOKEN_PREFIX}…`,
    audience: r.audience,
    scopes: r.scopes,
    environment: r.env,
    userId: r.user_id,
    issuedBy: r.email,
    createdAt: new Date(r.created_at).toISOString(),
    lastUsedAt: isoOrNull(r.last_used_at),
    revokedAt: isoOrNull(r.revoked_at),
  }));
}

/** Revokes the integration token named by its `tf_` client token or its id; 404 when the workspace has none. */
export async function revokeIntegrationToken(
  ctx: AppContext,
  caller: SessionCaller,
  reference: string,
): Promise<IntegrationTokenRow> {
  const byClientToken = reference.startsWith(CLIENT_TOKEN_PREFIX);
  // A client token is looked up by its hash and said back masked; an id is said back, so it is bounded.
  if (!byClientToken) checkIds({ tokenId: reference });
  const id = await ctx.db.transaction(async (tx) => {
    const [row] = await tx.query<{ id: string; env: string; user_id: string; revoked_at: Date | null }>(
      `SELECT id, env, user_id, revoked_at FROM gds.integration_tokens
        WHERE workspace_id = $1 AND ${byClientToken ? 'client_token_hash' : 'id'} = $2 FOR UPDATE`,
      [caller.workspaceId, byClientToken ? sha256(reference) : reference],
    );
    if (!row) {
      throw notFound(
        'token_not_found',
        'Your workspace has no integration token by that client token or id.',
        {
          reference: saidBack(reference),
        },
      );
    }
    // The person who issued a token may revoke it; anyone else must be an ADMIN, and one scoped to some
    // environments revokes only tokens of those (a `*` token only with every one).
    if (row.user_id !== caller.userId) {
      requireRole(caller, 'ADMIN', "revoke another person's integration token");
      await requireTokenEnvironment(tx, caller, row.env, row.id);
    }
    if (row.revoked_at === null) {
      await revokeIntegrationFamily(tx, ctx.clock, {
        tokenId: row.id,
        workspaceId: caller.workspaceId,
        actorId: caller.userId,
        env: row.env,
        reason: 'revoked',
      });
    }
    return row.id;
  });
  const [listed] = await listIntegrationTokens(ctx.db, caller, { id });
  if (!listed) throw new Error(`revoked token ${id} vanished`);
  return listed;
}

/** 403 `environment_forbidden` unless the caller may act in the token's environment (`*`: every one). */
async function requireTokenEnvironment(
  q: Queryable,
  caller: SessionCaller,
  environment: string,
  tokenId: string,
): Promise<void> {
  const visible = visibleTokenEnvironments(caller, await workspaceEnvironments(q, caller.workspaceId));
  if (visible === null || visible.includes(environment)) return;
  throw forbidden(
    'environment_forbidden',
    `You may act only in ${caller.envScope.join(', ') || 'no environment'}; integration token ${tokenId} is for ${environment === '*' ? 'every environment' : environment}. Ask a workspace admin to widen your environment scope.`,
    { environmentLabel: environment, tokenId },
  );
}

export async function listCliTokens(
  q: Queryable,
  workspaceId: string,
  filter: { userId?: string; id?: string } = {},
): Promise<CliTokenRow[]> {
  const where = new WhereClause<string>();
  where
    .and(`c.workspace_id = ${where.param(workspaceId)}`)
    .given(filter.userId, (p) => `c.user_id = ${p}::text`)
    .given(filter.id, (p) => `c.id = ${p}::text`);
  const rows = await q.query<{
    id: string;
    name: string | null;
    user_id: string;
    email: string | null;
    token_hint: string | null;
    created_at: Date;
    last_used_at: Date | null;
    revoked_at: Date | null;
  }>(
    `SELECT c.id, c.name, c.user_id, u.email, c.token_hint, c.created_at, c.last_used_at, c.revoked_at
       FROM gds.cli_tokens c LEFT JOIN gds.users u ON u.id = c.user_id
      WHERE ${where.sql}
      ORDER BY c.created_at DESC, c.id`,
    where.params,
  );
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    userId: r.user_id,
    issuedBy: r.email,
    token: r.token_hint ?? 'cli_…',
    createdAt: new Date(r.created_at).toISOString(),
    lastUsedAt: isoOrNull(r.last_used_at),
    revokedAt: isoOrNull(r.revoked_at),
  }));
}

/** 404 of a CLI token the workspace does not have, or the caller may not see. */
export function cliTokenNotFound(tokenId: string): HttpError {
  const named = saidBack(tokenId);
  return notFound('token_not_found', `Your workspace has no CLI token ${named}.`, { tokenId: named });
}

/**
 * A reference to a token that names none, as a 404 says it back: an id of the server's shape (newId) as it is;
 * anything else masked, as a client token is: a token pasted where its id goes (a refresh token
 * `rt_….<secret>`, a `cli_` token) must not come back whole in the answer, gds's error or a log.
 */
function saidBack(reference: string): string {
  return /^[a-z]+_[0-9a-f]{16}$/.test(reference) ? reference : maskToken(reference);
}

/** Revokes a CLI token of the workspace by id; 404 when there is none (or, `ownerId` given, not theirs). */
export async function revokeCliToken(
  ctx: AppContext,
  caller: SessionCaller,
  tokenId: string,
  ownerId?: string,
): Promise<void> {
  const now = new Date(ctx.clock()).toISOString();
  await ctx.db.transaction(async (tx) => {
    const [row] = await tx.query<{ id: string; user_id: string; revoked_at: Date | null }>(
      `SELECT id, user_id, revoked_at FROM gds.cli_tokens WHERE workspace_id = $1 AND id = $2
          ${ownerId === undefined ? '' : 'AND user_id = $3'} FOR UPDATE`,
      ownerId === undefined ? [caller.workspaceId, tokenId] : [caller.workspaceId, tokenId, ownerId],
    );
    if (!row) throw cliTokenNotFound(tokenId);
    if (row.revoked_at !== null) return;
    await tx.query('UPDATE gds.cli_tokens SET revoked_at = $2 WHERE id = $1', [row.id, now]);
    await recordAudit(tx, ctx.clock, {
      workspaceId: caller.workspaceId,
      userId: caller.userId,
      action: 'CLI_TOKEN_REVOKED',
      resource: 'cli_token',
      details: { tokenId: row.id, owner: row.user_id },
    });
  });
}

/** `gds auth revoke`: the calling CLI token, or the calling sign-in (its refresh family and this token). */
export async function revokeOwnCredential(ctx: AppContext, caller: SessionCaller): Promise<void> {
  if (caller.via === 'cli_token' && caller.tokenId !== undefined) {
    await revokeCliToken(ctx, caller, caller.tokenId, caller.userId);
    return;
  }
  const now = new Date(ctx.clock()).toISOString();
  await ctx.db.transaction(async (tx) => {
    if (caller.sessionId !== undefined) {
      await tx.query(
        'UPDATE gds.session_refresh_tokens SET revoked_at = $2 WHERE family_id = $1 AND revoked_at IS NULL',
        [caller.sessionId, now],
      );
    }
    if (caller.tokenId !== undefined) {
      await tx.query(
        `INSERT INTO gds.revoked_access_tokens (jti, workspace_id, expires_at, revoked_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (jti) DO NOTHING`,
        [caller.tokenId, caller.workspaceId, new Date(ctx.clock() + ACCESS_TOKEN_TTL_MS).toISOString(), now],
      );
    }
    await recordAudit(tx, ctx.clock, {
      workspaceId: caller.workspaceId,
      userId: caller.userId,
      action: 'SESSION_REVOKED',
      resource: 'session',
      details: { family: caller.sessionId ?? null },
    });
  });
}
