// The governance commands' flags and arguments, parsed by oclif apart from what the commands do: bad values
// exit 2 before anything runs, and every flag also reads its GDS_<FLAG> variable.
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

  it('--web opens the tracking URL, also from GDS_WEB; with --wait too', async () => {
    expect(await flagsOf(Push, ['a.sql', '--web', '--wait'])).toMatchObject({ web: true, wait: true });
    setEnv({ GDS_WEB: 'true' });
    expect(await flagsOf(Push, ['a.sql'])).toMatchObject({ web: true });
  });

  it('reads GDS_CONNECTOR, GDS_SOURCE, GDS_REPLACE, GDS_WAIT and GDS_INTERVAL', async () => {
    setEnv({
      GDS_CONNECTOR: 'con_env',
      GDS_SOURCE: 's.t',
      GDS_REPLACE: 'tbl_env',
      GDS_WAIT: 'true',
      GDS_INTERVAL: '2',
    });
    expect(await flagsOf(Push, ['a.sql'])).toMatchObject({
      connector: 'con_env',
      source: 's.t',
      replace: 'tbl_env',
      wait: true,
      interval: 2000,
    });
  });
});

describe('gds definitions push', () => {
  it('takes the same connector, source and replace flags; the connector is required', async () => {
    expect(
      await flagsOf(DefinitionsPush, ['d.yml', '--connector', 'c', '--replace', 'g', '--source', 's.t']),
    ).toMatchObject({ connector: 'c', replace: 'g', source: 's.t' });
    expect(await usageError(DefinitionsPush, ['d.yml'])).toContain('Missing required flag --connector');
    setEnv({ GDS_CONNECTOR: 'con_ci' });
    expect(await flagsOf(DefinitionsPush, ['d.yml'])).toMatchObject({ connector: 'con_ci' });
  });
});

describe('gds status', () => {
  it('--watch with a short interval; GDS_WATCH and GDS_INTERVAL', async () => {
    expect(await flagsOf(Status, ['t1', '--watch', '--interval', '0.1'])).toMatchObject({
      watch: true,
      interval: 100,
    });
    setEnv({ GDS_WATCH: '1', GDS_INTERVAL: '5' });
    expect(await flagsOf(Status, ['t1'])).toMatchObject({ watch: true, interval: 5000 });
  });

  it('--web, also from GDS_WEB; it cannot be combined with --watch', async () => {
    expect(await flagsOf(Status, ['t1', '--web'])).toMatchObject({ web: true });
    expect(await flagsOf(Status, ['t1'])).not.toHaveProperty('web');
    expect(await usageError(Status, ['t1', '--web', '--watch'])).toContain('--watch');
    setEnv({ GDS_WEB: '1' });
    expect(await flagsOf(Status, ['t1'])).toMatchObject({ web: true });
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
  it('--state takes a lifecycle state, also from GDS_STATE', async () => {
    expect(await flagsOf(List, ['--state', 'CERTIFIED'])).toMatchObject({ state: 'CERTIFIED' });
    setEnv({ GDS_STATE: 'QUARANTINED' });
    expect(await flagsOf(List, [])).toMatchObject({ state: 'QUARANTINED' });
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
  it('-y / --yes / GDS_YES', async () => {
    expect(await flagsOf(Delete, ['t1'])).toEqual({});
    expect(await flagsOf(Delete, ['t1', '-y'])).toMatchObject({ yes: true });
    setEnv({ GDS_YES: 'true' });
    expect(await flagsOf(Delete, ['t1'])).toMatchObject({ yes: true });
  });

  it('needs the id', async () => {
    expect(await usageError(Delete, ['--yes'])).toContain('Missing required argument');
  });
});

describe('gds quarantine open', () => {
  it('-o and --force, also from GDS_OUTPUT and GDS_FORCE', async () => {
    const outcome = await parse(QuarantineOpen, ['t1', '-o', 'x.sql', '--force']);
    expect(outcome.parsed?.args).toEqual({ tableId: 't1' });
    expect(outcome.parsed?.flags).toMatchObject({ output: 'x.sql', force: true });
    setEnv({ GDS_OUTPUT: 'y.sql', GDS_FORCE: '1' });
    expect(await flagsOf(QuarantineOpen, ['t1'])).toMatchObject({ output: 'y.sql', force: true });
  });
});

describe('gds recertification', () => {
  it('list --table / GDS_TABLE; dismiss <id> --reason / GDS_REASON', async () => {
    expect(await flagsOf(RecertificationList, ['--table', 't1'])).toMatchObject({ table: 't1' });
    const outcome = await parse(RecertificationDismiss, ['rcr_1', '--reason', 'fine']);
    expect(outcome.parsed).toMatchObject({ args: { requestId: 'rcr_1' }, flags: { reason: 'fine' } });
    setEnv({ GDS_TABLE: 't2', GDS_REASON: 'from env' });
    expect(await flagsOf(RecertificationList, [])).toMatchObject({ table: 't2' });
    expect(await flagsOf(RecertificationDismiss, ['rcr_1'])).toMatchObject({ reason: 'from env' });
    expect(await usageError(RecertificationDismiss, [])).toContain('Missing required argument');
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

  it.each([
    [[], 'Exactly one of the following must be provided'],
    [['--tables', 'a', '--run-results', 'r.json'], 'cannot also be provided'],
    [['--tables', 'a', '--manifest', 'm.json'], 'All of the following must be provided'],
    [['--tables', 'a,,b'], 'has an empty table name'],
    [['--tables', Array.from({ length: 501 }, (_, i) => `t${i}`).join(',')], '501 tables: at most 500'],
  ])('%j is a usage error', async (argv, message) => {
    expect(await usageError(Recertify, argv)).toContain(message);
  });

  it('reads GDS_RUN_RESULTS, GDS_MANIFEST, GDS_ENV, GDS_TRIGGER, GDS_EVIDENCE_RUN_ID, and GDS_TABLES', async () => {
    setEnv({
      GDS_RUN_RESULTS: 'rr.json',
      GDS_MANIFEST: 'm.json',
      GDS_ENV: 'dev',
      GDS_TRIGGER: 'T',
      GDS_EVIDENCE_RUN_ID: 'e1',
    });
    expect(await flagsOf(Recertify, [])).toMatchObject({
      'run-results': 'rr.json',
      manifest: 'm.json',
      env: 'dev',
      trigger: 'T',
      'evidence-run-id': 'e1',
    });
  });

  it('GDS_TABLES alone', async () => {
    setEnv({ GDS_TABLES: 'a,b' });
    expect(await flagsOf(Recertify, [])).toMatchObject({ tables: ['a', 'b'] });
  });
});
