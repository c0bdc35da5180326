// Flags and arguments of the gate, certification and contract commands, parsed apart from what the
// commands do (nothing is sent): required arguments, enumerations, exclusive flags.
import { describe, expect, it } from 'vitest';
import Certify from '../../src/commands/certify.js';
import ConfigHistory from '../../src/commands/config/history.js';
import ConfigList from '../../src/commands/config/list.js';
import ConfigSet from '../../src/commands/config/set.js';
import ContractSetIntent from '../../src/commands/contract/set-intent.js';
import EnvPromote from '../../src/commands/env/promote.js';
import GateApply from '../../src/commands/gate/apply.js';
import GateCancel from '../../src/commands/gate/cancel.js';
import GateDiff from '../../src/commands/gate/diff.js';
import GateGet from '../../src/commands/gate/get.js';
import GateResult from '../../src/commands/gate/result.js';
import GateRun from '../../src/commands/gate/run.js';
import GateStatus from '../../src/commands/gate/status.js';
import GateSubmit from '../../src/commands/gate/submit.js';
import GateSuggest from '../../src/commands/gate/suggest.js';
import RecertificationDismiss from '../../src/commands/recertification/dismiss.js';
import Reject from '../../src/commands/reject.js';
import VersionsList from '../../src/commands/versions/list.js';
import VersionsRestore from '../../src/commands/versions/restore.js';
import { MAX_NOTE_CHARS } from '../../src/core/text-bounds.js';
import { flagsOf, parse, usageError } from './helpers/oclif-parse.js';

async function argsOf(command: Parameters<typeof parse>[0], argv: string[]) {
  const outcome = await parse(command, argv);
  expect(outcome.exit, outcome.stderr).toBeUndefined();
  return outcome.parsed?.args ?? {};
}

describe('gate commands', () => {
  it('gate get: table id required, -o and --force', async () => {
    expect(await usageError(GateGet, [])).toContain('Missing required argument');
    expect(await flagsOf(GateGet, ['t_1', '-o', 'g.yml', '--force'])).toMatchObject({
      output: 'g.yml',
      force: true,
    });
  });

  it('gate apply: -f is required (a path or -)', async () => {
    expect(await usageError(GateApply, ['t_1'])).toContain('Missing required flag');
    expect(await flagsOf(GateApply, ['t_1', '-f', '-'])).toMatchObject({ file: '-' });
  });

  it('gate diff: --from/--to take vN or N (as vN) and need each other', async () => {
    expect(await flagsOf(GateDiff, ['t_1', '--from', '1', '--to', 'v3'])).toMatchObject({
      from: 'v1',
      to: 'v3',
    });
    expect(await usageError(GateDiff, ['t_1', '--from', 'v1'])).toMatch(/--to/);
    expect(await usageError(GateDiff, ['t_1', '--from', 'one', '--to', 'v2'])).toContain('is not a version');
    // One reading with versions restore --to: V2 and 02 are v2; v0 is none.
    expect(await flagsOf(GateDiff, ['t_1', '--from', '02', '--to', 'V3'])).toMatchObject({
      from: 'v2',
      to: 'v3',
    });
    expect(await usageError(GateDiff, ['t_1', '--from', 'v0', '--to', 'v2'])).toContain('is not a version');
  });

  it('gate run: --gate 1 by default, 2 or 3 only; --sample shapes checked', async () => {
    expect(await flagsOf(GateRun, ['t_1'])).toMatchObject({ gate: 1 });
    expect(await flagsOf(GateRun, ['t_1', '--gate', '3', '--baseline', 'job_1'])).toMatchObject({
      gate: 3,
      baseline: 'job_1',
    });
    for (const spec of ['head:10', 'tail:1', 'random:500', 'chunks:4@100']) {
      expect(await flagsOf(GateRun, ['t_1', '--sample', spec])).toMatchObject({ sample: spec });
    }
    for (const bad of ['head', 'head:0', 'chunks:4', 'all:3', 'random:-1']) {
      expect(await usageError(GateRun, ['t_1', '--sample', bad])).toContain('is not a sample');
    }
    // The service's bounds (400 invalid_sample past them): N up to 1,000,000 rows, K up to 1,000 chunks.
    for (const most of ['head:1000000', 'random:1000000', 'chunks:1000@1000000']) {
      expect(await flagsOf(GateRun, ['t_1', '--sample', most])).toMatchObject({ sample: most });
    }
    for (const beyond of ['tail:1000001', 'chunks:1001@1', 'chunks:2@1000001', 'head:99999999999999999999']) {
      expect(await usageError(GateRun, ['t_1', '--sample', beyond])).toContain(
        'is out of range: N is at most 1,000,000 rows and K at most 1,000 chunks',
      );
    }
    expect(await usageError(GateRun, ['t_1', '--gate', '4'])).toMatch(
      /--gate takes one of 1, 2, 3; "4" is not one of them/,
    );
  });

  it('gate status needs --gate; gate cancel defaults to Gate 1; gate result takes a job id only', async () => {
    expect(await usageError(GateStatus, ['job_1'])).toContain('Missing required flag --gate');
    expect(await flagsOf(GateStatus, ['job_1', '--gate', '2'])).toMatchObject({ gate: 2 });
    expect(await flagsOf(GateCancel, ['job_1'])).toMatchObject({ gate: 1 });
    expect(await usageError(GateResult, ['job_1', '--gate', '2'])).toContain('Unknown flag: --gate.');
    expect(await argsOf(GateResult, ['job_1'])).toEqual({ jobId: 'job_1' });
  });

  it('gate submit and gate suggest take one table id', async () => {
    expect(await argsOf(GateSubmit, ['t_1'])).toEqual({ tableId: 't_1' });
    expect(await flagsOf(GateSubmit, ['t_1'])).not.toHaveProperty('if-not-certified');
    expect(await flagsOf(GateSubmit, ['t_1', '--if-not-certified'])).toMatchObject({
      'if-not-certified': true,
    });
    expect(await usageError(GateSuggest, [])).toContain('Missing required argument');
    expect(await usageError(GateSuggest, ['t_1', 't_2'])).toContain('Unexpected argument: t_2');
  });

  it('gate submit --idempotency-key: 1-200 printable ASCII characters without spaces, as the service takes it', async () => {
    const key = `${'9'.repeat(190)}-attempt-2`;
    expect(await flagsOf(GateSubmit, ['t_1', '--idempotency-key', key])).toMatchObject({
      'idempotency-key': key,
    });
    expect(await flagsOf(GateSubmit, ['t_1'])).not.toHaveProperty('idempotency-key');
    for (const bad of ['run 42', 'x'.repeat(201), 'naïve'])
      expect(await usageError(GateSubmit, ['t_1', '--idempotency-key', bad])).toContain(
        'is not an idempotency key: use 1-200 printable ASCII characters without spaces',
      );
  });
});

