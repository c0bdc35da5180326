// Integration credentials (spec §2.1, §4.1, §4.2): a `tf_` client token (a label, never accepted),
// 60-minute JWT access tokens and 30-day single-use refresh tokens `<tokenId>.<secret>`, stored
// hashed. The integration token's id names the family: reusing a spent refresh token revokes it, except
// within the reuse grace window (reissue.ts), which answers it again with the same rotated pair.
import type { Audience } from '../../core/scopes.js';
import { recordAudit } from '../audit.js';
import type { AppContext } from '../context.js';
import type { Queryable } from '../db/handle.js';
import type { Clock } from '../clock.js';
import type { HttpError } from '../errors.js';
import { unauthorized } from '../errors.js';
import { newId, newSecret, sha256 } from '../ids.js';
import type { TokenBundle } from '../../contract/types.js';
import { REFRESH_TOKEN_TTL_MS } from '../oauth/settings.js';
import type { SessionCaller } from './caller.js';
import { CLIENT_TOKEN_PREFIX, INTEGRATION_TOKEN_ID_PREFIX } from './caller.js';
import { maskToken } from './mask-token.js';
import { dropExpiredSeals, openSuccessor, sealSuccessor, withinGrace } from './reissue.js';

export interface NewIntegrationToken {
  workspaceId: string;
  userId: string;
  name: string;
  audience: Audience;
  env: string;
  scopes: string[];
  /** DATA-API: granted slug -> table id (see IntegrationClaims.tableIds). */
  tableIds: Record<string, string>;
}

/** What a person may mint, as checked at mint time (routes/integration.ts). */
export type TokenPlan = Pick<NewIntegrationToken, 'audience' | 'env' | 'scopes' | 'tableIds'>;

export interface IssuedCredentials {
  id: string;
  clientToken: string;
  tokens: TokenBundle;
}

