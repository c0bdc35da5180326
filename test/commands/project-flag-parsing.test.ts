// `gds plan` and `gds apply` flags parsed by oclif apart from what the commands do, and gds.yml read under
// them (src/services/project-config.ts): the file's defaults, --target/--env entries, flags winning, and
// every mistake in the file an exit 2 naming it.
import { describe, expect, it } from 'vitest';
import Apply from '../../src/commands/apply.js';
import Plan from '../../src/commands/plan.js';
import { parseProjectConfig, projectSettings } from '../../src/services/project-config.js';
import { parseBody } from '../../src/server/contract.js';
import { checkProjectId } from '../../src/server/governance/definitions.js';
import { flagsOf, usageError } from './helpers/oclif-parse.js';

describe('gds plan flags', () => {
  it('parses --dbt, repeated --select/--exclude, --connector, --schema, --exit-code, --strict', async () => {
    expect(
      await flagsOf(Plan, [
        '--dbt',
        'proj',
        '--select',
        'staging.*',
        '--select',
        'tag:finance',
        '--exclude',
        'tag:wip',
        '--connector',
        'con_1',
        '--schema',
        'analytics',
        '--exit-code',
        '--strict',
      ]),
    ).toMatchObject({
      dbt: 'proj',
      select: ['staging.*', 'tag:finance'],
      exclude: ['tag:wip'],
      connector: 'con_1',
      schema: 'analytics',
      'exit-code': true,
      strict: true,
    });
  });

  it.each([
    [[], 'Missing required flag'],
    [['--dbt'], 'dbt'],
    [['--dbt', 'p', '--nope'], 'nope'],
  ])('%j is a usage error', async (argv, message) => {
    expect(await usageError(Plan, argv)).toContain(message);
  });
});

describe('gds apply flags', () => {
  it('parses --yes, --concurrency (default 4), --submit, --prune', async () => {
    expect(await flagsOf(Apply, ['--dbt', 'p'])).toMatchObject({ dbt: 'p', concurrency: 4 });
    expect(
      await flagsOf(Apply, ['--dbt', 'p', '-y', '--concurrency', '8', '--submit', '--prune']),
    ).toMatchObject({ yes: true, concurrency: 8, submit: true, prune: true });
  });

  it('--adopt is repeatable, on apply and plan', async () => {
    expect(await flagsOf(Apply, ['--dbt', 'p', '--adopt', 'a', '--adopt', 'b'])).toMatchObject({
      adopt: ['a', 'b'],
    });
    expect(await flagsOf(Plan, ['--dbt', 'p', '--adopt', 'a'])).toMatchObject({ adopt: ['a'] });
  });

  it.each([
    [['--dbt', 'p', '--concurrency', '0'], 'concurrency'],
    [['--dbt', 'p', '--concurrency', 'many'], 'concurrency'],
    [['a.json', 'b.json'], 'Unexpected argument'],
  ])('%j is a usage error', async (argv, message) => {
    expect(await usageError(Apply, argv)).toContain(message);
  });
});

describe('gds.yml', () => {
  const file = 'proj/gds.yml';
  const text = [
    'connector: con_dev',
    'select: staging.*',
    'exclude: [tag:wip]',
    'targets:',
    '  prod: { connector: con_prod, schema: analytics }',
    'environments:',
    '  staging: { connector: con_staging }',
  ].join('\n');

  it('gives the defaults; --target and --env pick an entry; flags win', async () => {
    const read = { file, config: await parseProjectConfig(file, text) };
    expect(projectSettings({}, read)).toEqual({
      connector: 'con_dev',
      select: ['staging.*'],
      exclude: ['tag:wip'],
      configFile: file,
    });
    expect(projectSettings({ target: 'prod' }, read)).toMatchObject({
      connector: 'con_prod',
      schema: 'analytics',
    });
    expect(projectSettings({ env: 'staging' }, read)).toMatchObject({ connector: 'con_staging' });
    expect(
      projectSettings({ target: 'prod', connector: 'con_flag', select: ['orders'] }, read),
    ).toMatchObject({ connector: 'con_flag', schema: 'analytics', select: ['orders'] });
    expect(projectSettings({ connector: 'c' }, undefined)).toEqual({ connector: 'c' });
  });

  it("--selector is the whole selection: gds.yml's select and exclude are not added to it", async () => {
    const read = { file, config: await parseProjectConfig(file, text) };
    const settings = projectSettings({ selector: 'nightly' }, read);
    expect(settings).toMatchObject({ selector: 'nightly', connector: 'con_dev' });
    expect(settings.select).toBeUndefined();
    expect(settings.exclude).toBeUndefined();
  });

  it('project: is the project id, whatever the target', async () => {
    const read = { file, config: await parseProjectConfig(file, `project: shop-1\n${text}`) };
    expect(projectSettings({}, read)).toMatchObject({ project: 'shop-1' });
    expect(projectSettings({ target: 'prod' }, read)).toMatchObject({ project: 'shop-1' });
  });

  it.each([
    ['conector: con_dev', 'conector is not a known key'],
    ['select: 3', 'select must be a selector'],
    ['targets: { prod: { connector: c, db: x } }', 'targets.prod.db is not a known key'],
    ['- a\n- b', 'must be a mapping'],
    ['connector: [', 'not YAML'],
    ['project: [a]', 'project must be a text'],
    [`project: ${'x'.repeat(201)}`, 'project must be at most 200 characters'],
  ])('%j: exit 2 naming the mistake', async (content, message) => {
    const error = await parseProjectConfig(file, content).catch((e: unknown) => e);
    expect(error).toMatchObject({ exitCode: 2, code: 'invalid_project_config' });
    expect((error as Error).message).toContain(message);
  });

  it('project: is counted in characters as the service and its contract count it (200 emoji are one id)', async () => {
    const emoji = '\u{1F680}'.repeat(200);
    const read = { file, config: await parseProjectConfig(file, `project: ${emoji}\n${text}`) };
    expect(projectSettings({}, read)).toMatchObject({ project: emoji });
    // The service takes it as its contract's maxLength counts it (ajv: code points), and refuses 201.
    expect(() => parseBody('TableProjectRequest', { project: emoji, previous: null })).not.toThrow();
    expect(() => parseBody('TableProjectRequest', { project: `${emoji}x`, previous: null })).toThrow();
    expect(checkProjectId(emoji, 'project')).toBe(emoji);
    expect(() => checkProjectId(`${emoji}x`, 'project')).toThrow('1-200 characters');
  });

  it('a --target the file does not name is exit 2', async () => {
    const read = { file, config: await parseProjectConfig(file, text) };
    expect(() => projectSettings({ target: 'qa' }, read)).toThrow('no target qa');
    expect(() => projectSettings({ target: 'qa' }, undefined)).toThrow('needs a gds.yml');
  });
});
