// Who is calling: verifies the bearer credential and resolves it against the database (membership
// still active, integration token not revoked). Guards below say which callers an endpoint takes.
import type { Audience, Role, WorkspaceScope } from '../../core/scopes.js';
import { isRole } from '../../core/scopes.js';
import type { Clock } from '../clock.js';
import { systemClock } from '../clock.js';
import type { Db } from '../db/handle.js';
import { forbidden, unauthorized } from '../errors.js';
import { sha256 } from '../ids.js';
import type { IntegrationClaims, TokenSigner } from './tokens.js';
import { CLIENT_TOKEN_PREFIX } from '../../core/token-hint.js';

/** A person: a signed-in session (JWT, audience `session`) or a static CLI token (`cli_…`). */
export interface SessionCaller {
  kind: 'session';
  via: 'jwt' | 'cli_token';
  userId: string;
  workspaceId: string;
  role: Role;
  envScope: string[];
  /** A session JWT's sign-in (refresh-token family), when it has one. */
  sessionId?: string;
  /** A session JWT's own id (`jti`), or a CLI token's row id. */
  tokenId?: string;
}

/** An integration token (DATA-API or MANAGEMENT audience). */
export interface IntegrationCaller {
  kind: 'integration';
  audience: Audience;
  tokenId: string;
  userId: string;
  workspaceId: string;
  scopes: string[];
  env: string;
  /** DATA-API: the table id each granted slug was granted on. */
  tableIds: Record<string, string>;
}

export type Caller = SessionCaller | IntegrationCaller;

export const CLI_TOKEN_PREFIX = 'cli_';
/** The id prefixes (`newId`) of integration tokens and CLI tokens. */
export const INTEGRATION_TOKEN_ID_PREFIX = 'itk';
export const CLI_TOKEN_ID_PREFIX = 'clt';
export { CLIENT_TOKEN_PREFIX };

interface MemberRow {
  role: string;
  env_scope: string[];
}

export class Authenticator {
  constructor(
    private readonly db: Db,
    private readonly signer: TokenSigner,
    private readonly clock: Clock = systemClock,
  ) {}

  /** The caller behind an Authorization header value; 401 when there is none or it is not valid. */
  async identify(authorization: string | undefined): Promise<Caller> {
    const match = /^Bearer +(\S+) *$/i.exec(authorization ?? '');
    const credential = match?.[1];
    if (!credential) {
      throw unauthorized('missing_token', 'Send an access token as "Authorization: Bearer <token>".');
    }
    if (credential.startsWith(CLIENT_TOKEN_PREFIX)) {
      throw unauthorized(
        'client_token_not_accepted',
        'Client tokens (tf_…) only label an integration; send its access token (tokens.accessToken) instead.',
      );
    }
    if (credential.startsWith(CLI_TOKEN_PREFIX)) return this.cliTokenCaller(credential);
    const claims = await this.signer.verify(credential);
    if (claims.audience === 'session') {
      return this.session('jwt', claims.userId, claims.workspaceId, claims);
    }
    if (!(await this.live(claims)))
      throw unauthorized('token_revoked', 'This token has been revoked; issue a new one.');
    if (claims.tokenId.startsWith(`${INTEGRATION_TOKEN_ID_PREFIX}_`))
      await this.touch('integration_tokens', claims.tokenId);
    else if (claims.tokenId.startsWith(`${CLI_TOKEN_ID_PREFIX}_`))
      await this.touch('cli_tokens', claims.tokenId);
    return { kind: 'integration', ...claims };
  }

  /**
   * Whether what an integration access token hangs on still stands, its issuer an active member: the
   * integration token (`itk_`), or, for a short-lived token, the CLI token (`clt_`) or the sign-in (refresh
   * family, else the session token's id) it was drawn on (integration-tokens.ts).
   */
  private async live(claims: IntegrationClaims): Promise<boolean> {
    const id = claims.tokenId;
    const parent = id.startsWith(`${INTEGRATION_TOKEN_ID_PREFIX}_`)
      ? `SELECT revoked_at IS NULL FROM gds.integration_tokens WHERE id = $1 AND workspace_id = $2 AND user_id = $3`
      : id.startsWith(`${CLI_TOKEN_ID_PREFIX}_`)
        ? `SELECT revoked_at IS NULL FROM gds.cli_tokens WHERE id = $1 AND workspace_id = $2 AND user_id = $3`
        : `SELECT NOT EXISTS (SELECT 1 FROM gds.session_refresh_tokens s WHERE s.family_id = $1 AND s.revoked_at IS NOT NULL)
              AND NOT EXISTS (SELECT 1 FROM gds.revoked_access_tokens r WHERE r.jti = $1)`;
    const [row] = await this.db.query<{ live: boolean | null }>(
      `SELECT (${parent}) AS live FROM gds.memberships m WHERE m.workspace_id = $2 AND m.user_id = $3 AND m.active`,
      [id, claims.workspaceId, claims.userId],
    );
    return row?.live === true;
  }

