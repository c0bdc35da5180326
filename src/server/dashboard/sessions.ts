// Dashboard sign-ins: a random session id in an HttpOnly cookie, and on the server only its hash with
// the person and workspace it stands for, in the database (gds.dashboard_sessions): every server process on
// one PostgreSQL knows every sign-in, and a sign-in outlives a restart of a server with a kept database.
import type { Clock } from '../clock.js';
import type { Queryable } from '../db/handle.js';
import { createHmac } from 'node:crypto';
import { newSecret, sha256 } from '../ids.js';

export const SESSION_COOKIE = 'gds_dashboard';
/** How long a dashboard sign-in lasts. */
export const SESSION_TTL_MS = 8 * 60 * 60 * 1000;

export interface DashboardSession {
  userId: string;
  workspaceId: string;
}

export class DashboardSessions {
  constructor(
    private readonly db: Queryable,
    private readonly clock: Clock,
  ) {}

  /** A new session; the returned id goes into the cookie and is never stored. */
  async create(session: DashboardSession): Promise<string> {
    const now = this.clock();
    await this.db.query('DELETE FROM gds.dashboard_sessions WHERE expires_at <= $1', [
      new Date(now).toISOString(),
    ]);
    const id = newSecret();
    await this.db.query(
      `INSERT INTO gds.dashboard_sessions (id_hash, user_id, workspace_id, created_at, expires_at)
       VALUES ($1, $2, $3, $4, $5)`,
      [
        sha256(id),
        session.userId,
        session.workspaceId,
        new Date(now).toISOString(),
        new Date(now + SESSION_TTL_MS).toISOString(),
      ],
    );
    return id;
  }

  async find(id: string): Promise<DashboardSession | null> {
    const [found] = await this.db.query<{ user_id: string; workspace_id: string }>(
      'SELECT user_id, workspace_id FROM gds.dashboard_sessions WHERE id_hash = $1 AND expires_at > $2',
      [sha256(id), new Date(this.clock()).toISOString()],
    );
    return found ? { userId: found.user_id, workspaceId: found.workspace_id } : null;
  }

  async destroy(id: string): Promise<void> {
    await this.db.query('DELETE FROM gds.dashboard_sessions WHERE id_hash = $1', [sha256(id)]);
  }
}

/** The value of one cookie of a Cookie header, or undefined. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}

/** Set-Cookie for a session id (or, with null, one that clears it). */
export function sessionCookie(id: string | null, secure: boolean): string {
  const attributes = ['Path=/dashboard', 'HttpOnly', 'SameSite=Strict', ...(secure ? ['Secure'] : [])];
  const lifetime = id === null ? 'Max-Age=0' : `Max-Age=${SESSION_TTL_MS / 1000}`;
  return [`${SESSION_COOKIE}=${id ?? ''}`, lifetime, ...attributes].join('; ');
}

/**
 * The CSRF token of a sign-in's forms: derived from the session id (secret, HttpOnly), so a page of another
 * site can neither read nor compute it, and it ends with the sign-in.
 */
export function csrfToken(sessionId: string): string {
  return createHmac('sha256', sessionId).update('gds dashboard form').digest('base64url');
}
