// Dashboard sign-ins: a random session id in an HttpOnly cookie, and on the server only its hash with
// the person and workspace it stands for. Kept in the server's memory: a restart signs everyone out.
import type { Clock } from '../clock.js';
import { newSecret, sha256 } from '../ids.js';

export const SESSION_COOKIE = 'gds_dashboard';
/** How long a dashboard sign-in lasts. */
export const SESSION_TTL_MS = 8 * 60 * 60 * 1000;

export interface DashboardSession {
  userId: string;
  workspaceId: string;
}

export class DashboardSessions {
  private readonly sessions = new Map<string, DashboardSession & { expiresAt: number }>();

  constructor(private readonly clock: Clock) {}

  /** A new session; the returned id goes into the cookie and is never stored. */
  create(session: DashboardSession): string {
    this.dropExpired();
    const id = newSecret();
    this.sessions.set(sha256(id), { ...session, expiresAt: this.clock() + SESSION_TTL_MS });
    return id;
  }

  find(id: string): DashboardSession | null {
    const key = sha256(id);
    const found = this.sessions.get(key);
    if (!found) return null;
    if (found.expiresAt <= this.clock()) {
      this.sessions.delete(key);
      return null;
    }
    return { userId: found.userId, workspaceId: found.workspaceId };
  }

  destroy(id: string): void {
    this.sessions.delete(sha256(id));
  }

  private dropExpired(): void {
    const now = this.clock();
    for (const [key, session] of this.sessions) if (session.expiresAt <= now) this.sessions.delete(key);
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
