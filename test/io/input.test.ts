import { mkdtemp, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { beforeAll, describe, expect, it } from 'vitest';
import { CliError } from '../../src/core/errors.js';
import {
  firstInvalidUtf8,
  readArtifactText,
  readBoundedText,
  readGate1Text,
  readTextInput,
} from '../../src/io/input.js';
import { ARTIFACT_BODY_LIMIT_BYTES, MAX_MAPPING_KEYS } from '../../src/core/artifact-bounds.js';

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

describe('readBoundedText', () => {
  const options = { maxBytes: 100, what: 'the test input' };

  it('reads a regular file, and a symlink to one', async () => {
    await writeFile(join(dir, 'small.yml'), 'a: 1\n');
    await symlink(join(dir, 'small.yml'), join(dir, 'link.yml'));
    expect(await readBoundedText(join(dir, 'link.yml'), options)).toEqual({
      name: join(dir, 'link.yml'),
      text: 'a: 1\n',
    });
  });

  it('refuses a file over the limit from its size, naming the limit', async () => {
    await writeFile(join(dir, '101.txt'), 'x'.repeat(101));
    const error = await failure(readBoundedText(join(dir, '101.txt'), options));
    expect(error).toMatchObject({
      exitCode: 2,
      code: 'input_too_large',
      details: { bytes: 101, limit: 100 },
    });
    expect(error.message).toBe(
      `${join(dir, '101.txt')} is 101 bytes, over the limit of 100 bytes for the test input.`,
    );
  });

  it('reads stdin up to the limit and refuses one byte more', async () => {
    const ok = await readBoundedText('-', {
      ...options,
      stdin: Readable.from([Buffer.alloc(60, 97), 'b'.repeat(40)]),
    });
    expect(ok.text).toBe('a'.repeat(60) + 'b'.repeat(40));
    const error = await failure(
      readBoundedText('-', {
        ...options,
        stdin: Readable.from([Buffer.alloc(60, 97), Buffer.alloc(41, 98)]),
      }),
    );
    expect(error).toMatchObject({ exitCode: 2, code: 'input_too_large', details: { limit: 100 } });
  });

  it('refuses a device and a directory', async () => {
    expect(await failure(readBoundedText('/dev/null', options))).toMatchObject({ code: 'input_not_a_file' });
    expect(await failure(readBoundedText(dir, options))).toMatchObject({ code: 'input_is_directory' });
    expect(await failure(readBoundedText(join(dir, 'none.yml'), options))).toMatchObject({
      code: 'input_not_found',
    });
  });

  it('refuses bytes that are not UTF-8 with their offset and line; keeps a UTF-8 file whole', async () => {
    await writeFile(
      join(dir, 'bad.yml'),
      Buffer.concat([Buffer.from('a: é\nb: '), Buffer.from([0xed, 0xa0, 0x80])]),
    );
    const error = await failure(readBoundedText(join(dir, 'bad.yml'), options));
    expect(error).toMatchObject({ code: 'input_not_utf8', details: { byteOffset: 9, line: 2 } });
    await writeFile(join(dir, 'good.yml'), '\ufeffa: "é ✓ 𝄞"\n');
    expect((await readBoundedText(join(dir, 'good.yml'), options)).text).toBe('\ufeffa: "é ✓ 𝄞"\n');
  });

  it('readArtifactText and readGate1Text use the service’s limits', async () => {
    await writeFile(
      join(dir, 'mapping.yml'),
      `x:\n${Array.from({ length: 12_000 }, (_, i) => `  k${i}: v\n`).join('')}`,
    );
    await writeFile(join(dir, 'huge.sql'), `-- ${'x'.repeat(ARTIFACT_BODY_LIMIT_BYTES)}\n`);
    expect(await failure(readArtifactText(join(dir, 'huge.sql'), 'sql'))).toMatchObject({
      code: 'input_too_large',
      details: { limit: ARTIFACT_BODY_LIMIT_BYTES },
    });
    expect(await failure(readGate1Text(join(dir, 'mapping.yml')))).toMatchObject({
      exitCode: 2,
      code: 'gate1_too_large',
      details: { keys: 12_000, limit: MAX_MAPPING_KEYS },
    });
  });
});

describe('firstInvalidUtf8', () => {
  it('agrees with a strict UTF-8 decoder on random bytes, and points at the first bad sequence', () => {
    const strict = new TextDecoder('utf-8', { fatal: true });
    let seed = 42;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    for (let round = 0; round < 5_000; round++) {
      const bytes = Uint8Array.from({ length: 1 + Math.floor(random() * 12) }, () =>
        random() < 0.5 ? Math.floor(random() * 128) : 0x80 + Math.floor(random() * 128),
      );
      const invalid = firstInvalidUtf8(bytes);
      let valid = true;
      try {
        strict.decode(bytes);
      } catch {
        valid = false;
      }
      expect(invalid === undefined).toBe(valid);
      if (invalid !== undefined) {
        // Everything before the offset decodes; the sequence starting there does not.
        expect(() => strict.decode(bytes.subarray(0, invalid))).not.toThrow();
      }
    }
    expect(firstInvalidUtf8(Buffer.from([0x61, 0xc0, 0x80]))).toBe(1); // overlong
    expect(firstInvalidUtf8(Buffer.from([0xf4, 0x90, 0x80, 0x80]))).toBe(0); // over U+10FFFF
    expect(firstInvalidUtf8(Buffer.from('ok ✓', 'utf8'))).toBeUndefined();
  });
});
