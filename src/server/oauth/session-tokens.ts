// What the token endpoint hands out: the person's session JWT (the same kind the seed gives, so every
// session-accepting route takes it) and a single-use refresh token. Refresh tokens rotate: each use
// spends the token and issues the next one of its family; presenting a spent one revokes the family,
// except within the reuse grace window (../auth/reissue.ts), which answers it again with the same tokens.
import { recordAudit } from '../audit.js';
import type { AppContext } from '../context.js';
import type { Queryable } from '../db/handle.js';
import { dropExpiredSeals, openSuccessor, sealSuccessor, withinGrace } from '../auth/reissue.js';
import { newId, newSecret, sha256 } from '../ids.js';
import { OAuthError } from './errors.js';
import { REFRESH_TOKEN_TTL_MS } from './settings.js';

const REFRESH_TOKEN_PREFIX = 'gdsr_';

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
}

export interface SessionGrant {
  userId: string;
  workspaceId: string;
  clientId: string;
  scope: string;
}

/** A session JWT and the first refresh token of a new family (or the next one of `familyId`). */
export async function issueSessionTokens(
  tx: Queryable,
  ctx: AppContext,
  grant: SessionGrant,
  familyId: string = newId('rtf'),
): Promise<TokenResponse> {
  const now = ctx.clock();
  const access = await ctx.signer.sign({
    audience: 'session',
    userId: grant.userId,
    workspaceId: grant.workspaceId,
    sessionId: familyId,
  });
  const refreshToken = `${REFRESH_TOKEN_PREFIX}${newSecret()}`;
  await tx.query(
    `INSERT INTO gds.session_refresh_tokens (id, family_id, token_hash, client_id, scope, user_id, workspace_id,
       expires_at, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [
      newId('srt'),
      familyId,
      sha256(refreshToken),
      grant.clientId,
      grant.scope,
      grant.userId,
      grant.workspaceId,
      new Date(now + REFRESH_TOKEN_TTL_MS).toISOString(),
      new Date(now).toISOString(),
    ],
  );
  return {
    access_token: access.token,
    token_type: 'Bearer',
    expires_in: Math.max(0, Math.ceil((Date.parse(access.expiresAt) - now) / 1000)),
    refresh_token: refreshToken,
    scope: grant.scope,
  };
}

interface RefreshRow {
  id: string;
  family_id: string;
  client_id: string;
  scope: string;
  user_id: string;
  workspace_id: string;
  used_at: Date | null;
  revoked_at: Date | null;
  expires_at: Date;
  successor_sealed: string | null;
  active_member: boolean;
}

/**
 * The refresh-token grant. Errors are returned, not thrown, so that a reuse's family revocation
 * commits with the transaction.
 */
export async function rotateRefreshToken(
  tx: Queryable,
  ctx: AppContext,
  refreshToken: string,
  clientId: string,
): Promise<TokenResponse | OAuthError> {
  const [row] = await tx.query<RefreshRow>(
    `SELECT t.id, t.family_id, t.client_id, t.scope, t.user_id, t.workspace_id, t.used_at, t.revoked_at,
            t.expires_at, t.successor_sealed, COALESCE(m.active, false) AS active_member
       FROM gds.session_refresh_tokens t
       LEFT JOIN gds.memberships m ON m.user_id = t.user_id AND m.workspace_id = t.workspace_id
      WHERE t.token_hash = $1 FOR UPDATE OF t`,
    [sha256(refreshToken)],
  );
  const invalid = (why: string) => new OAuthError('invalid_grant', `${why} Sign in again.`);
  if (!row || row.client_id !== clientId) return invalid('The refresh token is unknown.');
  if (row.revoked_at !== null) return invalid('The refresh token has been revoked.');
  const now = new Date(ctx.clock()).toISOString();
  // Presented again within the reuse grace window (a lost answer, a parallel refresh): the same answer, as
  // long as that answer's refresh token is itself unused (a spent token never leads along a chain).
  if (row.used_at !== null && row.successor_sealed !== null && row.active_member) {
    const again = withinGrace(row.used_at, ctx.clock(), ctx.refreshGraceMs)
      ? openSuccessor<TokenResponse>(row.successor_sealed, refreshToken, row.id)
      : undefined;
    if (again !== undefined && (await successorUnused(tx, again.refresh_token))) return again;
  }
  if (row.used_at !== null) {
    await tx.query(
      'UPDATE gds.session_refresh_tokens SET revoked_at = $2 WHERE family_id = $1 AND revoked_at IS NULL',
      [row.family_id, now],
    );
    await recordAudit(tx, ctx.clock, {
      workspaceId: row.workspace_id,
      userId: row.user_id,
      action: 'SESSION_REFRESH_REUSE_REVOKED',
      resource: 'session',
      details: { family: row.family_id },
    });
    return invalid(
      'The refresh token was already used, so every token of its sign-in (its access tokens too) is now revoked.',
    );
  }
  if (new Date(row.expires_at).getTime() <= ctx.clock()) return invalid('The refresh token has expired.');
  if (!row.active_member) return invalid('The account is no longer an active member of the workspace.');
  const grant = { userId: row.user_id, workspaceId: row.workspace_id, clientId, scope: row.scope };
  const tokens = await issueSessionTokens(tx, ctx, grant, row.family_id);
  await tx.query('UPDATE gds.session_refresh_tokens SET used_at = $2, successor_sealed = $3 WHERE id = $1', [
    row.id,
    now,
    sealSuccessor(tokens, refreshToken, row.id),
  ]);
  await dropExpiredSeals(tx, 'session_refresh_tokens', ctx.clock(), ctx.refreshGraceMs);
  await recordAudit(tx, ctx.clock, {
    workspaceId: row.workspace_id,
    userId: row.user_id,
    action: 'SESSION_REFRESHED',
    resource: 'session',
    details: { family: row.family_id },
  });
  return tokens;
}

/** Whether the successor a spent token would be answered with is still unspent and unrevoked. */
async function successorUnused(tx: Queryable, successorRefreshToken: string): Promise<boolean> {
  const [row] = await tx.query<{ unused: boolean }>(
    `SELECT (used_at IS NULL AND revoked_at IS NULL) AS unused FROM gds.session_refresh_tokens
      WHERE token_hash = $1`,
    [sha256(successorRefreshToken)],
  );
  return row?.unused === true;
}
