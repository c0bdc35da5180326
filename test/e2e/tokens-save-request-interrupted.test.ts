// `gds tokens issue --save-profile ci` and `gds tokens refresh --save-profile ci`, a SIGTERM (a cancelled CI job) or
// a Ctrl-C while their own request is out, before any wait for ci's lock. The signal is held (at most 2 s) for the
// answer. An answer that came in that time was saved into ci, but gds then exited by the signal saying nothing of
// it (SIGTERM) or only "Interrupted." (Ctrl-C): now the save is said as without the signal (the token's id, the
// profile), then gds exits 143 or 130. An answer that did not come in that time was lost unsaid: gds exited with
// no word of the token the service may have issued (or of the refresh token it may have spent). Now the one
// interrupted error says so, and what to look for. A real gds process; the service here tells the test when the
// request reached it and answers only when the test says; the answer goes out once gds's debug log says it holds
// the signal, or never (gds ends at its own bound, then the service is closed).
// A Ctrl-C whose held answer was then saved (or shown, without --save-profile) went on to the command's own Ctrl-C
// handler: under --json its `{"error":{"message":"Interrupted."}}` followed the success record, denying it. The exit
// is still the signal's (130, 143), said now with a notice (a warning line under --json), never an error.
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { createServer as createSocketServer } from 'node:net';
import type { ServerResponse } from 'node:http';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/auth/config.js';
import { cliEnv, collect, node24, repoRoot } from '../cli/helpers/cli-process.js';
import { integrationAnswers } from '../helpers/integration-answers.js';

const { tokens, issued } = integrationAnswers('tok_outAtSignal42');
const person = 'cli_personOutAtSignal42';
const given = 'tok_outAtSignal42.oldRefreshSecret42';

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

/** A service that holds every POST until `answer()` (`reached` settles when the first came). */
async function heldService(body: unknown) {
  let reached!: () => void;
  const received = new Promise<void>((resolve) => (reached = resolve));
  const held: ServerResponse[] = [];
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      held.push(response);
      reached();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const close = () => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  };
  cleanup.push(close);
  const text = JSON.stringify(body);
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    received,
    answer: () => {
      for (const response of held.splice(0))
        response.writeHead(200, { 'content-type': 'application/json' }).end(text);
    },
  };
}

/**
 * gds from its sources (bin/dev.js through tsx), GDS_DEBUG on; `holding` settles once it says it holds a signal,
 * `writingKeychain` once it asked the keychain to write.
 */
