// `gds gate diff` run as bin/run.js runs it, in the test process (runInProcess).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../helpers/run-in-process.js';

const before =
  'patternChecks:\n  - name: email_format\n    column: email\n    regex: "^.+@.+$"\n    severity: error\n';
const reformatted =
  "# reviewed\npatternChecks:\n- severity: error\n  regex: '^.+@.+$'\n  name: email_format\n  column: email\n";
const changed = before.replace('severity: error', 'severity: warn');
const hostile = before.replace('email_format', 'email_format\u001b]0;owned\u0007\u001b[2J');

let dir: string;
const file = (name: string) => join(dir, name);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gds-diff-'));
  await Promise.all([
    writeFile(file('before.yml'), before),
    writeFile(file('same.yml'), before),
    writeFile(file('reformatted.yml'), reformatted),
    writeFile(file('changed.yml'), changed),
    writeFile(file('hostile.yml'), hostile),
    writeFile(file('broken.yml'), 'patternChecks:\n  - name: a\n  name: b\n'),
  ]);
});

function jsonLines(text: string): unknown[] {
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as unknown);
}

describe('gds gate diff, two local files', () => {
  it('exits 0 and prints nothing when the files are identical', async () => {
    const r = await runInProcess(['gate', 'diff', '-f', file('same.yml'), '--against', file('before.yml')]);
    expect(r).toMatchObject({ code: 0, stdout: '', stderr: '' });
  });

  it('exits 1 with a plain unified diff on stdout (no colour off a TTY) and nothing on stderr', async () => {
    const r = await runInProcess([
      'gate',
      'diff',
      '-f',
      file('changed.yml'),
      '--against',
      file('before.yml'),
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('');
    expect(r.stdout.split('\n')).toEqual([
      `--- ${file('before.yml')}`,
      `+++ ${file('changed.yml')}`,
      '@@ -2,4 +2,4 @@',
      '   - name: email_format',
      '     column: email',
      '     regex: "^.+@.+$"',
      '-    severity: error',
      '+    severity: warn',
      '',
    ]);
  });

  it('under --json prints exactly one NDJSON line and exits 1 when different', async () => {
    const r = await runInProcess([
      'gate',
      'diff',
      '-f',
      file('changed.yml'),
      '--against',
      file('before.yml'),
      '--json',
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('');
    const lines = jsonLines(r.stdout);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      identical: false,
      semantic: false,
      hunks: [{ oldStart: 2, oldLines: 4, newStart: 2, newLines: 4 }],
    });
  });

  it('--semantic ignores key order, quoting and comments (exit 0), text mode does not (exit 1)', async () => {
    const args = ['gate', 'diff', '-f', file('reformatted.yml'), '--against', file('before.yml'), '--json'];
    const text = await runInProcess(args);
    const semantic = await runInProcess([...args, '--semantic']);
    expect(text.code).toBe(1);
    expect(semantic.code).toBe(0);
    expect(jsonLines(semantic.stdout)).toEqual([{ identical: true, semantic: true, hunks: [] }]);
  });

  it('reads -f - from stdin', async () => {
    const r = await runInProcess(['gate', 'diff', '-f', '-', '--against', file('before.yml')], {
      input: changed,
    });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('+++ <stdin>\n');
    expect(r.stdout).toContain('+    severity: warn\n');
  });

  it('GDS_CONTENT_TYPE=json works like --json', async () => {
    const r = await runInProcess(['gate', 'diff', '-f', file('same.yml'), '--against', file('before.yml')], {
      env: { GDS_CONTENT_TYPE: 'json' },
    });
    expect(r.code).toBe(0);
    expect(jsonLines(r.stdout)).toEqual([{ identical: true, semantic: false, hunks: [] }]);
  });

  it('strips terminal control sequences from file contents in human output, keeps them exact in JSON', async () => {
    const args = ['gate', 'diff', '-f', file('hostile.yml'), '--against', file('before.yml')];
    const human = await runInProcess(args);
    expect(human.code).toBe(1);
    expect(human.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    expect(human.stdout).toContain('+  - name: email_format\n');
    const json = await runInProcess([...args, '--json']);
    const [line] = jsonLines(json.stdout) as Array<{ hunks: Array<{ lines: string[] }> }>;
    expect(line?.hunks[0]?.lines).toContain('+  - name: email_format\u001b]0;owned\u0007\u001b[2J');
  });
});

describe('gds gate diff, bad input (exit 2, nothing on stdout)', () => {
  it('names a missing file and says what to do', async () => {
    const r = await runInProcess([
      'gate',
      'diff',
      '-f',
      file('missing.yml'),
      '--against',
      file('before.yml'),
    ]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      `Error: No such file: ${file('missing.yml')}\nCheck the path given to -f, or use -f - to read stdin.\n`,
    );
  });

  it('an empty -f - (a closed pipe) or a file of comments only declares nothing: exit 2, as gate validate says', async () => {
    const piped = await runInProcess(['gate', 'diff', '-f', '-', '--against', file('before.yml')], {
      input: '',
    });
    expect(piped.code).toBe(2);
    expect(piped.stdout).toBe('');
    expect(piped.stderr).toContain('Error: <stdin>: the file declares nothing;');
    await writeFile(file('comments.yml'), '# nothing yet\n\n');
    const against = await runInProcess([
      'gate',
      'diff',
      '-f',
      file('before.yml'),
      '--against',
      file('comments.yml'),
      '--json',
    ]);
    expect(against.code).toBe(2);
    expect(jsonLines(against.stderr)[0]).toMatchObject({ error: { code: 'empty_gate1' } });
  });

  it('under --json: one error line on stderr', async () => {
    const r = await runInProcess(['gate', 'diff', '-f', dir, '--against', file('before.yml'), '--json']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(jsonLines(r.stderr)).toEqual([
      {
        error: {
          code: 'input_is_directory',
          message: `${dir} is a directory, not a file.`,
          suggestion: expect.any(String) as unknown,
          details: null,
        },
      },
    ]);
  });

  it('reports a YAML error in semantic mode with file:line:col', async () => {
    const args = ['gate', 'diff', '-f', file('broken.yml'), '--against', file('before.yml'), '--semantic'];
    const human = await runInProcess(args);
    expect(human.code).toBe(2);
    expect(human.stdout).toBe('');
    expect(human.stderr).toContain(
      `Error: ${file('broken.yml')}:3:1: All mapping items must start at the same column`,
    );
    const json = await runInProcess([...args, '--json']);
    expect(json.code).toBe(2);
    expect(jsonLines(json.stderr)).toMatchObject([
      { error: { code: 'invalid_yaml', details: { file: file('broken.yml'), line: 3, col: 1 } } },
    ]);
  });

  it('a table id compares with the server: with no credentials it says how to get them (exit 3), nothing on stdout', async () => {
    for (const args of [
      ['gate', 'diff', 't_42', '-f', file('before.yml')],
      ['gate', 'diff', 't_42', '--from', 'v1', '--to', 'v2', '--json'],
    ]) {
      const r = await runInProcess(args, { env: { GDS_CONFIG_DIR: file('no-config') } });
      expect(r.code).toBe(3);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/No API base URL/);
    }
  });

  it('mixing a table id with --against, or -f with --from/--to, is a usage error', async () => {
    for (const args of [
      ['gate', 'diff', 't_42', '-f', file('before.yml'), '--against', file('same.yml')],
      ['gate', 'diff', 't_42', '-f', file('before.yml'), '--from', 'v1', '--to', 'v2'],
      ['gate', 'diff', 't_42'],
      ['gate', 'diff', 't_42', '--from', 'x1', '--to', 'v2'],
    ]) {
      const r = await runInProcess(args, { env: { GDS_CONFIG_DIR: file('no-config') } });
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
    }
  });

  it('refuses --from without --to as a usage error', async () => {
    const r = await runInProcess(['gate', 'diff', 't_42', '--from', 'v1', '--json']);
    expect(r.code).toBe(2);
    expect(jsonLines(r.stderr)).toMatchObject([{ error: { code: 'usage' } }]);
  });
});

// §4.9: gate diff's "Exit code 0 identical, 1 different": a failure must not read as a difference, as
// other commands' failures exit 1 (a status gds has no code for, a config file it cannot use, a bug).
describe('gds gate diff exits 1 for a difference only', () => {
  it('a service answering a status gds has no exit code for (410) ends with 2, not 1', async () => {
    const standIn = createServer((_req, res) => {
      res.writeHead(410, { 'content-type': 'application/json' }).end('{}');
    });
    await new Promise<void>((resolve) => standIn.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(standIn.address() as AddressInfo).port}/v1`;
    try {
      for (const args of [
        ['gate', 'diff', 'tbl_42', '-f', file('before.yml')],
        ['gate', 'diff', 'tbl_42', '--from', 'v1', '--to', 'v2', '--json'],
      ]) {
        const r = await runInProcess([...args, '--base', base, '--token', 'cli_standInToken42'], {
          env: { GDS_CONFIG_DIR: file('no-config') },
        });
        expect(r.code, r.stderr).toBe(2);
        expect(r.stdout).toBe('');
        expect(r.stderr).toMatch(/410 Gone/);
      }
    } finally {
      await new Promise((resolve) => standIn.close(resolve));
    }
  });

  it('a config file gds cannot use ends with 2, not 1', async () => {
    const configDir = file('config-is-a-folder');
    await mkdir(join(configDir, 'config.json'), { recursive: true });
    const r = await runInProcess(['gate', 'diff', 'tbl_42', '-f', file('before.yml'), '--json'], {
      env: { GDS_CONFIG_DIR: configDir, SERVICE_TOKEN: undefined, SERVICE_API_URL: undefined },
    });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stdout).toBe('');
    expect(jsonLines(r.stderr)).toMatchObject([{ error: { code: 'config_not_regular_file' } }]);
  });

  it('a --jq filter failing on the answer of two identical files ends with 2, not 1', async () => {
    const r = await runInProcess([
      'gate',
      'diff',
      '-f',
      file('same.yml'),
      '--against',
      file('before.yml'),
      '--jq',
      '.identical | error',
    ]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stdout).toBe('');
    expect(jsonLines(r.stderr)).toMatchObject([{ error: { code: 'jq_failed' } }]);
  });
});

describe('gds gate diff <table> without -f or --from', () => {
  it('says how to compare, with the table the person named', async () => {
    const r = await runInProcess(['gate', 'diff', 'tbl_orders'], {
      env: { GDS_CONFIG_DIR: file('no-config'), SERVICE_TOKEN: undefined, SERVICE_API_URL: undefined },
    });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('gds gate diff tbl_orders -f gate1.yml');
    expect(r.stderr).not.toContain('t_42');
  });
});