export async function issueIntegrationToken(
  ctx: AppContext,
  spec: NewIntegrationToken,
): Promise<IssuedCredentials> {
  const id = newId(INTEGRATION_TOKEN_ID_PREFIX);
  const clientToken = `${CLIENT_TOKEN_PREFIX}${newSecret(24)}`;
  const now = new Date(ctx.clock()).toISOString();
  const refresh = await ctx.db.transaction(async (tx) => {
    await tx.query(
      `INSERT INTO gds.integration_tokens (id, workspace_id, user_id, name, audience, env, scopes, client_token_hash,
         created_at, table_ids, client_token_hint)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
      [
        id,
        spec.workspaceId,
        spec.userId,
        spec.name,
        spec.audience,
        spec.env,
        JSON.stringify(spec.scopes),
        sha256(clientToken),
        now,
        JSON.stringify(spec.tableIds),
        maskToken(clientToken),
      ],
    );
    await recordAudit(tx, ctx.clock, {
      workspaceId: spec.workspaceId,
      userId: spec.userId,
      action: 'INTEGRATION_TOKEN_ISSUED',
      resource: 'integration_token',
      environmentLabel: spec.env,
      details: { tokenId: id, name: spec.name, audience: spec.audience, scopes: spec.scopes },
    });
    return createRefreshToken(tx, ctx, id);
  });
  const access = await ctx.signer.sign({ ...spec, tokenId: id });
  return {
    id,
    clientToken,
    tokens: { accessToken: access.token, expiresAt: access.expiresAt, ...refresh },
  };
}

/**
 * A 60-minute access token drawn on the caller's own credential: its `tid` is that CLI token's id, or the
 * sign-in's refresh family (else the session token's own id), so the authenticator refuses it once that is
 * revoked (caller.ts). Nothing is stored but the audit entry: nothing to list, renew or clean up.
 */
export async function issueShortLivedToken(
  ctx: AppContext,
  caller: SessionCaller,
  plan: TokenPlan,
): Promise<{ audience: Audience; env: string; scopes: string[]; accessToken: string; expiresAt: string }> {
  const parent = caller.via === 'cli_token' ? caller.tokenId : (caller.sessionId ?? caller.tokenId);
  if (parent === undefined) throw new Error("a person's credential without an id");
  await recordAudit(ctx.db, ctx.clock, {
    workspaceId: caller.workspaceId,
    userId: caller.userId,
    action: 'SHORT_LIVED_TOKEN_ISSUED',
    resource: 'integration_token',
    environmentLabel: plan.env,
    details: { drawnOn: parent, audience: plan.audience, scopes: plan.scopes },
  });
  const access = await ctx.signer.sign({
    ...plan,
    userId: caller.userId,
    workspaceId: caller.workspaceId,
    tokenId: parent,
  });
  return {
    audience: plan.audience,
    env: plan.env,
    scopes: plan.scopes,
    accessToken: access.token,
    expiresAt: access.expiresAt,
  };
}

async function createRefreshToken(q: Queryable, ctx: AppContext, familyId: string) {
  const fresh = newRefreshToken(ctx);
  await insertRefreshToken(q, familyId, fresh);
  return fresh.answer;
}

interface NewRefreshToken {
  /** The row's own key: one row a secret, so a spent secret is still known (reuse, the grace answer). */
  id: string;
  /** The id presented with every secret of the family (`<tokenId>.<secret>`): the first row's id. */
  tokenId: string;
  secret: string;
  createdAt: string;
  answer: { refreshToken: string; refreshExpiresAt: string };
}

function newRefreshToken(ctx: AppContext, tokenId?: string): NewRefreshToken {
  const id = newId('rt');
  const secret = newSecret();
  const now = ctx.clock();
  const refreshExpiresAt = new Date(now + REFRESH_TOKEN_TTL_MS).toISOString();
  return {
    id,
    tokenId: tokenId ?? id,
    secret,
    createdAt: new Date(now).toISOString(),
    answer: { refreshToken: `${tokenId ?? id}.${secret}`, refreshExpiresAt },
  };
}

async function insertRefreshToken(q: Queryable, familyId: string, token: NewRefreshToken): Promise<void> {
  await q.query(
    `INSERT INTO gds.refresh_tokens (id, token_id, family_id, secret_hash, created_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6)`,
    [token.id, token.tokenId, familyId, sha256(token.secret), token.createdAt, token.answer.refreshExpiresAt],
  );
}

interface RefreshRow {
  id: string;
  token_id: string;
  family_id: string;
  secret_hash: string;
  expires_at: Date;
  used_at: Date | null;
  successor_sealed: string | null;
  workspace_id: string;
  user_id: string;
  audience: Audience;
  env: string;
  scopes: string[];
  table_ids: Record<string, string>;
  revoked_at: Date | null;
  member_active: boolean | null;
}

const INVALID = () =>
  unauthorized('invalid_refresh_token', 'This refresh token is not valid; issue a new integration token.');

const NOT_A_MEMBER = () => unauthorized('not_a_member', 'The token owner is no longer an active member.');

/**
 * Spends a refresh token and returns a new access and refresh token of the same family. A spent token
 * presented again within the reuse grace window (ctx.refreshGraceMs: a lost answer, a parallel refresh)
 * gets that same pair again; after it, reuse revokes the family (§4.2).
 */
export async function refreshIntegrationToken(ctx: AppContext, presented: string): Promise<TokenBundle> {
  const [id, secret, extra] = presented.split('.');
  if (!id || !secret || extra !== undefined) throw INVALID();
  const row = await refreshRow(ctx, id, secret);
  if (!row) throw INVALID();
  if (row.revoked_at)
    throw unauthorized('token_revoked', 'This token family has been revoked; issue a new one.');
  if (row.used_at) return answerAgainOrRevoke(ctx, row, secret);
  if (new Date(row.expires_at).getTime() <= ctx.clock()) {
    throw unauthorized('refresh_token_expired', 'This refresh token has expired (30 days); issue a new one.');
  }
  if (!row.member_active) throw NOT_A_MEMBER();
  const now = new Date(ctx.clock()).toISOString();
  const successor = newRefreshToken(ctx, row.token_id);
  const access = await ctx.signer.sign({
    audience: row.audience,
    userId: row.user_id,
    workspaceId: row.workspace_id,
    tokenId: row.family_id,
    scopes: row.scopes,
    env: row.env,
    tableIds: row.table_ids,
  });
  const answer: TokenBundle = { accessToken: access.token, expiresAt: access.expiresAt, ...successor.answer };
  const spent = await ctx.db.transaction(async (tx) => {
    // The successor's answer is stored with the spending, so a loser of a race finds it once this commits.
    const rows = await tx.query(
      `UPDATE gds.refresh_tokens SET used_at = $2, successor_sealed = $3
        WHERE id = $1 AND used_at IS NULL RETURNING id`,
      [row.id, now, sealSuccessor(answer, secret, row.id)],
    );
    if (rows.length === 0) return false;
    await dropExpiredSeals(tx, 'refresh_tokens', ctx.clock(), ctx.refreshGraceMs);
    await insertRefreshToken(tx, row.family_id, successor);
    await recordAudit(tx, ctx.clock, {
      workspaceId: row.workspace_id,
      userId: row.user_id,
      action: 'INTEGRATION_TOKEN_REFRESHED',
      resource: 'integration_token',
      environmentLabel: row.env,
      details: { tokenId: row.family_id },
    });
    return true;
  });
  if (spent) return answer;
  // Lost a race with another refresh of the same token: answered as a reuse, read after the winner's commit.
  const again = await refreshRow(ctx, id, secret);
  if (!again) throw INVALID();
  return answerAgainOrRevoke(ctx, again, secret);
}

/** The row of one secret of the refresh token `tokenId` (spent or not), or undefined for a wrong pair. */
async function refreshRow(ctx: AppContext, tokenId: string, secret: string): Promise<RefreshRow | undefined> {
  const [row] = await ctx.db.query<RefreshRow>(
    `SELECT r.id, r.token_id, r.family_id, r.secret_hash, r.expires_at, r.used_at, r.successor_sealed, t.workspace_id,
            t.user_id, t.audience, t.env, t.scopes, t.table_ids, t.revoked_at, m.active AS member_active
       FROM gds.refresh_tokens r
       JOIN gds.integration_tokens t ON t.id = r.family_id
       LEFT JOIN gds.memberships m ON m.workspace_id = t.workspace_id AND m.user_id = t.user_id
      WHERE r.token_id = $1 AND r.secret_hash = $2`,
    [tokenId, sha256(secret)],
  );
  return row;
}

/** A spent token presented again: its successor's pair within the grace window, else the family revoked. */
async function answerAgainOrRevoke(ctx: AppContext, row: RefreshRow, secret: string): Promise<TokenBundle> {
  if (row.revoked_at)
    throw unauthorized('token_revoked', 'This token family has been revoked; issue a new one.');
  const answer =
    row.used_at !== null &&
    row.successor_sealed !== null &&
    withinGrace(row.used_at, ctx.clock(), ctx.refreshGraceMs)
      ? openSuccessor<TokenBundle>(row.successor_sealed, secret, row.id)
      : undefined;
  // Only while that successor is itself unused: a spent token never leads along the chain.
  if (answer === undefined || !(await successorUnused(ctx, answer.refreshToken)))
    throw await revokeFamilyOnReuse(ctx, row);
  if (!row.member_active) throw NOT_A_MEMBER();
  return answer;
}

/** Whether the successor a spent token would be answered with is still unspent. */
async function successorUnused(ctx: AppContext, successor: string): Promise<boolean> {
  const [tokenId, secret = ''] = successor.split('.');
  const [row] = await ctx.db.query<{ used_at: Date | null }>(
    'SELECT used_at FROM gds.refresh_tokens WHERE token_id = $1 AND secret_hash = $2',
    [tokenId, sha256(secret)],
  );
  return row !== undefined && row.used_at === null;
}

/**
 * Revokes an integration token's family at once: the token (its access tokens are refused from their next
 * call) and every refresh token of it (spent), audited as INTEGRATION_TOKEN_REVOKED with the reason. The
 * one way a family is revoked: by `gds tokens revoke` (revocation.ts) and on refresh-token reuse (below).
 */
export async function revokeIntegrationFamily(
  tx: Queryable,
  clock: Clock,
  family: { tokenId: string; workspaceId: string; actorId: string; env: string; reason: string },
): Promise<void> {
  const now = new Date(clock()).toISOString();
  await tx.query('UPDATE gds.integration_tokens SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL', [
    family.tokenId,
    now,
  ]);
  await tx.query('UPDATE gds.refresh_tokens SET used_at = coalesce(used_at, $2) WHERE family_id = $1', [
    family.tokenId,
    now,
  ]);
  await recordAudit(tx, clock, {
    workspaceId: family.workspaceId,
    userId: family.actorId,
    action: 'INTEGRATION_TOKEN_REVOKED',
    resource: 'integration_token',
    environmentLabel: family.env,
    details: { tokenId: family.tokenId, reason: family.reason },
  });
}

/** Revokes the family of a reused refresh token and returns the 401 to throw. */
async function revokeFamilyOnReuse(ctx: AppContext, row: RefreshRow): Promise<HttpError> {
  await ctx.db.transaction((tx) =>
    revokeIntegrationFamily(tx, ctx.clock, {
      tokenId: row.family_id,
      workspaceId: row.workspace_id,
      actorId: row.user_id,
      env: row.env,
      reason: 'refresh_token_reused',
    }),
  );
  return unauthorized(
    'refresh_token_reused',
    'This refresh token was already used; every token of its family is now revoked. Issue a new integration token.',
  );
}