function startGds(args: string[], env: Record<string, string>) {
  const child = spawn(node24, ['--import', 'tsx', 'bin/dev.js', ...args], {
    cwd: repoRoot,
    env: cliEnv({ ...env, GDS_DEBUG: '1', NO_COLOR: '1' }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const result = collect(child);
  let stderr = '';
  child.stderr.on('data', (chunk: string) => (stderr += chunk));
  const says = (pattern: RegExp) =>
    new Promise<void>((resolve) => {
      const look = () => {
        if (!pattern.test(stderr)) return;
        child.stderr.off('data', look);
        resolve();
      };
      child.stderr.on('data', look);
    });
  const holding = says(/SIG(INT|TERM) held: the new tokens are saved first/);
  const writingKeychain = says(/keychain write: asked process/);
  return { child, result, holding, writingKeychain };
}

const commands = {
  issue: {
    args: ['tokens', 'issue', '--name', 'nightly', '--env', 'dev', '--scope', 'workspace:read:audit'],
    answer: issued,
    env: { SERVICE_TOKEN: person },
  },
  refresh: { args: ['tokens', 'refresh', '--refresh-token', given], answer: { tokens }, env: {} },
};

/**
 * Runs `command` into profile ci of an empty config (or, `intoProfile` false, without --save-profile), and sends
 * `signal` once the service has its request. `more`: gds's environment beyond that (its secret storage: file).
 */
async function interrupted(
  command: keyof typeof commands,
  signal: NodeJS.Signals,
  json: boolean,
  {
    intoProfile = true,
    more = {},
    flags = [],
  }: { intoProfile?: boolean; more?: Record<string, string>; flags?: string[] } = {},
) {
  const { args, answer, env: extra } = commands[command];
  const service = await heldService(answer);
  const env = {
    GDS_CONFIG_DIR: join(await mkdtemp(join(tmpdir(), 'gds-request-interrupted-')), 'gds'),
    GDS_SECRET_STORAGE: 'file',
  };
  const save = intoProfile ? ['--save-profile', 'ci'] : [];
  const gds = startGds([...args, ...save, ...(json ? ['--json'] : []), ...flags], {
    ...env,
    ...extra,
    ...more,
    SERVICE_API_URL: service.url,
  });
  await Promise.race([
    service.received,
    gds.result.then((r) =>
      Promise.reject(new Error(`gds ended (${r.code}) before its request:\n${r.stderr}`)),
    ),
  ]);
  gds.child.kill(signal);
  return { env, service, gds };
}

/**
 * As `interrupted`, the service answering once gds holds the signal: gds ends by it, ci holding the token saved.
 */
async function answeredOnceHeld(command: keyof typeof commands, signal: NodeJS.Signals, json: boolean) {
  const { env, service, gds } = await interrupted(command, signal, json);
  await gds.holding;
  service.answer();
  const r = await gds.result;
  expect(r.code, r.stderr).toBe(signal === 'SIGINT' ? 130 : 143);
  expect((await loadConfig({ env })).profiles.ci).toMatchObject({
    kind: 'integration',
    tokenId: 'tok_outAtSignal42',
  });
  return r;
}

/** Lines of stderr that are not GDS_DEBUG's (`gds: …`). */
const said = (stderr: string) =>
  stderr.split('\n').filter((line) => line !== '' && !line.startsWith('gds: '));

const secrets = [tokens.accessToken, tokens.refreshToken, person];

/**
 * The outcome said on stdout stands: stderr says the interruption after it (`what`: "the save finished") as a
 * notice, under --json one warning line, and no error (an `{"error":{"message":"Interrupted."}}` denied it).
 */
function interruptedAfter(stderr: string, signal: NodeJS.Signals, json: boolean, what: string) {
  const lines = said(stderr);
  const notice = `Interrupted${signal === 'SIGTERM' ? ' (SIGTERM)' : ''} after ${what}.`;
  if (json) {
    const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(records.filter((record) => 'error' in record)).toEqual([]);
    expect(records).toContainEqual({ warning: { message: notice } });
  } else {
    expect(lines).toContain(notice);
    expect(lines).not.toContain('Interrupted.');
  }
}

/**
 * tokens issue (into ci, or not), `signal` sent while its request is out and never answered: gds ends at its own
 * bound with the one error saying the token may have been issued, to look for; nothing saved, no token shown.
 */
async function issueUnanswered(signal: NodeJS.Signals, json: boolean, intoProfile: boolean) {
  const { env, gds } = await interrupted('issue', signal, json, { intoProfile });
  const r = await gds.result;

  expect(r.code, r.stderr).toBe(signal === 'SIGINT' ? 130 : 143);
  expect(r.stdout).toBe('');
  const lines = said(r.stderr);
  if (json) {
    expect(lines).toHaveLength(1);
    const { error } = JSON.parse(lines[0] ?? '{}') as { error: Record<string, string> };
    expect(error).toMatchObject({ code: 'interrupted' });
    expect(error.message).toMatch(/before the service answered: it may have issued the token "nightly"/);
    expect(error.suggestion).toMatch(/gds tokens list.*gds tokens revoke <id>/);
  } else {
    const text = lines.join('\n');
    expect(text).toMatch(/before the service answered: it may have issued the token "nightly"/);
    expect(text).toMatch(/gds tokens list/);
    expect(text).not.toMatch(/^Interrupted\.$/m);
  }
  expect((await loadConfig({ env })).profiles).toEqual({});
  for (const secret of secrets) expect(r.stdout + r.stderr).not.toContain(secret);
}

describe.each(['SIGTERM', 'SIGINT'] as const)(
  '%s while the request of --save-profile ci is out',
  (signal) => {
    const exitCode = signal === 'SIGINT' ? 130 : 143;

    it.each([true, false])(
      'tokens issue, answered once the signal is held (--json %s): saved into ci, and said, then the exit',
      async (json) => {
        const r = await answeredOnceHeld('issue', signal, json);
        if (json) {
          expect(JSON.parse(r.stdout)).toMatchObject({
            id: 'tok_outAtSignal42',
            profile: 'ci',
            storage: 'file',
          });
        } else {
          expect(r.stdout).toContain('Client token:  tf_tok_outAtSignal42ClientLabel');
          const text = said(r.stderr).join('\n');
          expect(text).toContain('Issued MANAGEMENT token tok_outAtSignal42');
          expect(text).toMatch(/Stored in profile ci/);
        }
        interruptedAfter(r.stderr, signal, json, 'the save finished');
        for (const secret of secrets) expect(r.stdout + r.stderr).not.toContain(secret);
      },
      120_000,
    );

    it.each([true, false])(
      'tokens issue, no answer before gds ends (--json %s): the token it may have issued is said, to look for',
      (json) => issueUnanswered(signal, json, true),
      120_000,
    );

    it.each([true, false])(
      'tokens refresh, answered once the signal is held (--json %s): saved into ci, and said, then the exit',
      async (json) => {
        const r = await answeredOnceHeld('refresh', signal, json);
        if (json) expect(JSON.parse(r.stdout)).toMatchObject({ profile: 'ci', storage: 'file' });
        else expect(said(r.stderr).join('\n')).toMatch(/Refreshed\.[^]*Stored in profile ci/);
        interruptedAfter(r.stderr, signal, json, 'the save finished');
        for (const secret of [...secrets, given]) expect(r.stdout + r.stderr).not.toContain(secret);
      },
      120_000,
    );

    it('tokens refresh, no answer before gds ends: the refresh token it may have spent is said', async () => {
      const { env, gds } = await interrupted('refresh', signal, false);
      const r = await gds.result;

      expect(r.code, r.stderr).toBe(exitCode);
      expect(r.stdout).toBe('');
      const text = said(r.stderr).join('\n');
      expect(text).toMatch(/before the service answered: it may have spent the refresh token you gave/);
      expect(text).toMatch(/gds tokens refresh --save-profile ci/);
      expect((await loadConfig({ env })).profiles).toEqual({});
      for (const secret of [...secrets, given]) expect(r.stdout + r.stderr).not.toContain(secret);
    }, 120_000);
  },
);

// Without --save-profile the answer is shown once, and is as lost when gds ends before it came: the same signal
// said nothing of it (tokens refresh: "Interrupted." or nothing; tokens issue, whose signal was not even held: the
// token it may have issued, live, unnamed). Now the answer that comes within the bound is shown, and one that does
// not is said as with --save-profile.
describe.each(['SIGTERM', 'SIGINT'] as const)(
  '%s while the request of tokens issue|refresh (no --save-profile) is out',
  (signal) => {
    const exitCode = signal === 'SIGINT' ? 130 : 143;

    it.each([true, false])(
      'tokens issue, no answer before gds ends (--json %s): the token it may have issued is said, to look for',
      (json) => issueUnanswered(signal, json, false),
      120_000,
    );

    it('tokens issue, answered once the signal is held: the token shown, then the exit', async () => {
      const { service, gds } = await interrupted('issue', signal, true, { intoProfile: false });
      // A gds that does not hold the signal ends by it at once: its result, not a wait on `holding`.
      await Promise.race([gds.holding, gds.result]);
      service.answer();
      const r = await gds.result;
      expect(r.code, r.stderr).toBe(exitCode);
      expect(JSON.parse(r.stdout)).toMatchObject({ id: 'tok_outAtSignal42', tokens });
      interruptedAfter(r.stderr, signal, true, 'the token was shown');
    }, 120_000);

    it.each([true, false])(
      'tokens refresh, answered once the signal is held (--json %s): the tokens shown, then the exit',
      async (json) => {
        const { service, gds } = await interrupted('refresh', signal, json, { intoProfile: false });
        await gds.holding;
        service.answer();
        const r = await gds.result;
        expect(r.code, r.stderr).toBe(exitCode);
        if (json) expect(JSON.parse(r.stdout)).toEqual({ tokens });
        else expect(r.stdout).toContain(`Refresh token: ${tokens.refreshToken}`);
        interruptedAfter(r.stderr, signal, json, 'the new tokens were shown');
        for (const secret of [...secrets, given]) expect(r.stderr).not.toContain(secret);
      },
      120_000,
    );

    // A --jq filter jq itself runs (not one gds answers: jq-subset.ts) writes its records later, once jq has
    // run: gds exited by the signal before, and the new tokens, the only copy, were never shown.
    it('tokens refresh --jq, answered once the signal is held: the tokens shown through jq, then the exit', async () => {
      const { service, gds } = await interrupted('refresh', signal, false, {
        intoProfile: false,
        flags: ['--jq', '.tokens.accessToken, .tokens.refreshToken'],
      });
      await gds.holding;
      service.answer();
      const r = await gds.result;
      expect(r.code, r.stderr).toBe(exitCode);
      expect(r.stdout).toBe(`${tokens.accessToken}\n${tokens.refreshToken}\n`);
      interruptedAfter(r.stderr, signal, true, 'the new tokens were shown');
    }, 120_000);

    it.each([true, false])(
      'tokens refresh, no answer before gds ends (--json %s): the refresh token it may have spent is said',
      async (json) => {
        const { gds } = await interrupted('refresh', signal, json, { intoProfile: false });
        const r = await gds.result;

        expect(r.code, r.stderr).toBe(exitCode);
        expect(r.stdout).toBe('');
        const lines = said(r.stderr);
        const text = json
          ? (JSON.parse(lines[0] ?? '{}') as { error: { message: string; suggestion: string } }).error
          : { message: lines.join('\n'), suggestion: lines.join('\n') };
        if (json) expect(lines).toHaveLength(1);
        expect(text.message).toMatch(
          /before the service answered: it may have spent the refresh token you gave/,
        );
        expect(text.suggestion).toContain('printf %s "$REFRESH_TOKEN" | gds tokens refresh.');
        expect(text.message + text.suggestion).not.toContain('--save-profile');
        for (const secret of [...secrets, given]) expect(r.stdout + r.stderr).not.toContain(secret);
      },
      120_000,
    );
  },
);

// A second Ctrl-C or SIGTERM while the answer is being saved (a keychain that does not answer the write: a stuck
// session bus, gds waits GDS_KEYCHAIN_TIMEOUT_MS for it) ends gds at once, the save unfinished. It said nothing of
// the answer: the refresh's new tokens, the only copy, were gone unshown; the issued token, live, went unnamed.
// Now the refresh's are shown, and the issued token named, with the save said to be unfinished.
describe.each(['SIGTERM', 'SIGINT'] as const)(
  'a second %s while the answer is saved into ci (the keychain not answering)',
  (signal) => {
    /** `command` --save-profile ci --json, the signal sent as the request is out and again as the save writes. */
    async function signalledTwice(command: keyof typeof commands) {
      const folder = await mkdtemp(join(tmpdir(), 'gds-save-cut-'));
      // A session bus that takes the connection and never answers.
      const bus = join(folder, 'bus');
      const silent = createSocketServer(() => undefined);
      await new Promise<void>((resolve) => silent.listen(bus, resolve));
      cleanup.push(() => new Promise<void>((resolve) => silent.close(() => resolve())));
      const { env, service, gds } = await interrupted(command, signal, true, {
        more: {
          GDS_SECRET_STORAGE: 'auto',
          DBUS_SESSION_BUS_ADDRESS: `unix:path=${bus}`,
          GDS_KEYCHAIN_TIMEOUT_MS: '60000',
        },
      });
      await gds.holding;
      service.answer();
      await Promise.race([gds.writingKeychain, gds.result]);
      gds.child.kill(signal);
      const r = await gds.result;
      expect(r.code, r.stderr).toBe(signal === 'SIGINT' ? 130 : 143);
      const lines = said(r.stderr);
      expect(lines).toHaveLength(1);
      const { error } = JSON.parse(lines[0] ?? '{}') as { error: Record<string, string> };
      expect(error).toMatchObject({ code: 'interrupted' });
      expect(error.message).toMatch(
        /while the new tokens of integration token tok_outAtSignal42 were being saved in profile ci, before the save finished: they may not have been saved/,
      );
      expect(error.suggestion).toContain(join(env.GDS_CONFIG_DIR, 'config.json'));
      return { r, error };
    }

    it('tokens refresh: the new tokens shown, the only copy', async () => {
      const { r } = await signalledTwice('refresh');
      expect(JSON.parse(r.stdout)).toEqual({ tokens });
      for (const secret of [...secrets, given]) expect(r.stderr).not.toContain(secret);
    }, 120_000);

    it('tokens issue: the token named, to end, and not shown', async () => {
      const { r, error } = await signalledTwice('issue');
      expect(r.stdout).toBe('');
      expect(error.suggestion).toContain('gds tokens revoke tok_outAtSignal42');
      for (const secret of secrets) expect(r.stdout + r.stderr).not.toContain(secret);
    }, 120_000);
  },
);
