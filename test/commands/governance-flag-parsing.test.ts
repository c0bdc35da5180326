// The governance commands' flags and arguments, parsed by oclif apart from what the commands do: bad values
// exit 2 before anything runs; of their flags only --interval reads a variable (GDS_INTERVAL).
import { describe, expect, it } from 'vitest';
import ConnectorsList from '../../src/commands/connectors/list.js';
import DefinitionsPush from '../../src/commands/definitions/push.js';
import Delete from '../../src/commands/delete.js';
import List from '../../src/commands/list.js';
import Push from '../../src/commands/push.js';
import QuarantineList from '../../src/commands/quarantine/list.js';
import QuarantineOpen from '../../src/commands/quarantine/open.js';
import RecertificationDismiss from '../../src/commands/recertification/dismiss.js';
import RecertificationList from '../../src/commands/recertification/list.js';
import Recertify from '../../src/commands/recertify.js';
import Status from '../../src/commands/status.js';
import { flagsOf, parse, setEnv, usageError } from './helpers/oclif-parse.js';

describe('gds push', () => {
  it('parses the file, connector, source, replace, wait and the interval in seconds', async () => {
    const outcome = await parse(Push, [
      'm/orders.sql',
      '--connector',
      'con_1',
      '--source',
      'analytics.orders',
      '--replace',
      'tbl_9',
      '--wait',
      '--interval',
      '0.5',
    ]);
    expect(outcome.parsed?.args).toEqual({ file: 'm/orders.sql' });
    expect(outcome.parsed?.flags).toMatchObject({
      connector: 'con_1',
      source: 'analytics.orders',
      replace: 'tbl_9',
      wait: true,
      interval: 500,
    });
  });

  it('polls every 3 seconds by default', async () => {
    expect(await flagsOf(Push, ['a.sql', '--connector', 'c'])).toEqual({
      connector: 'c',
      interval: 3000,
      'dry-run': false,
    });
    // §4.9: push [--connector <id>]; without it the service picks the connector from the source's schema.
    expect(await flagsOf(Push, ['a.sql'])).toEqual({ interval: 3000, 'dry-run': false });
  });

  it.each([
    [['--connector', 'c'], 'Missing required argument'],
    [['a.sql', '--connector', 'c', '--source', 'orders'], 'orders is not schema.table'],
    [['a.sql', '--connector', 'c', '--source', 'a.b.c'], 'a.b.c is not schema.table'],
    [['a.sql', '--connector', 'c', '--interval', '0'], 'not a number of seconds between 0.05 and 3600'],
    [['a.sql', '--connector', 'c', '--interval', 'soon'], 'not a number of seconds'],
  ])('%j is a usage error', async (argv, message) => {
    expect(await usageError(Push, argv)).toContain(message);
  });

  it('--web opens the tracking URL, with --wait too', async () => {
    expect(await flagsOf(Push, ['a.sql', '--web', '--wait'])).toMatchObject({ web: true, wait: true });
  });

  it('reads GDS_INTERVAL only: GDS_CONNECTOR, GDS_SOURCE, GDS_REPLACE and GDS_WAIT retarget nothing', async () => {
    setEnv({
      GDS_CONNECTOR: 'con_env',
      GDS_SOURCE: 's.t',
      GDS_REPLACE: 'tbl_env',
      GDS_WAIT: 'true',
      GDS_INTERVAL: '2',
    });
    expect(await flagsOf(Push, ['a.sql'])).toEqual({ interval: 2000, 'dry-run': false });
  });
});

describe('gds definitions push', () => {
  it('takes the same connector, source and replace flags; the connector is required', async () => {
    expect(
      await flagsOf(DefinitionsPush, ['d.yml', '--connector', 'c', '--replace', 'g', '--source', 's.t']),
    ).toMatchObject({ connector: 'c', replace: 'g', source: 's.t' });
    expect(await usageError(DefinitionsPush, ['d.yml'])).toContain('Missing required flag --connector');
  });
});

describe('gds status', () => {
  it('--watch with a short interval; GDS_INTERVAL, but not GDS_WATCH', async () => {
    expect(await flagsOf(Status, ['t1', '--watch', '--interval', '0.1'])).toMatchObject({
      watch: true,
      interval: 100,
    });
    setEnv({ GDS_WATCH: '1', GDS_INTERVAL: '5' });
    const flags = await flagsOf(Status, ['t1']);
    expect(flags).toMatchObject({ interval: 5000 });
    expect(flags.watch ?? false).toBe(false);
  });

  it('--web; it cannot be combined with --watch', async () => {
    expect(await flagsOf(Status, ['t1', '--web'])).toMatchObject({ web: true });
    expect(await flagsOf(Status, ['t1'])).not.toHaveProperty('web');
    expect(await usageError(Status, ['t1', '--web', '--watch'])).toContain('--watch');
  });

  it.each([
    [[], 'Missing required argument'],
    [['t1', '--interval', '-1'], 'not a number of seconds'],
    [['t1', '--interval', '7200'], 'not a number of seconds'],
  ])('%j is a usage error', async (argv, message) => {
    expect(await usageError(Status, argv)).toContain(message);
  });
});

