// gh's update notice. At most once a day, only when stderr is a terminal, not in CI (`CI` set) and not with
// GDS_NO_UPDATE_NOTIFIER set, gds asks the release source the package names (package.json `gds.updateUrl`: a
// latest.json `{"version": "0.2.0", "url": "https://…/v0.2.0"}`) whether a newer release exists. The request
// runs in the background while the command does its work; when the command ends, an answer that came in time is
// kept in $XDG_STATE_HOME/gds/update.json and a newer version is said on stderr. One still on its way is
// dropped (the next run asks again): the command is never held up. No source configured: nothing is fetched.
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { onOneLine } from '../core/terminal-text.js';
import { stateDir } from '../core/folders.js';

const DAY_MS = 24 * 60 * 60 * 1000;
/** The longest a check may take, whatever the command does meanwhile. */
const TIMEOUT_MS = 3000;
/** A latest.json is a few dozen bytes: anything much longer is not one. */
const MAX_BYTES = 64 * 1024;

export interface UpdateCheckContext {
  /** The running gds's version (package.json). */
  current: string;
  /** package.json `gds.updateUrl`: where latest.json is, or undefined (no check, nothing fetched). */
  source: string | undefined;
  env: NodeJS.ProcessEnv;
  stderrIsTerminal: boolean;
  /** --json: stderr carries JSON lines only, so no notice. */
  json: boolean;
  now?: number;
  /** The request for latest.json (tests pass their own); aborted when the command ends first. */
  fetchLatest?: (url: string, signal: AbortSignal) => Promise<unknown>;
}

export interface UpdateCheck {
  /** Settles when the check has ended, whatever its outcome (finish() never waits for it). */
  readonly ended: Promise<unknown>;
  /** Called when the command has ended: the notice to print, if the answer came in time and is newer. */
  finish(): Promise<string | undefined>;
}

interface UpdateState {
  checkedAt: number;
  latest?: { version: string; url?: string };
}

const set = (value: string | undefined) => value !== undefined && value !== '';

/** Whether this run may check at all: a source, a terminal on stderr, no --json, no CI, no opt-out. */
export function updateCheckApplies(context: UpdateCheckContext): boolean {
  return (
    set(context.source) &&
    context.stderrIsTerminal &&
    !context.json &&
    !set(context.env.CI) &&
    !set(context.env.GDS_NO_UPDATE_NOTIFIER)
  );
}

/** $XDG_STATE_HOME/gds/update.json (default ~/.local/state/gds/update.json): when gds last asked, and the answer. */
export function updateStateFile(env: NodeJS.ProcessEnv): string {
  return join(stateDir(env), 'update.json');
}

/** Starts the check in the background when it applies and gds has not asked in the last 24 hours. */
export function startUpdateCheck(context: UpdateCheckContext): UpdateCheck | undefined {
  if (!updateCheckApplies(context) || context.source === undefined) return undefined;
  const source = context.source;
  const now = context.now ?? Date.now();
  const file = updateStateFile(context.env);
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), TIMEOUT_MS);
  timer.unref();
  let settled = false;
  const work = (async (): Promise<string | undefined> => {
    const state = await readState(file);
    if (state !== undefined && now - state.checkedAt >= 0 && now - state.checkedAt < DAY_MS) return undefined;
    controller.signal.throwIfAborted();
    let latest: UpdateState['latest'];
    try {
      latest = parseLatest(await (context.fetchLatest ?? fetchJson)(source, controller.signal));
    } catch (error) {
      // Cut short because the command ended: asked again next time. Any other failure counts as today's check.
      if (controller.signal.aborted) throw error;
    }
    await writeState(file, latest === undefined ? { checkedAt: now } : { checkedAt: now, latest });
    return latest !== undefined && newer(latest.version, context.current)
      ? notice(context.current, latest)
      : undefined;
  })()
    .catch(() => undefined)
    .finally(() => {
      settled = true;
      clearTimeout(timer);
    });
  return {
    ended: work,
    async finish() {
      if (!settled) {
        controller.abort();
        return undefined;
      }
      return work;
    },
  };
}

function notice(current: string, latest: { version: string; url?: string }): string {
  const lines = [`A new release of gds is available: ${current} → ${latest.version}`];
  if (latest.url !== undefined) lines.push(latest.url);
  lines.push('(GDS_NO_UPDATE_NOTIFIER=1 turns this notice off)');
  return `\n${lines.join('\n')}\n`;
}

function parseLatest(body: unknown): UpdateState['latest'] {
  const { version, url } = (body ?? {}) as { version?: unknown; url?: unknown };
  if (typeof version !== 'string' || parseVersion(version) === undefined) return undefined;
  // On one line: the notice is written as it is (main.ts), and a line break in the link would start a line of its own.
  const link = typeof url === 'string' && /^https?:\/\//.test(url) ? onOneLine(url) : undefined;
  return link === undefined ? { version } : { version, url: link };
}

function parseVersion(text: string): { core: number[]; pre: boolean } | undefined {
  const match = /^v?(\d+)\.(\d+)\.(\d+)(-[0-9A-Za-z.-]+)?$/.exec(text);
  if (match === null) return undefined;
  return { core: [match[1], match[2], match[3]].map(Number), pre: match[4] !== undefined };
}

/** Whether `latest` is a newer release than `current`; a pre-release is never announced. */
export function newer(latest: string, current: string): boolean {
  const a = parseVersion(latest);
  const b = parseVersion(current);
  if (a === undefined || b === undefined || a.pre) return false;
  for (let i = 0; i < 3; i++) {
    const difference = (a.core[i] ?? 0) - (b.core[i] ?? 0);
    if (difference !== 0) return difference > 0;
  }
  return b.pre;
}

async function readState(file: string): Promise<UpdateState | undefined> {
  try {
    const state = JSON.parse(await readFile(file, 'utf8')) as UpdateState;
    return typeof state.checkedAt === 'number' ? state : undefined;
  } catch {
    return undefined;
  }
}

async function writeState(file: string, state: UpdateState): Promise<void> {
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  const temporary = `${file}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(state)}\n`, { mode: 0o600 });
  await rename(temporary, file);
}

/** GET of latest.json with node:http(s): at most MAX_BYTES, a 200, JSON. */
async function fetchJson(url: string, signal: AbortSignal): Promise<unknown> {
  const { get } = process.getBuiltinModule(url.startsWith('https:') ? 'node:https' : 'node:http');
  return new Promise((resolve, reject) => {
    const request = get(url, { signal, headers: { accept: 'application/json' } }, (response) => {
      if (response.statusCode !== 200) {
        response.resume();
        reject(new Error(`HTTP ${response.statusCode}`));
        return;
      }
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        body += chunk;
        if (body.length > MAX_BYTES) request.destroy(new Error('latest.json too long'));
      });
      response.on('end', () => {
        try {
          resolve(JSON.parse(body));
        } catch (error) {
          reject(error as Error);
        }
      });
      response.on('error', reject);
    });
    request.on('error', reject);
  });
}
