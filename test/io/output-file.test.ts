// Files commands write (gate get -o, env promote --bundle-out): atomic, never over an existing file
// without force, with the mode asked, and no temporary file left behind whatever happens.
import { spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeEach, describe, expect, it } from 'vitest';
import { CliError } from '../../src/core/errors.js';
import { writeDocument } from '../../src/cli/gate-output.js';
import { Output } from '../../src/cli/output.js';
import { writeOutputFile } from '../../src/io/output-file.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gds-out-'));
});

describe('writeOutputFile', () => {
  it('a process that exits while the file is written (Ctrl-C) leaves no temporary file behind', async () => {
    // A node process of its own, which exits (130, as gds on Ctrl-C) while the temporary file is synced.
    const code = [
      "import { open } from 'node:fs/promises';",
      "import { writeOutputFile } from './src/io/output-file.ts';",
      "const probe = await open('/dev/null');",
      'const proto = Object.getPrototypeOf(probe);',
      'await probe.close();',
      'proto.sync = function () { process.exit(130); };',
      `await writeOutputFile(${JSON.stringify(join(dir, 'bundle.json'))}, 'secret', { force: false, flag: '--bundle-out', mode: 0o600 });`,
    ].join('\n');
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exitCode = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(exitCode, stderr).toBe(130);
    expect(await readdir(dir)).toEqual([]);
  });

  it('writes a new file 0644 and leaves nothing else in the folder', async () => {
    const path = join(dir, 'gate1.yml');
    await writeOutputFile(path, 'a: 1\n', { force: false, flag: '-o' });
    expect(await readFile(path, 'utf8')).toBe('a: 1\n');
    expect((await stat(path)).mode & 0o777).toBe(0o644);
    expect(await readdir(dir)).toEqual(['gate1.yml']);
  });

  it('refuses a folder with and without force (exit 2, output_is_folder), suggesting a file in it', async () => {
    const path = join(dir, 'gates');
    await mkdir(path);
    for (const force of [false, true]) {
      const error = await writeOutputFile(path, 'a: 1\n', { force, flag: '-o', example: 'gate1.yml' }).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(CliError);
      expect((error as CliError).exitCode).toBe(2);
      expect((error as CliError).code).toBe('output_is_folder');
      expect((error as CliError).message).toBe(`${path} is a folder; -o takes the path of a file.`);
      expect((error as CliError).suggestion).toBe(`Give -o a file path, such as ${join(path, 'gate1.yml')}.`);
    }
    expect(await readdir(dir)).toEqual(['gates']);
    expect(await readdir(path)).toEqual([]);
  });

  it('refuses an existing file without force (exit 2, file untouched), replaces it with force', async () => {
    const path = join(dir, 'gate1.yml');
    await writeFile(path, 'mine\n');
    const error = await writeOutputFile(path, 'theirs\n', { force: false, flag: '-o' }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(CliError);
    expect((error as CliError).exitCode).toBe(2);
    expect((error as CliError).suggestion).toContain('--force');
    expect(await readFile(path, 'utf8')).toBe('mine\n');
    expect(await readdir(dir)).toEqual(['gate1.yml']);
    await writeOutputFile(path, 'theirs\n', { force: true, flag: '-o' });
    expect(await readFile(path, 'utf8')).toBe('theirs\n');
    expect(await readdir(dir)).toEqual(['gate1.yml']);
  });

  it('replacing a file (force) never widens its mode: a private gate1.yml stays 0600, a secret over a 0644 file is 0600', async () => {
    const path = join(dir, 'gate1.yml');
    await writeFile(path, 'mine\n', { mode: 0o600 });
    await writeOutputFile(path, 'theirs\n', { force: true, flag: '-o' });
    expect(await readFile(path, 'utf8')).toBe('theirs\n');
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    const bundle = join(dir, 'bundle.json');
    await writeFile(bundle, '{}', { mode: 0o644 });
    await chmod(bundle, 0o644);
    await writeOutputFile(bundle, '{"secret":1}', { force: true, flag: '--bundle-out', mode: 0o600 });
    expect((await stat(bundle)).mode & 0o777).toBe(0o600);
    expect((await readdir(dir)).sort()).toEqual(['bundle.json', 'gate1.yml']);
  });

  it('a folder that does not exist is exit 2 naming the flag', async () => {
    const error = await writeOutputFile(join(dir, 'no', 'x.json'), '{}', {
      force: false,
      flag: '--bundle-out',
    }).catch((e: unknown) => e);
    expect((error as CliError).exitCode).toBe(2);
    expect((error as CliError).suggestion).toContain('--bundle-out');
  });
});

describe('writeDocument', () => {
  const text = 'name: "a\u001b]0;title\u0007b"\n';
  function output(isTTY: boolean) {
    let written = '';
    const stdout = { isTTY, write: (chunk: string) => (written += chunk) };
    return {
      out: new Output({ json: false, stdout, stderr: { write: () => true } }),
      written: () => written,
    };
  }

  it('into a pipe: byte for byte, so it can be applied again', async () => {
    const { out, written } = output(false);
    await writeDocument(out, text);
    expect(written()).toBe(text);
  });

  it('to a terminal: without the control sequences', async () => {
    const { out, written } = output(true);
    await writeDocument(out, text);
    expect(written()).toBe('name: "ab"\n');
  });
});
