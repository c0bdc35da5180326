import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { beforeAll, describe, expect, it } from 'vitest';
import { CliError } from '../../src/cli/errors.js';
import { readTextInput } from '../../src/cli/input.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gds-input-'));
  await writeFile(join(dir, 'gate1.yml'), 'patternChecks: []\n');
});

async function failure(promise: Promise<unknown>): Promise<CliError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CliError);
  return error as CliError;
}

describe('readTextInput', () => {
  it('reads a file', async () => {
    const path = join(dir, 'gate1.yml');
    expect(await readTextInput(path)).toEqual({ name: path, text: 'patternChecks: []\n' });
  });

  it('reads stdin for -', async () => {
    const stdin = Readable.from(['a: 1\n', 'b: 2\n']);
    expect(await readTextInput('-', { stdin })).toEqual({ name: '<stdin>', text: 'a: 1\nb: 2\n' });
  });

  it('refuses a terminal stdin instead of waiting for typing', async () => {
    const stdin = Object.assign(Readable.from([]), { isTTY: true });
    const error = await failure(readTextInput('-', { stdin, flag: '-f' }));
    expect(error).toMatchObject({ exitCode: 2, code: 'stdin_is_terminal' });
    expect(error.suggestion).toContain('-f -');
  });

  it('says which file is missing and how to give one', async () => {
    const error = await failure(readTextInput(join(dir, 'nope.yml'), { flag: '--against' }));
    expect(error).toMatchObject({ exitCode: 2, code: 'input_not_found' });
    expect(error.message).toContain('nope.yml');
    expect(error.suggestion).toContain('--against');
  });

  it('refuses a directory', async () => {
    const error = await failure(readTextInput(dir));
    expect(error).toMatchObject({ exitCode: 2, code: 'input_is_directory' });
  });
});
