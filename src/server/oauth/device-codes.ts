// RFC 8628 device codes: issued to the CLI, approved or denied by a person on the verification
// page, then exchanged once for tokens. Only the device code's hash is stored.
import { randomInt } from 'node:crypto';
import { recordAudit } from '../audit.js';
import type { AppContext } from '../context.js';
import type { Queryable } from '../db/handle.js';
import { HttpError } from '../errors.js';
import { newSecret, sha256 } from '../ids.js';
import { OAuthError } from './errors.js';
import type { DeviceFlowSettings } from './settings.js';
import { paths } from './settings.js';

/** RFC 8628 §6.1: consonants only (no vowels, so no words; no 0/O, 1/I confusion). */
const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';

export interface DeviceAuthorization {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

/**
 * A new pending device code. The codes waiting for a person are bounded (`maxPendingCodes`, from every
 * client together): past it, 429 `too_many_pending_sign_ins` with `Retry-After` until the oldest one
 * expires. Each call first deletes the codes expired for longer than a code's lifetime (until then a
 * poll of one still hears `expired_token`), so the table holds at most the codes of two lifetimes.
 */
export async function createDeviceCode(
  ctx: AppContext,
  settings: DeviceFlowSettings,
  clientId: string,
  scope: string,
): Promise<DeviceAuthorization> {
  const deviceCode = newSecret();
  const userCode = newUserCode();
  const now = ctx.clock();
  const lifetimeMs = settings.expiresInSeconds * 1000;
  await ctx.db.transaction(async (tx) => {
    // One creation at a time (every server process on the database), so the count below stays true.
    await tx.query(`SELECT pg_advisory_xact_lock(hashtextextended('gds:device_codes', 0))`);
    await tx.query('DELETE FROM gds.device_codes WHERE expires_at <= $1', [
      new Date(now - lifetimeMs).toISOString(),
    ]);
    const [waiting] = await tx.query<{ pending: number; first_expiry: Date | null }>(
      `SELECT count(*)::int AS pending, min(expires_at) AS first_expiry FROM gds.device_codes
        WHERE status = 'pending' AND expires_at > $1`,
      [new Date(now).toISOString()],
    );
    if (waiting && waiting.pending >= settings.maxPendingCodes) {
      const firstExpiry = waiting.first_expiry === null ? now : new Date(waiting.first_expiry).getTime();
      const retryAfter = Math.max(1, Math.ceil((firstExpiry - now) / 1000));
      throw new HttpError(
        429,
        'too_many_pending_sign_ins',
        `${settings.maxPendingCodes} device sign-ins are already waiting for approval; retry after ${retryAfter} seconds.`,
        { limit: settings.maxPendingCodes },
        { 'retry-after': String(retryAfter) },
      );
    }
    await tx.query(
      `INSERT INTO gds.device_codes (device_code_hash, user_code, client_id, scope, status, interval_seconds,
         expires_at, created_at) VALUES ($1, $2, $3, $4, 'pending', $5, $6, $7)`,
      [
        sha256(deviceCode),
        userCode,
        clientId,
        scope,
        settings.intervalSeconds,
        new Date(now + lifetimeMs).toISOString(),
        new Date(now).toISOString(),
      ],
    );
  });
  const verificationUri = `${ctx.publicOrigin()}${paths.verification}`;
  return {
    device_code: deviceCode,
    user_code: userCode,
    verification_uri: verificationUri,
    verification_uri_complete: `${verificationUri}?user_code=${encodeURIComponent(userCode)}`,
    expires_in: settings.expiresInSeconds,
    interval: settings.intervalSeconds,
  };
}

function newUserCode(): string {
  const letters = Array.from({ length: 8 }, () => USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)]);
  return `${letters.slice(0, 4).join('')}-${letters.slice(4).join('')}`;
}

/** What a person typed, as stored: upper case, dash in the middle, anything else dropped. */
export function normalizeUserCode(typed: string): string {
  const letters = typed.toUpperCase().replace(/[^A-Z]/g, '');
  return letters.length === 8 ? `${letters.slice(0, 4)}-${letters.slice(4)}` : letters;
}

export type Decision = 'approve' | 'deny';

export interface DecisionResult {
  ok: boolean;
  /** What the page tells the person. */
  message: string;
}