  /** When each token was last written as used: `last_used_at` is written at most once a minute per token. */
  private readonly touched = new Map<string, number>();

  private async touch(table: 'integration_tokens' | 'cli_tokens', id: string): Promise<void> {
    // The server's clock, which --clock-offset-file moves, as every other time the server writes.
    const now = this.clock();
    const key = `${table}:${id}`;
    const last = this.touched.get(key);
    if (last !== undefined && Math.abs(now - last) < 60_000) return;
    if (this.touched.size > 10_000) this.touched.clear();
    this.touched.set(key, now);
    await this.db.query(`UPDATE gds.${table} SET last_used_at = $2 WHERE id = $1`, [id, new Date(now)]);
  }

  private async cliTokenCaller(token: string): Promise<SessionCaller> {
    const [row] = await this.db.query<{ id: string; user_id: string; workspace_id: string }>(
      'SELECT id, user_id, workspace_id FROM gds.cli_tokens WHERE token_hash = $1 AND revoked_at IS NULL',
      [sha256(token)],
    );
    if (!row) throw unauthorized('invalid_token', 'This CLI token is unknown or revoked; create a new one.');
    const caller = await this.session('cli_token', row.user_id, row.workspace_id);
    await this.touch('cli_tokens', row.id);
    return { ...caller, tokenId: row.id };
  }

  /**
   * A person's caller. A session JWT is checked on every call against its sign-in (refresh-token family,
   * revoked on reuse or by `gds auth revoke`) and its own id (revoked by itself).
   */
  private async session(
    via: SessionCaller['via'],
    userId: string,
    workspaceId: string,
    token: { sessionId?: string; tokenId?: string } = {},
  ): Promise<SessionCaller> {
    const [member] = await this.db.query<MemberRow & { revoked: boolean }>(
      `SELECT role, env_scope,
              (EXISTS (SELECT 1 FROM gds.session_refresh_tokens s WHERE s.family_id = $3 AND s.revoked_at IS NOT NULL)
               OR EXISTS (SELECT 1 FROM gds.revoked_access_tokens r WHERE r.jti = $4)) AS revoked
         FROM gds.memberships WHERE user_id = $1 AND workspace_id = $2 AND active`,
      [userId, workspaceId, token.sessionId ?? null, token.tokenId ?? null],
    );
    if (!member || !isRole(member.role)) {
      throw unauthorized('not_a_member', 'This account is not an active member of the workspace.');
    }
    if (member.revoked) {
      throw unauthorized('token_revoked', 'This sign-in has been revoked; sign in again (gds auth login).');
    }
    return {
      kind: 'session',
      via,
      userId,
      workspaceId,
      role: member.role,
      envScope: member.env_scope,
      ...(token.sessionId !== undefined ? { sessionId: token.sessionId } : {}),
      ...(token.tokenId !== undefined ? { tokenId: token.tokenId } : {}),
    };
  }
}

function describe(caller: Caller): string {
  return caller.kind === 'session' ? 'a personal session' : `a ${caller.audience} token`;
}

/** Table endpoints: DATA-API tokens only (machines; a MANAGEMENT token cannot touch rows). */
export function requireDataApi(caller: Caller): IntegrationCaller {
  if (caller.kind === 'integration' && caller.audience === 'DATA-API') return caller;
  throw unauthorized('wrong_audience', `Table endpoints take a DATA-API token; this is ${describe(caller)}.`);
}

/** Endpoints a person calls (issuing tokens, …): a session JWT or a static CLI token. */
export function requireSession(caller: Caller): SessionCaller {
  if (caller.kind === 'session') return caller;
  throw unauthorized(
    'wrong_audience',
    `This endpoint takes a personal sign-in; this is ${describe(caller)}.`,
  );
}

/**
 * Management endpoints: a MANAGEMENT token holding `scope`, or (when `sessionAllowed`) any active
 * member's session. A DATA-API token is refused with 401 before its scopes are looked at.
 */
export function requireManagement(caller: Caller, scope: WorkspaceScope, sessionAllowed: boolean): Caller {
  if (caller.kind === 'session') {
    if (sessionAllowed) return caller;
  } else if (caller.audience === 'MANAGEMENT') {
    if (caller.scopes.includes(scope)) return caller;
    throw forbidden(
      'missing_scope',
      `This token lacks the scope ${scope}; issue a MANAGEMENT token with it.`,
      {
        requiredScope: scope,
      },
    );
  }
  throw unauthorized(
    'wrong_audience',
    `This endpoint takes a MANAGEMENT token; this is ${describe(caller)}.`,
  );
}
