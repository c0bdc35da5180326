// `gds gate validate -f FILE [--json]` runs without oclif (src/cli/direct.ts, issue 24): for every kind of
// file a person or CI hands it, it answers exactly as the command does through oclif (GDS_DIRECT=0 sends
// the same line there): exit code, stdout and stderr, colours, secrets masked on stderr. Runs on
// `node bin/run.js` and, in CI's second pass, on dist/gds (its own bundle of direct runs).
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoGate1 } from '../../scripts/demo-gate1.js';
import { cliUnderTest, ensureBuilt, repoRoot, runCli } from '../cli/helpers/cli-process.js';
import { needs } from '../helpers/skip.js';

let dir: string;
const token = 'cli_directrunsecret0123456789';

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gds-direct-'));
  await ensureBuilt();
  const files: Record<string, string> = {
    'demo.yml': demoGate1,
    'plain.yml': 'patternChecks:\n  - {name: code, column: code, regex: "^[A-Z]+$", severity: WARN}\n',
    'parser.yml': 'customPredicates:\n  - {name: p, sql: "lower(code) > \'a\'", severity: WARN}\n',
    'unsafe.yml': 'customPredicates:\n  - {name: p, sql: "pg_sleep(10) IS NULL", severity: HARD_FAIL}\n',
    'schema.yml': 'patternChecks:\n  - {name: code, regex: 7}\nsurprise: true\n',
    'syntax.yml': 'patternChecks:\n  - name: [unclosed\n',
    'regex.yml': 'patternChecks:\n  - {name: r, column: code, regex: "(a+)+$", severity: WARN}\n',
    'empty.yml': '',
    [`${token}.yml`]: 'patternChecks: []\n',
  };
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
  await writeFile(join(dir, 'latin1.yml'), Buffer.from([0x6e, 0x61, 0x6d, 0x65, 0x3a, 0x20, 0xe9, 0x0a]));
  await mkdir(join(dir, 'folder.yml'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const cases: Array<[string, string[], { input?: string; env?: Record<string, string> }?]> = [
  ['the demo gate1.yml, predicates and all', ['-f', 'demo.yml']],
  ['the demo gate1.yml under --json', ['-f', 'demo.yml', '--json']],
  ['--json first, --file=', ['--json', '--file=plain.yml']],
  ['a predicate only PostgreSQL’s parser reads', ['--file', 'parser.yml']],
  ['a predicate the SQL checks refuse', ['-f', 'unsafe.yml']],
  ['a file the schema refuses', ['-f', 'schema.yml']],
  ['a file the schema refuses, under --json', ['-f', 'schema.yml', '--json']],
  ['YAML that does not parse', ['-f', 'syntax.yml']],
  ['a regex that may backtrack', ['-f', 'regex.yml']],
  ['an empty file', ['-f', 'empty.yml']],
  ['a file that is not UTF-8', ['-f', 'latin1.yml']],
  ['no such file', ['-f', 'missing.yml']],
  ['no such file, under --json', ['-f', 'missing.yml', '--json']],
  ['a folder', ['-f', 'folder.yml']],
  ['stdin', ['-f', '-'], { input: demoGate1 }],
  ['GDS_JSON=1', ['-f', 'plain.yml'], { env: { GDS_JSON: '1' } }],
  ['colour forced', ['-f', 'schema.yml'], { env: { FORCE_COLOR: '1' } }],
  ['a token in the file name, masked on stderr', ['-f', `${token}.yml`], { env: { SERVICE_TOKEN: token } }],
];

describe('gate validate run directly', () => {
  it.each(cases)('answers %s as the command does through oclif', async (_, args, options = {}) => {
    const line = ['gate', 'validate', ...args];
    const run = (env: Record<string, string>) =>
      runCli(line, { cwd: dir, ...options, env: { ...options.env, ...env } });
    const [direct, oclif] = await Promise.all([run({}), run({ GDS_DIRECT: '0' })]);
    expect(direct.code, direct.stderr).not.toBeNull();
    expect({ code: direct.code, stdout: direct.stdout, stderr: direct.stderr }).toEqual({
      code: oclif.code,
      stdout: oclif.stdout,
      stderr: oclif.stderr,
    });
    expect(direct.stderr).not.toContain(token);
  });

  it(
    'loads none of oclif (node bin/run.js: the executable is checked in test/binary)',
    needs(
      cliUnderTest === undefined
        ? undefined
        : 'a Node.js --import hook cannot load into the single executable (test/binary checks its modules)',
    ),
    async () => {
      const record = join(dir, 'modules.json');
      const r = await runCli(['gate', 'validate', '-f', 'demo.yml', '--json'], {
        cwd: dir,
        nodeArgs: ['--import', join(repoRoot, 'test/cli/fixtures/record-loaded-modules.mjs')],
        env: { GDS_TEST_LOADED_MODULES: record },
      });
      expect(r.code, r.stderr).toBe(0);
      const modules = JSON.parse(await readFile(record, 'utf8')) as string[];
      expect(modules.some((url) => url.includes('/node_modules/yaml/'))).toBe(true);
      expect(modules.filter((url) => url.includes('/node_modules/@oclif/'))).toEqual([]);
    },
  );
});
