// Which gds process presents a profile's refresh token, and whether it still does. A refresher names itself in
// the profile's refresh record (RefreshInFlight.holder) before it presents the single-use token. A process
// that finds the record while its holder lives waits for that holder to save the new tokens, instead of
// presenting the same token again (the service would revoke the sign-in): the holder may have lost the
// profile lock while a slow keychain write outlasted the lock's stale time. A holder that has ended (killed)
// is taken over at once, as a record without a holder always was.
import { readFile } from 'node:fs/promises';
import { hostname } from 'node:os';

export interface RefreshHolder {
  pid: number;
  host: string;
  /** Linux: the boot's id and the process's start (clock ticks since boot), so a pid used again is not it. */
  boot?: string;
  start?: string;
}

/** Fingerprints of the refresh tokens this process is presenting now (and saving the answer of). */
const presentingHere = new Set<string>();

/** A process of this machine (this one by default), as a refresh record names it. */
export async function holderOf(pid = process.pid): Promise<RefreshHolder> {
  const [boot, start] = await Promise.all([bootId(), startOf(String(pid))]);
  return {
    pid,
    host: hostname(),
    ...(boot === undefined ? {} : { boot }),
    ...(start === undefined ? {} : { start }),
  };
}

/** Runs `present` (present the refresh token, save the answer) known to this process as under way. */
export async function presenting<T>(fingerprint: string, present: () => Promise<T>): Promise<T> {
  presentingHere.add(fingerprint);
  try {
    return await present();
  } finally {
    presentingHere.delete(fingerprint);
  }
}

/**
 * Whether the process a refresh record names may still be presenting the token of `fingerprint`. No holder
 * (an older gds wrote the record): no. Another machine's process cannot be asked: yes (the caller bounds the
 * wait by the record's age).
 */
export async function holderAlive(holder: unknown, fingerprint: string): Promise<boolean> {
  if (!isHolder(holder)) return false;
  if (holder.host !== hostname()) return true;
  const boot = await bootId();
  if (holder.boot !== undefined && boot !== undefined && holder.boot !== boot) return false;
  if (holder.pid === process.pid) return presentingHere.has(fingerprint);
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  if (process.platform !== 'linux') return true;
  const stat = await procStat(String(holder.pid));
  // Ended but not yet waited for by its parent (a zombie), or another process under the same pid.
  if (stat === undefined || stat.state === 'Z' || stat.state === 'X') return false;
  return holder.start === undefined || stat.start === holder.start;
}

/**
 * Whether the process a refresh record names (of this machine) is stopped: Ctrl-Z (SIGTSTP), SIGSTOP, or a
 * debugger's stop. Such a holder lives and may be resumed at any moment, to save the tokens it asked for: it is
 * not taken over, and nothing tells how long it stays stopped. Linux only (/proc); elsewhere never.
 */
export async function holderStopped(holder: unknown): Promise<boolean> {
  if (!isHolder(holder) || holder.host !== hostname() || holder.pid === process.pid) return false;
  const stat = await procStat(String(holder.pid));
  if (stat === undefined || (holder.start !== undefined && stat.start !== holder.start)) return false;
  return stat.state === 'T' || stat.state === 't';
}

function isHolder(value: unknown): value is RefreshHolder {
  if (typeof value !== 'object' || value === null) return false;
  const { pid, host, boot, start } = value as Record<string, unknown>;
  return (
    Number.isSafeInteger(pid) &&
    (pid as number) > 0 &&
    typeof host === 'string' &&
    (boot === undefined || typeof boot === 'string') &&
    (start === undefined || typeof start === 'string')
  );
}

async function bootId(): Promise<string | undefined> {
  if (process.platform !== 'linux') return undefined;
  const id = await readFile('/proc/sys/kernel/random/boot_id', 'utf8').catch(() => undefined);
  return id?.trim() || undefined;
}

async function startOf(pid: string): Promise<string | undefined> {
  return (await procStat(pid))?.start;
}

/** Linux's /proc/PID/stat: the state (field 3) and the start time (field 22). */
async function procStat(pid: string): Promise<{ state: string; start: string } | undefined> {
  if (process.platform !== 'linux') return undefined;
  const text = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  // The command name (field 2) is in parentheses and may hold spaces: count from after it.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const [state, start] = [fields[0], fields[19]];
  return state === undefined || start === undefined ? undefined : { state, start };
}
