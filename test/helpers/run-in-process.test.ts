// The in-process runner leaves the test process as it found it, and shows what a process would.
import { X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getCACertificates } from 'node:tls';
import v8 from 'node:v8';
import { fileURLToPath } from 'node:url';
import { expect, it, vi } from 'vitest';
import { runInProcess } from './run-in-process.js';

it('restores the environment, the working folder, exitCode, the streams and the console after a call', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'gds-in-process-'));
  await writeFile(join(dir, 'a.yml'), 'a: 1\n');
  const before = { env: { ...process.env }, cwd: process.cwd(), stdout: process.stdout, log: console.log };
  const r = await runInProcess(['gate', 'diff', '-f', '-', '--against', 'a.yml'], {
    cwd: dir,
    env: { GDS_TEST_MARK: 'set for the call' },
    input: 'a: 2\n',
  });
  expect(r).toMatchObject({ code: 1, signal: null, stderr: '' });
  expect(r.stdout).toContain('+a: 2');
  expect(process.env).toEqual(before.env);
  expect(process.cwd()).toBe(before.cwd);
  expect(process.exitCode).toBeUndefined();
  expect(process.stdout).toBe(before.stdout);
  expect(console.log).toBe(before.log);
});

it('runs calls one at a time: each gets its own output', async () => {
  const [version, help] = await Promise.all([runInProcess(['--version']), runInProcess(['gate', '--help'])]);
  expect(version.stdout).toMatch(/^gds\/\S+ \S+ node-v\S+\n$/);
  expect(help.stdout).toContain('$ gds gate COMMAND');
  expect(help.stdout).not.toContain('gds/');
});

it('trusts the certificates of NODE_EXTRA_CA_CERTS for the call alone, as node read it as it started', async () => {
  const trusted = () =>
    new Set(getCACertificates('default').map((pem) => new X509Certificate(pem).fingerprint256));
  const before = trusted();
  const file = fileURLToPath(new URL('../e2e/fixtures/tls/proxied-cert.pem', import.meta.url));
  const certificate = new X509Certificate(await readFile(file)).fingerprint256;
  expect(before.has(certificate)).toBe(false);
  const r = await runInProcess(['--version'], { env: { NODE_EXTRA_CA_CERTS: file } });
  expect(r.code).toBe(0);
  expect(trusted()).toEqual(before);
});

it("leaves V8's flags to the test process: a plan's held young generation and full collection are not set", async () => {
  const setFlags = vi.spyOn(v8, 'setFlagsFromString').mockImplementation(() => undefined);
  try {
    const dir = await mkdtemp(join(tmpdir(), 'gds-in-process-'));
    const r = await runInProcess(['plan', '--dbt', join(dir, 'no-such-project')], {
      env: { SERVICE_API_URL: 'http://127.0.0.1:9/v1', SERVICE_TOKEN: 'gds_not_a_token' },
    });
    expect(r.code, r.stderr).not.toBe(0);
    expect(r.stderr).toContain('no-such-project');
    // WebAssembly's tier-up filter is set and put back within a call: not left behind.
    const left = setFlags.mock.calls.filter(([flag]) => !flag.startsWith('--wasm-tier-up-filter'));
    expect(left).toEqual([]);
  } finally {
    setFlags.mockRestore();
  }
});

it('answers a question through the stand-in terminal, and captures what the command says after the answer', async () => {
  const configDir = join(await mkdtemp(join(tmpdir(), 'gds-in-process-')), 'gds');
  const env = { GDS_CONFIG_DIR: configDir, GDS_SECRET_STORAGE: 'file', NO_COLOR: '1' };
  for (const name of ['p1', 'p2']) {
    const base = `https://${name}.example`;
    const set = await runInProcess(
      ['auth', 'set', '--no-verify', '--token', `cli_${name}Token42`, '--base', base],
      {
        env: { ...env, GDS_PROFILE: name },
      },
    );
    expect(set.code, set.stderr).toBe(0);
  }
  const active = async () => JSON.parse(await readFile(join(configDir, 'config.json'), 'utf8')).activeProfile;
  const other = (await active()) === 'p1' ? 'p2' : 'p1';
  // The arrow down to the other profile, then Enter; then the stand-in stdin ends.
  const r = await runInProcess(['auth', 'switch'], { terminal: true, env, input: '\u001b[B\r' });
  expect(r.code, r.stderr).toBe(0);
  expect(r.stderr).toContain('Which profile?');
  // Said after the prompt ended (Inquirer ends the stream it piped into stderr): a write after end before.
  expect(r.stderr).toContain(`✓ ${other} is the active profile (https://${other}.example).\n`);
  expect(await active()).toBe(other);
});
