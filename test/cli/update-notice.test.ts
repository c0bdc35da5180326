// The update notice, as gh's: at most once a day, only on a terminal, never in CI or with
// GDS_NO_UPDATE_NOTIFIER, in the background (a command that ends first never waits for it), the answer kept in
// gds's state folder; no release source, nothing fetched. In this process, with the request injected.
import { mkdtemp, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { newer, startUpdateCheck, updateStateFile } from '../../src/cli/update-notice.js';
import type { UpdateCheckContext } from '../../src/cli/update-notice.js';

const source = 'https://releases.example.com/gds/latest.json';
let env: NodeJS.ProcessEnv;
let asked: string[];

beforeEach(async () => {
  env = { XDG_STATE_HOME: await mkdtemp(join(tmpdir(), 'gds-update-')) };
  asked = [];
});

function context(overrides: Partial<UpdateCheckContext> = {}): UpdateCheckContext {
  return {
    current: '0.1.0',
    source,
    env,
    stderrIsTerminal: true,
    json: false,
    now: Date.UTC(2026, 10, 29, 12),
    fetchLatest: async (url) => {
      asked.push(url);
      return { version: '0.2.0', url: 'https://releases.example.com/gds/v0.2.0' };
    },
    ...overrides,
  };
}

/** The notice of a check whose answer came before the command ended. */
async function noticeOf(overrides: Partial<UpdateCheckContext> = {}): Promise<string | undefined> {
  const check = startUpdateCheck(context(overrides));
  await check?.ended;
  return check?.finish();
}

describe('the update notice', () => {
  it('names the newer release and where it is, and keeps the answer in the state folder (0600)', async () => {
    const notice = await noticeOf();
    expect(notice).toContain('A new release of gds is available: 0.1.0 → 0.2.0');
    expect(notice).toContain('https://releases.example.com/gds/v0.2.0');
    expect(notice).toContain('GDS_NO_UPDATE_NOTIFIER');
    expect(asked).toEqual([source]);
    const file = updateStateFile(env);
    expect(file).toBe(join(env.XDG_STATE_HOME ?? '', 'gds', 'update.json'));
    expect(JSON.parse(await readFile(file, 'utf8'))).toMatchObject({ latest: { version: '0.2.0' } });
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });

  it('asks at most once a day', async () => {
    const now = context().now ?? 0;
    await noticeOf();
    expect(await noticeOf({ now: now + 23 * 3600_000 })).toBeUndefined();
    expect(asked).toHaveLength(1);
    expect(await noticeOf({ now: now + 25 * 3600_000 })).toContain('0.1.0 → 0.2.0');
    expect(asked).toHaveLength(2);
  });

  it.each([
    ['no release source is configured', { source: undefined }],
    ['stderr is not a terminal', { stderrIsTerminal: false }],
    ['--json is given', { json: true }],
    ['CI is set', { env: { CI: 'true' } }],
    ['GDS_NO_UPDATE_NOTIFIER is set', { env: { GDS_NO_UPDATE_NOTIFIER: '1' } }],
  ])('fetches nothing when %s', async (_when, overrides: Partial<UpdateCheckContext>) => {
    expect(startUpdateCheck(context(overrides))).toBeUndefined();
    expect(asked).toEqual([]);
  });

  it('says nothing when the newest release is this one, an older one or a pre-release', async () => {
    for (const version of ['0.1.0', '0.0.9', '0.2.0-rc.1']) {
      env = { XDG_STATE_HOME: await mkdtemp(join(tmpdir(), 'gds-update-')) };
      expect(await noticeOf({ fetchLatest: async () => ({ version }) }), version).toBeUndefined();
    }
  });

  it('never holds up a command that ends first: the request is cut short and asked again next time', async () => {
    let signal: AbortSignal | undefined;
    let asking: () => void = () => undefined;
    const askedNow = new Promise<void>((resolve) => (asking = resolve));
    const check = startUpdateCheck(
      context({
        fetchLatest: (_url, given) => {
          signal = given;
          asking();
          return new Promise((_resolve, reject) =>
            given.addEventListener('abort', () => reject(given.reason)),
          );
        },
      }),
    );
    await askedNow;
    expect(await check?.finish()).toBeUndefined();
    expect(signal?.aborted).toBe(true);
    await check?.ended;
    await expect(stat(updateStateFile(env))).rejects.toThrow(/ENOENT/);
  });

  it('a command that ends before the request starts sends none', async () => {
    const check = startUpdateCheck(context());
    expect(await check?.finish()).toBeUndefined();
    await check?.ended;
    expect(asked).toEqual([]);
  });

  it('says the release source’s link on one line: a line break in it forges no line of the notice', async () => {
    const notice = await noticeOf({
      fetchLatest: async () => ({ version: '0.2.0', url: 'https://x.example/v0.2.0\nForged: ok\u001b[2J\r' }),
    });
    expect(notice?.split('\n')).toEqual([
      '',
      'A new release of gds is available: 0.1.0 → 0.2.0',
      'https://x.example/v0.2.0 Forged: ok ',
      '(GDS_NO_UPDATE_NOTIFIER=1 turns this notice off)',
      '',
    ]);
  });

  it('a source that fails counts as the day’s check, silently', async () => {
    const failing = async () => {
      throw new Error('HTTP 404');
    };
    expect(await noticeOf({ fetchLatest: failing })).toBeUndefined();
    expect(JSON.parse(await readFile(updateStateFile(env), 'utf8'))).not.toHaveProperty('latest');
    expect(await noticeOf()).toBeUndefined();
    expect(asked).toEqual([]);
  });
});

describe('newer', () => {
  it.each([
    ['0.2.0', '0.1.0', true],
    ['1.0.0', '0.9.9', true],
    ['0.10.0', '0.9.0', true],
    ['v0.2.0', '0.1.0', true],
    ['0.1.0', '0.1.0-rc.1', true],
    ['0.1.0', '0.1.0', false],
    ['0.1.0', '0.2.0', false],
    ['0.2.0-rc.1', '0.1.0', false],
    ['latest', '0.1.0', false],
  ])('%s over %s: %s', (latest, current, expected) => {
    expect(newer(latest, current)).toBe(expected);
  });
});
