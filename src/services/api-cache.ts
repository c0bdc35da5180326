// `gds api --cache 1h`, as `gh api --cache`: a successful GET's answer is kept and printed again without
// asking the service until it is older than the duration. Kept under $XDG_CACHE_HOME/gds/api/ (folder
// 0700, files 0600, written whole then renamed), keyed by a digest of the base URL, the whole request and
// who asks (the token sent, whatever its kind), so another user's answer is never shown. Only a 2xx
// answer of a GET is kept; anything unreadable in the cache is a miss.
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CliError, ExitCode } from '../core/errors.js';
import { cacheDir } from '../core/folders.js';
import type { ResolvedCredentials } from '../auth/credentials.js';
import type { ApiCallResult } from './api-call.js';
import { echoed } from '../core/echo.js';

const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `3600s`, `60m`, `1h`, `1h30m`, `2d` (gh's durations, and days): milliseconds. */
export function parseCacheDuration(text: string): number {
  const parts = [...text.trim().matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h|d)/g)];
  const whole = parts.map((p) => p[0]).join('');
  const ms = parts.reduce((sum, p) => sum + Number(p[1]) * (units[p[2] ?? ''] ?? 0), 0);
  if (parts.length === 0 || whole !== text.trim() || !(ms > 0)) {
    throw new CliError(`--cache takes a duration such as 3600s, 60m or 1h; got "${echoed(text)}".`, {
      exitCode: ExitCode.Usage,
      code: 'invalid_cache_duration',
      suggestion: 'Give a number with its unit: ms, s, m, h or d (1h30m works too).',
    });
  }
  return ms;
}

export function apiCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(cacheDir(env), 'api');
}

export interface CacheKeyParts {
  baseUrl: string;
  credentials: ResolvedCredentials | undefined;
  /** Everything that makes the request what it is: method, path, fields, query, headers. */
  request: unknown;
}

/** The answer of `call`, from the cache when a fresh one is there; a 2xx answer of a GET is kept. */
export async function cachedCall(
  key: CacheKeyParts,
  maxAgeMs: number,
  method: string,
  call: () => Promise<ApiCallResult>,
  options: { env?: NodeJS.ProcessEnv; now?: () => number } = {},
): Promise<ApiCallResult> {
  if (method !== 'GET') return call();
  const now = (options.now ?? Date.now)();
  const dir = apiCacheDir(options.env);
  const file = join(dir, `${digest(key)}.json`);
  const cached = read(file, now, maxAgeMs);
  if (cached !== undefined) return cached;
  const result = await call();
  if (result.exitCode === ExitCode.Ok) write(dir, file, result, now);
  return result;
}

function digest({ baseUrl, credentials, request }: CacheKeyParts): string {
  // A session's access token, not its profile's name: signing in again as someone else under the same
  // profile must miss. A refreshed session misses once, as gh does when its token changes.
  const who = credentials === undefined ? '' : `token\0${credentials.token}`;
  return createHash('sha256')
    .update(`${baseUrl}\0${who}\0${JSON.stringify(request)}`)
    .digest('hex')
    .slice(0, 40);
}

interface Entry {
  savedAt: number;
  status: number;
  headers: Array<[string, string]>;
  body: unknown;
}

function read(file: string, now: number, maxAgeMs: number): ApiCallResult | undefined {
  try {
    const stat = statSync(file);
    if (!stat.isFile()) return undefined;
    const entry = JSON.parse(readFileSync(file, 'utf8')) as Entry;
    if (typeof entry.savedAt !== 'number' || now - entry.savedAt > maxAgeMs || now < entry.savedAt) {
      return undefined;
    }
    return { status: entry.status, headers: entry.headers, body: entry.body, exitCode: ExitCode.Ok };
  } catch {
    return undefined;
  }
}

function write(dir: string, file: string, result: ApiCallResult, now: number): void {
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    chmodSync(dir, 0o700);
    const entry: Entry = { savedAt: now, status: result.status, headers: result.headers, body: result.body };
    writeFileSync(temporary, JSON.stringify(entry), { mode: 0o600 });
    renameSync(temporary, file);
  } catch {
    // A cache that cannot be written costs the next call a request, nothing more.
    rmSync(temporary, { force: true });
  }
}