describe('gds list and the lists without flags', () => {
  it('--state takes a lifecycle state, not from GDS_STATE', async () => {
    expect(await flagsOf(List, ['--state', 'CERTIFIED'])).toMatchObject({ state: 'CERTIFIED' });
  });

  it.each([
    [List, ['--state', 'DONE']],
    [List, ['extra']],
    [QuarantineList, ['extra']],
    [ConnectorsList, ['extra']],
  ])('%o %j is a usage error', async (command, argv) => {
    await usageError(command, argv);
  });
});

describe('gds delete', () => {
  it('-y / --yes (never GDS_YES)', async () => {
    expect(await flagsOf(Delete, ['t1'])).toEqual({});
    expect(await flagsOf(Delete, ['t1', '-y'])).toMatchObject({ yes: true });
  });

  it('needs the id', async () => {
    expect(await usageError(Delete, ['--yes'])).toContain('Missing required argument');
  });
});

describe('gds quarantine open', () => {
  it('-o and --force (never GDS_OUTPUT or GDS_FORCE)', async () => {
    const outcome = await parse(QuarantineOpen, ['t1', '-o', 'x.sql', '--force']);
    expect(outcome.parsed?.args).toEqual({ tableId: 't1' });
    expect(outcome.parsed?.flags).toMatchObject({ output: 'x.sql', force: true });
  });
});

describe('gds recertification', () => {
  it('list --table --all; dismiss <id>... --reason, or --table', async () => {
    expect(await flagsOf(RecertificationList, ['--table', 't1', '--all'])).toMatchObject({
      table: 't1',
      all: true,
    });
    const outcome = await parse(RecertificationDismiss, ['rcr_1', '--reason', 'fine']);
    expect(outcome.parsed).toMatchObject({ args: { requestId: 'rcr_1' }, flags: { reason: 'fine' } });
    // Several ids are taken (no "Unexpected argument"); with --table none is needed.
    const several = await parse(RecertificationDismiss, ['rcr_1', 'rcr_2', 'rcr_3', '--reason', 'fine']);
    expect(several.exit, several.stderr).toBeUndefined();
    expect(await flagsOf(RecertificationDismiss, ['--table', 'orders'])).toMatchObject({ table: 'orders' });
    expect(await usageError(RecertificationDismiss, ['--tabel', 'orders'])).toContain(
      'Unknown flag: --tabel',
    );
  });
});

describe('gds recertify', () => {
  it('--run-results with --manifest, env, trigger and evidence run id', async () => {
    expect(
      await flagsOf(Recertify, [
        '--run-results',
        'target/run_results.json',
        '--manifest',
        'target/manifest.json',
        '--env',
        'production',
        '--trigger',
        'NIGHTLY',
        '--evidence-run-id',
        'r42',
      ]),
    ).toMatchObject({
      'run-results': 'target/run_results.json',
      manifest: 'target/manifest.json',
      env: 'production',
      trigger: 'NIGHTLY',
      'evidence-run-id': 'r42',
    });
  });

  it('--tables is a comma-separated list', async () => {
    expect(await flagsOf(Recertify, ['--tables', 'orders, customers'])).toMatchObject({
      tables: ['orders', 'customers'],
    });
  });

  it('takes what the service takes: 500 tables, a name of 1,024 characters, a --trigger of 200', async () => {
    const most = Array.from({ length: 500 }, (_, i) => (i === 0 ? 't'.repeat(1_024) : `t${i}`));
    const flags = await flagsOf(Recertify, ['--tables', most.join(','), '--trigger', 'T'.repeat(200)]);
    expect(flags['tables']).toEqual(most);
    expect(flags['trigger']).toBe('T'.repeat(200));
  });

  it.each([
    [[], 'Exactly one of the following must be provided'],
    [['--tables', 'a', '--run-results', 'r.json'], 'cannot also be provided'],
    [['--tables', 'a', '--manifest', 'm.json'], 'All of the following must be provided'],
    [['--tables', 'a,,b'], 'has an empty table name'],
    [['--tables', `a,${'t'.repeat(1_025)}`], 'is over 1024 characters'],
    [['--tables', 'a', '--trigger', 'T'.repeat(201)], '--trigger is 201 characters; at most 200 are kept.'],
  ])('%j is a usage error', async (argv, message) => {
    expect(await usageError(Recertify, argv)).toContain(message);
  });
});