/** The verification page's answer: a pending, unexpired code and a seeded user's e-mail. */
export async function decideDeviceCode(
  ctx: AppContext,
  typedCode: string,
  email: string,
  decision: Decision,
): Promise<DecisionResult> {
  const userCode = normalizeUserCode(typedCode);
  return ctx.db.transaction(async (tx) => {
    const [code] = await tx.query<{ status: string; expires_at: Date; client_id: string }>(
      'SELECT status, expires_at, client_id FROM gds.device_codes WHERE user_code = $1 FOR UPDATE',
      [userCode],
    );
    if (!code) return { ok: false, message: `No sign-in is waiting for the code ${userCode}.` };
    if (code.status !== 'pending') return { ok: false, message: `The code ${userCode} was already used.` };
    if (new Date(code.expires_at).getTime() <= ctx.clock()) {
      return { ok: false, message: `The code ${userCode} has expired; start the sign-in again.` };
    }
    const member = await memberByEmail(tx, email);
    if (!member) return { ok: false, message: `No active member has the e-mail ${email}.` };
    const status = decision === 'approve' ? 'approved' : 'denied';
    await tx.query(
      'UPDATE gds.device_codes SET status = $2, user_id = $3, workspace_id = $4 WHERE user_code = $1',
      [userCode, status, member.user_id, member.workspace_id],
    );
    await recordAudit(tx, ctx.clock, {
      workspaceId: member.workspace_id,
      userId: member.user_id,
      action: decision === 'approve' ? 'DEVICE_SIGN_IN_APPROVED' : 'DEVICE_SIGN_IN_DENIED',
      resource: 'device_code',
      details: { userCode, clientId: code.client_id },
    });
    return decision === 'approve'
      ? { ok: true, message: 'Signed in. You can close this page and return to the terminal.' }
      : { ok: true, message: 'Sign-in denied. The terminal that asked will stop waiting.' };
  });
}

/** The user's first active membership (by workspace age): a device sign-in is to one workspace. */
export async function memberByEmail(q: Queryable, email: string) {
  const [member] = await q.query<{ user_id: string; workspace_id: string }>(
    `SELECT m.user_id, m.workspace_id FROM gds.users u
       JOIN gds.memberships m ON m.user_id = u.id AND m.active
       JOIN gds.workspaces w ON w.id = m.workspace_id
      WHERE lower(u.email) = lower($1) ORDER BY w.created_at, w.id LIMIT 1`,
    [email.trim()],
  );
  return member;
}

export interface ApprovedDevice {
  userId: string;
  workspaceId: string;
  clientId: string;
  scope: string;
}

/** Polls below this much of the interval are `slow_down`; the slack absorbs timer jitter. */
const POLL_SLACK_MS = 100;

/**
 * One poll of the token endpoint (RFC 8628 §3.5): the approval, consumed at once, or the error the
 * client must act on, returned (not thrown) so that the poll's record commits. Every poll is recorded,
 * so a client polling too fast gets `slow_down` and an interval 5 s longer from then on.
 */
export async function redeemDeviceCode(
  tx: Queryable,
  ctx: AppContext,
  deviceCode: string,
  clientId: string,
): Promise<ApprovedDevice | OAuthError> {
  const hash = sha256(deviceCode);
  const [code] = await tx.query<{
    status: string;
    client_id: string;
    user_id: string | null;
    workspace_id: string | null;
    scope: string;
    interval_seconds: number;
    last_polled_at: Date | null;
    expires_at: Date;
  }>(
    `SELECT status, client_id, user_id, workspace_id, scope, interval_seconds, last_polled_at, expires_at
       FROM gds.device_codes WHERE device_code_hash = $1 FOR UPDATE`,
    [hash],
  );
  if (!code || code.client_id !== clientId) {
    return new OAuthError('invalid_grant', 'The device code is unknown to this server.');
  }
  if (code.status === 'consumed') return new OAuthError('invalid_grant', 'The device code was already used.');
  const now = ctx.clock();
  if (new Date(code.expires_at).getTime() <= now) {
    return new OAuthError('expired_token', 'The device code has expired; start the sign-in again.');
  }
  if (code.status === 'denied') return new OAuthError('access_denied', 'The sign-in was denied.');
  const last = code.last_polled_at === null ? null : new Date(code.last_polled_at).getTime();
  const tooSoon = last !== null && now - last < code.interval_seconds * 1000 - POLL_SLACK_MS;
  await tx.query(
    `UPDATE gds.device_codes SET last_polled_at = $2, interval_seconds = interval_seconds + $3,
       status = CASE WHEN status = 'approved' AND NOT $4 THEN 'consumed' ELSE status END
     WHERE device_code_hash = $1`,
    [hash, new Date(now).toISOString(), tooSoon ? 5 : 0, tooSoon],
  );
  if (tooSoon) {
    return new OAuthError(
      'slow_down',
      `Polled sooner than the interval; wait ${code.interval_seconds + 5} s between polls.`,
    );
  }
  if (code.status !== 'approved' || code.user_id === null || code.workspace_id === null) {
    return new OAuthError('authorization_pending', 'The person has not approved or denied the sign-in yet.');
  }
  return {
    userId: code.user_id,
    workspaceId: code.workspace_id,
    clientId: code.client_id,
    scope: code.scope,
  };
}
