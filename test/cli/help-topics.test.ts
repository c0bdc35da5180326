// Issue 23 items 2, 6 and 7: the help topics gh has (`gds help environment`, `exit-codes`, `formatting`,
// `global-flags`), generated from the code that decides, and `gds version` printing the version.
import { beforeAll, describe, expect, it } from 'vitest';
import { environmentVariableNames } from '../../src/cli/environment.js';
import { ExitCode } from '../../src/cli/errors.js';
import { ensureBuilt, runCli } from './helpers/cli-process.js';

beforeAll(async () => {
  await ensureBuilt();
}, 120_000);

describe('gds help <topic>', () => {
  it('environment: every variable of the list, and none of the retired GDS_<FLAG> ones', async () => {
    const r = await runCli(['help', 'environment']);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    for (const name of environmentVariableNames()) expect(r.stdout).toContain(name);
    for (const retired of ['GDS_LIMIT', 'GDS_REPLACE', 'GDS_YES', 'GDS_OUTPUT']) {
      expect(r.stdout).not.toContain(retired);
    }
  });

  it('exit-codes: each code gds exits with, one line each', async () => {
    const r = await runCli(['help', 'exit-codes']);
    expect(r.code).toBe(0);
    for (const code of Object.values(ExitCode)) expect(r.stdout).toMatch(new RegExp(`^  ${code} +\\S`, 'm'));
  });

  it('formatting: NDJSON, --json fields and per-record --jq with the .[] advice', async () => {
    const r = await runCli(['help', 'formatting']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('NDJSON');
    expect(r.stdout).toContain('--json id,name');
    expect(r.stdout).toContain("not '.[].name'");
  });

  it('global-flags: the global flags, once', async () => {
    const r = await runCli(['help', 'global-flags']);
    expect(r.code).toBe(0);
    for (const flag of ['--token', '--base', '--profile', '--json', '--jq', '--max-retry-after']) {
      expect(r.stdout.split(`  ${flag}`).length - 1).toBe(1);
    }
  });
});

describe('gds version', () => {
  it('prints the version line, as gds --version does', async () => {
    const [word, flag] = await Promise.all([runCli(['version']), runCli(['--version'])]);
    expect(word).toMatchObject({ code: 0, stderr: '' });
    expect(word.stdout).toMatch(/^gds\/\d+\.\d+\.\d+ /);
    expect(word.stdout).toBe(flag.stdout);
  });
});

describe('command help, as gh has it', () => {
  it('the summary once, a short usage line, and the tagline written for users', async () => {
    const r = await runCli(['gate', 'apply', '--help']);
    expect(r.code).toBe(0);
    const summary = 'Validate a gate1.yml locally, then store it as the next version of the table.';
    expect(r.stdout.split(summary).length - 1).toBe(1);
    expect(r.stdout).toMatch(/USAGE\n {2}\$ gds gate apply TABLEID\n/);
    const root = await runCli(['--help']);
    expect(root.stdout.split('\n')[0]).toBe(
      'Work with the Governed Data Service from the command line: tables, gates, certification, audit',
    );
    expect(root.stdout).not.toContain('reference server');
  });
});
