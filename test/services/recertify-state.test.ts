// The resume state of a `gds recertify` run (src/services/recertify-state.ts), read and written directly: two
// saves of one run at once, a temporary file removed by another run before its rename, and the files an
// earlier gds left in the folder.
import type * as FsPromises from 'node:fs/promises';
import {
  lutimes,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rm,
  rmdir,
  stat,
  symlink,
  utimes,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { RecertifyResponse } from '../../src/contract/types.js';
import type { RunStateWarning } from '../../src/services/recertify-state.js';
import { openRunState } from '../../src/services/recertify-state.js';

// Every rename of a state's temporary file goes through `renaming` first (when set), and every temporary file
// written goes through `written` once written (when set): what another process does between the write and the
// rename. Every read of a state goes through `reading` first (when set).
const moment = vi.hoisted(() => ({
  renaming: undefined as ((from: string) => Promise<void>) | undefined,
  written: undefined as ((temp: string) => Promise<void>) | undefined,
  reading: undefined as ((path: string) => Promise<void>) | undefined,
}));
vi.mock('node:fs/promises', async (actual) => {
  const fs = await actual<typeof FsPromises>();
  return {
    ...fs,
    rename: async (from: string, to: string) => {
      if (from.endsWith('.tmp')) await moment.renaming?.(from);
      return fs.rename(from, to);
    },
    writeFile: async (...args: Parameters<typeof fs.writeFile>) => {
      await fs.writeFile(...args);
      if (typeof args[0] === 'string' && args[0].endsWith('.tmp')) await moment.written?.(args[0]);
    },
    readFile: async (...args: Parameters<typeof fs.readFile>) => {
      if (typeof args[0] === 'string' && args[0].endsWith('.json')) await moment.reading?.(args[0]);
      return fs.readFile(...args);
    },
  };
});
// The lock's own lines (GDS_DEBUG): when gds noticed it lost a lock.
const debugLines = vi.hoisted(() => ({ seen: (_line: string): void => undefined }));
vi.mock('../../src/auth/debug-log.js', () => ({ debugLog: (line: string) => debugLines.seen(line) }));
afterEach(() => {
  moment.renaming = undefined;
  moment.written = undefined;
  moment.reading = undefined;
  debugLines.seen = () => undefined;
});

/**
 * The next read of a state made under its lock first loses that lock for real: its folder is removed (as by a
 * process that took a stale lock over), and the read goes on once proper-lockfile noticed (its next update).
 */
function loseLockAtRead(): { lost: boolean } {
  const seen = { lost: false };
  moment.reading = async (path) => {
    if (
      seen.lost ||
      !(await stat(`${path}.lock`).then(
        () => true,
        () => false,
      ))
    )
      return;
    seen.lost = true;
    const noticed = new Promise<void>((resolve) => {
      debugLines.seen = (line) => {
        if (line.startsWith(`lock ${path}.lock: lost`)) resolve();
      };
    });
    await rm(`${path}.lock`, { recursive: true });
    await noticed;
  };
  return seen;
}

/**
 * Once the next temporary file is written (before its rename), its lock is lost to another process, and
 * proper-lockfile has not noticed yet: the lock folder is removed and made again (what a process that found
 * it stale does), and that process writes `theirs` over the target. The target.
 */
function takeLockOverAfterWrite(theirs: string): { target?: string } {
  const seen: { target?: string } = {};
  moment.written = async (temp) => {
    if (seen.target !== undefined) return;
    seen.target = temp.replace(/\.[0-9a-f]{8}\.tmp$/, '');
    await rmdir(`${seen.target}.lock`);
    await mkdir(`${seen.target}.lock`);
    // Its own mtime: a real takeover comes 5 s or more after this holder's last update.
    const later = new Date(Date.now() + 5_000);
    await utimes(`${seen.target}.lock`, later, later);
    await writeFile(seen.target, theirs);
  };
  return seen;
}

/** The next `count` temporary files are removed before their rename; the list of those removed. */
function removeTemps(count: number): string[] {
  const removed: string[] = [];
  moment.renaming = async (temp) => {
    if (removed.length >= count) return;
    removed.push(temp);
    await rm(temp);
  };
  return removed;
}

const KEYS = ['gds-recertify-a', 'gds-recertify-b', 'gds-recertify-c'];
const answer = (submitted: number): RecertifyResponse => ({
  environmentLabel: 'dev',
  submitted,
  governed: 0,
  outcomes: [],
});

async function stateHome() {
  const home = await mkdtemp(join(tmpdir(), 'gds-recertify-state-'));
  return { env: { XDG_STATE_HOME: home }, folder: join(home, 'gds', 'recertify') };
}

const open = (env: NodeJS.ProcessEnv, warnings: RunStateWarning[] = []) =>
  openRunState({ service: 'https://gds.example', token: 'opaque-token', env }, KEYS, (w) => warnings.push(w));

/** A run whose state keeps part 0: the state, the name of its file, and the warnings it gives. */
async function savedOnce() {
  const { env, folder } = await stateHome();
  const warnings: RunStateWarning[] = [];
  const state = await open(env, warnings);
  await state.save(new Map([[0, answer(1)]]));
  const [name] = await readdir(folder);
  return { env, folder, name: name as string, warnings, state };
}

describe('the resume state of a recertify run', () => {
  it('two saves of the same run at once keep both parts', async () => {
    // Each round: two processes of one run, each with the state it read at its start (none), save at once.
    for (let round = 0; round < 10; round += 1) {
      const { env, folder } = await stateHome();
      const warnings: RunStateWarning[] = [];
      const [a, b] = await Promise.all([open(env, warnings), open(env, warnings)]);
      await Promise.all([a.save(new Map([[0, answer(1)]])), b.save(new Map([[1, answer(2)]]))]);
      expect(warnings).toEqual([]);
      const [name] = (await readdir(folder)).filter((n) => n.endsWith('.json'));
      const state = JSON.parse(await readFile(join(folder, name as string), 'utf8')) as {
        answered: Record<string, RecertifyResponse>;
      };
      expect(Object.keys(state.answered).sort()).toEqual([KEYS[0], KEYS[1]]);
      expect((await open(env)).answered.map(([i]) => i).sort()).toEqual([0, 1]);
    }
  });

  it("a temporary file removed before its rename (another run's done()) is written again, once", async () => {
    const { env, folder } = await stateHome();
    const warnings: RunStateWarning[] = [];
    const state = await open(env, warnings);
    const removed = removeTemps(1);
    await state.save(new Map([[2, answer(3)]]));
    expect(removed).toHaveLength(1);
    expect(warnings).toEqual([]);
    expect((await open(env)).answered).toEqual([[2, answer(3)]]);
    expect((await readdir(folder)).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });

  it('a temporary file removed again is not retried further: the state is not kept, said once', async () => {
    const { env, folder } = await stateHome();
    const warnings: RunStateWarning[] = [];
    const state = await open(env, warnings);
    const removed = removeTemps(Infinity);
    await state.save(new Map([[0, answer(1)]]));
    await state.save(new Map([[1, answer(2)]]));
    // Two attempts a save, and each save said to fail, but only once, and never thrown.
    expect(removed).toHaveLength(4);
    expect(warnings).toEqual([expect.objectContaining({ code: 'state_not_kept' })]);
    expect(await readdir(folder)).toEqual([]);
  });

  it('a lock lost before the write: the state is left whole, and the user told why and what to do', async () => {
    const { env, folder, name, warnings, state } = await savedOnce();
    const before = await readFile(join(folder, name), 'utf8');

    const lost = loseLockAtRead();
    await state.save(new Map([[1, answer(2)]]));
    expect(lost.lost).toBe(true);
    // The part answered before is still there, whole; no temporary copy left.
    expect(await readFile(join(folder, name), 'utf8')).toBe(before);
    expect((await readdir(folder)).filter((n) => n.endsWith('.tmp'))).toEqual([]);
    expect((await open(env)).answered).toEqual([[0, answer(1)]]);
    expect(warnings).toHaveLength(1);
    const [warning] = warnings as [RunStateWarning];
    expect(warning.code).toBe('state_not_kept');
    // What happened: the lock, and that the file was left as it was (not half written) ...
    expect(warning.message).toContain(`${join(folder, name)}.lock`);
    expect(warning.message).toMatch(/lost the lock/i);
    expect(warning.message).toMatch(/left as it was/);
    // ... and what a run started again does: it sends again the parts answered since, none applied twice.
    expect(warning.message).toMatch(/started again sends again the parts answered since/);
    expect(warning.message).not.toMatch(/Run the command again|Nothing was written/);

    // The next save takes the lock again and keeps both parts.
    await state.save(new Map([[1, answer(2)]]));
    expect((await open(env)).answered).toEqual([
      [0, answer(1)],
      [1, answer(2)],
    ]);
  });

  it('a lock taken over after the write, before the rename: the new holder keeps its state, said once', async () => {
    const { env, folder, name, warnings, state } = await savedOnce();
    const path = join(folder, name);
    // The other run's state: the part this run answered before, and one of its own.
    const theirs = JSON.stringify({
      ...JSON.parse(await readFile(path, 'utf8')),
      answered: { [KEYS[0] as string]: answer(1), [KEYS[2] as string]: answer(3) },
    });

    const takenOver = takeLockOverAfterWrite(theirs);
    await state.save(new Map([[1, answer(2)]]));
    expect(takenOver.target).toBe(path);
    // The new holder's state, byte for byte; no temporary copy left; its lock left to it.
    expect(await readFile(path, 'utf8')).toBe(theirs);
    expect((await readdir(folder)).filter((n) => n.endsWith('.tmp'))).toEqual([]);
    expect((await stat(`${path}.lock`)).isDirectory()).toBe(true);
    expect(warnings).toEqual([expect.objectContaining({ code: 'state_not_kept' })]);
    const [warning] = warnings as [RunStateWarning];
    expect(warning.message).toContain(`${path}.lock`);
    expect(warning.message).toMatch(/lost the lock/i);

    // The other run lets go; the next save keeps the three parts.
    await rmdir(`${path}.lock`);
    await state.save(new Map([[1, answer(2)]]));
    expect((await open(env)).answered).toEqual([
      [0, answer(1)],
      [1, answer(2)],
      [2, answer(3)],
    ]);
    expect(warnings).toHaveLength(1);
  });

  describe('the files an earlier gds or an unfinished run left in the folder', () => {
    const DAY = 24 * 60 * 60 * 1000;
    const hex = (c: string) => c.repeat(32);
    const v1 = (keys: string[]) =>
      JSON.stringify({ version: 1, service: null, workspace: 'none', keys, answered: {} });
    // The first gds that kept a state (65d2f144): no version, answers as [index, answer] pairs.
    const first = JSON.stringify({ keys: ['gds-recertify-x'], answered: [[0, answer(1)]] });

    /** A folder with a file of each kind, and what a sweep must leave. */
    async function leftovers(folder: string) {
      const outside = await mkdtemp(join(tmpdir(), 'gds-not-gds-'));
      // A state of the first scheme, a month old: only that it is reached through a link keeps it.
      await writeFile(join(outside, 'kept.json'), first);
      await utimes(
        join(outside, 'kept.json'),
        new Date(Date.now() - 31 * DAY),
        new Date(Date.now() - 31 * DAY),
      );
      await mkdir(folder, { recursive: true });
      const files: Array<[name: string, text: string | 'dir' | 'link', days: number]> = [
        [`${hex('a')}.json`, v1(['old']), 31], // a run nobody finished, a month ago
        [`${hex('b')}.json`, first, 0], // the first scheme: no gds reads it any more
        [`${hex('c')}.json.0123abcd.tmp`, v1(['killed']), 31], // a write killed before its rename
        [`${hex('d')}.json.lock`, 'dir', 31], // a lock killed while held
        [`${hex('e')}.json`, v1(['recent']), 29], // another run's, still resumable
        [`${hex('f')}.json.4567cdef.tmp`, v1(['writing']), 0], // another run writing now
        ['notes.txt', 'mine', 400],
        [`${hex('A')}.json`, first, 400], // not a name gds gives
        [`${hex('0')}.json.bak`, v1(['copy']), 400],
        [`${hex('1')}.json`, 'link', 400], // a link gds never makes: left, as is what it points to
        [`${hex('2')}.json`, 'dir', 400],
      ];
      for (const [name, text, days] of files) {
        const path = join(folder, name);
        if (text === 'dir') await mkdir(path);
        else if (text === 'link') await symlink(join(outside, 'kept.json'), path);
        else await writeFile(path, text);
        const at = new Date(Date.now() - days * DAY);
        await (text === 'link' ? lutimes(path, at, at) : utimes(path, at, at));
      }
      return {
        removed: [
          `${hex('a')}.json`,
          `${hex('b')}.json`,
          `${hex('c')}.json.0123abcd.tmp`,
          `${hex('d')}.json.lock`,
        ],
        outside,
      };
    }

    it("a run that saves removes them, and nothing that is not gds's", async () => {
      const { env, folder } = await stateHome();
      const { removed, outside } = await leftovers(folder);
      const before = await readdir(folder);
      const state = await open(env);
      await state.save(new Map([[0, answer(1)]]));
      const after = await readdir(folder);
      const ours = after.filter((name) => !before.includes(name));
      expect(ours).toHaveLength(1);
      expect(after.sort()).toEqual([...before.filter((name) => !removed.includes(name)), ...ours].sort());
      expect(await readFile(join(outside, 'kept.json'), 'utf8')).toBe(first);
    });

    it('a run that finishes removes them too', async () => {
      const { env, folder } = await stateHome();
      const { removed } = await leftovers(folder);
      const before = await readdir(folder);
      const state = await open(env);
      await state.done();
      expect((await readdir(folder)).sort()).toEqual(before.filter((name) => !removed.includes(name)).sort());
    });
  });
});