describe('certify and reject', () => {
  it('certify: --note and --evidence-file', async () => {
    expect(await flagsOf(Certify, ['t_1', '--note', 'ok', '--evidence-file', 'r.pdf'])).toMatchObject({
      note: 'ok',
      'evidence-file': 'r.pdf',
    });
  });

  it('reject: --reason is required', async () => {
    expect(await usageError(Reject, ['t_1'])).toContain('Missing required flag --reason');
  });

  // The service keeps a note or reason whole in its audit entry, up to 10,000 characters (400 text_too_long past).
  it.each([
    ['certify', Certify, ['t_1', '--note'], 'note'],
    ['reject', Reject, ['t_1', '--reason'], 'reason'],
    ['versions restore', VersionsRestore, ['t_1', '--to', '2', '--reason'], 'reason'],
    ['recertification dismiss', RecertificationDismiss, ['rcr_1', '--reason'], 'reason'],
  ] as const)(
    '%s: 10,000 characters of text are taken, one more is exit 2 naming the limit',
    async (_, command, argv, flag) => {
      const most = 'n'.repeat(MAX_NOTE_CHARS);
      expect(await flagsOf(command, [...argv, most])).toMatchObject({ [flag]: most });
      expect(await usageError(command, [...argv, `${most}n`])).toContain(
        `--${flag} is 10,001 characters; at most 10,000 are kept.`,
      );
    },
  );
});

describe('versions and config', () => {
  it('versions restore: --to (a whole number from 1) and --reason required, --env optional', async () => {
    expect(await usageError(VersionsRestore, ['t_1', '--reason', 'r'])).toContain(
      'Missing required flag --to',
    );
    expect(await usageError(VersionsRestore, ['t_1', '--to', '0', '--reason', 'r'])).toMatch(
      /greater than or equal to 1/,
    );
    expect(await usageError(VersionsRestore, ['t_1', '--to', 'two', '--reason', 'r'])).toMatch(
      /"two" is not a version/,
    );
    // v2, as versions list prints it and gate diff takes it.
    expect((await flagsOf(VersionsRestore, ['t_1', '--to', 'v2', '--reason', 'r'])).to).toBe(2);
    expect(
      await flagsOf(VersionsRestore, ['t_1', '--to', '2', '--reason', 'r', '--env', 'dev']),
    ).toMatchObject({
      to: 2,
      reason: 'r',
      env: 'dev',
    });
    expect(await argsOf(VersionsList, ['t_1'])).toEqual({ tableId: 't_1' });
  });

  it('config set takes a key and a value; list none; history a key', async () => {
    expect(await argsOf(ConfigSet, ['gate_mode', 'ADVISORY'])).toEqual({
      key: 'gate_mode',
      value: 'ADVISORY',
    });
    expect(await usageError(ConfigSet, ['gate_mode'])).toContain('Missing required argument');
    expect(await usageError(ConfigList, ['x'])).toContain('Unexpected argument: x');
    expect(await argsOf(ConfigHistory, ['gate_mode'])).toEqual({ key: 'gate_mode' });
  });
});

describe('contract set-intent and env promote', () => {
  it('contract set-intent: every flag', async () => {
    const argv = ['t_1', '--intent', 'METRIC', '--allowed-consumers', 'HUMAN,AI', '--grain-type', 'entity'];
    expect(
      await flagsOf(ContractSetIntent, [...argv, '--grain-key', 'a,b', '--grain', 'g', '--meaning', 'm']),
    ).toMatchObject({
      intent: 'METRIC',
      'allowed-consumers': 'HUMAN,AI',
      'grain-type': 'entity',
      'grain-key': 'a,b',
      grain: 'g',
      meaning: 'm',
    });
  });

  it('env promote: --to required; --dest-profile, --bundle-out and --bundle-in exclude each other', async () => {
    expect(await usageError(EnvPromote, ['t_1'])).toContain('Missing required flag --to');
    expect(
      await flagsOf(EnvPromote, ['t_1', '--to', 'staging', '--bundle-out', 'b.json', '--force']),
    ).toMatchObject({
      to: 'staging',
      'bundle-out': 'b.json',
      force: true,
    });
    expect(
      await usageError(EnvPromote, ['t_1', '--to', 's', '--bundle-out', 'a', '--bundle-in', 'b']),
    ).toMatch(/cannot also be provided/);
    expect(
      await usageError(EnvPromote, ['t_1', '--to', 's', '--dest-profile', 'p', '--bundle-in', 'b']),
    ).toMatch(/cannot also be provided/);
  });
});
