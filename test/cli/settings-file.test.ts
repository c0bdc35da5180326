// settings.json opened wrong (cli/settings.ts through core/versioned-file.ts): each way the file can be wrong is
// named with its fix and exit 2, and neither a read nor an update changes the file.
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CliError } from '../../src/core/errors.js';
import { readSettings, settingsPath, updateSettings } from '../../src/cli/settings.js';

async function settingsHolding(text: string): Promise<NodeJS.ProcessEnv> {
  const env = { GDS_CONFIG_DIR: join(await mkdtemp(join(tmpdir(), 'gds-settings-')), 'gds') };
  await mkdir(env.GDS_CONFIG_DIR, { recursive: true });
  await writeFile(settingsPath(env), text, { mode: 0o600 });
  return env;
}

function thrownBy(run: () => unknown): CliError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(CliError);
    return error as CliError;
  }
  throw new Error('expected a CliError, and nothing was thrown');
}

async function rejectionOf(promise: Promise<unknown>): Promise<CliError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CliError);
  return error as CliError;
}

describe('a damaged settings.json: named with its fix, exit 2, left as it was', () => {
  const cases: Array<[string, string, RegExp]> = [
    ['half-written JSON', '{"version":1,"settings":{"col', /it is not valid JSON \(/],
    ['not an object', '["color","never"]', /it is not a JSON object/],
    ['no version', '{"settings":{"color":"never"}}', /"version" is not 1/],
    ['a version that is not a number', '{"version":"1","settings":{}}', /"version" is not 1/],
    // V8 quotes the text around an unexpected token: the error says the token alone, not the file's text.
    [
      'an expansion not in quotes',
      '{"version":1,"aliases":{"ls": list --state CERTIFIED}}',
      /it is not valid JSON \(Unexpected token 'l' at line 1 column 31\)\.$/,
    ],
    // V8 says no place for an unexpected token: gds says its line and column, in a long file as a person keeps.
    [
      'an expansion not in quotes on line 203, after a byte order mark',
      `\uFEFF{\n  "version": 1,\n  "aliases": {\n${Array.from({ length: 199 }, (_, i) => `    "a${i}": "list",\n`).join('')}    "ls": list --state CERTIFIED\n  }\n}\n`,
      /it is not valid JSON \(Unexpected token 'l' at line 203 column 11\)\.$/,
    ],
    // V8's own place for the errors it places, once.
    [
      'a comma before a closing brace',
      '{\n  "version": 1,\n}\n',
      /it is not valid JSON \(Expected double-quoted property name in JSON at position 18 \(line 3 column 1\)\)\.$/,
    ],
  ];
  for (const [name, text, reason] of cases) {
    it(name, async () => {
      const env = await settingsHolding(text);
      const path = settingsPath(env);
      const read = thrownBy(() => readSettings(env));
      expect(read).toMatchObject({ exitCode: 2, code: 'settings_invalid' });
      expect(read.message).toContain(`The gds settings file ${path} is damaged:`);
      expect(read.message).toMatch(reason);
      expect(read.suggestion).toBe(
        `Fix it by hand, or remove it (rm ${path}): it holds only settings and aliases, no credentials.`,
      );
      const update = await rejectionOf(
        updateSettings(
          (file) => {
            file.settings.color = 'always';
          },
          { env },
        ),
      );
      expect(update).toMatchObject({ exitCode: 2, code: 'settings_invalid' });
      expect(await readFile(path, 'utf8')).toBe(text);
    });
  }

  it('a file from a newer gds asks for an upgrade, and an update leaves it as it was', async () => {
    const text = '{"version":2,"settings":{"color":"never"},"theme":"dark"}';
    const env = await settingsHolding(text);
    const path = settingsPath(env);
    const read = thrownBy(() => readSettings(env));
    expect(read).toMatchObject({ exitCode: 2, code: 'settings_too_new' });
    expect(read.message).toBe(`${path} was written by a newer gds (settings version 2).`);
    expect(read.suggestion).toBe('Upgrade gds, or point GDS_CONFIG_DIR at another folder.');
    const update = await rejectionOf(
      updateSettings(
        (file) => {
          file.settings.color = 'always';
        },
        { env },
      ),
    );
    expect(update).toMatchObject({ code: 'settings_too_new' });
    expect(await readFile(path, 'utf8')).toBe(text);
  });
});

it("reads a settings.json saved with a byte order mark (an editor's UTF-8) as the file, and keeps the aliases", async () => {
  const env = await settingsHolding('\uFEFF{"version":1,"aliases":{"ls":"list --state CERTIFIED"}}');
  expect(readSettings(env).aliases).toEqual({ ls: 'list --state CERTIFIED' });
  await updateSettings(
    (file) => {
      file.settings.color = 'never';
    },
    { env },
  );
  expect(JSON.parse(await readFile(settingsPath(env), 'utf8'))).toMatchObject({
    settings: { color: 'never' },
    aliases: { ls: 'list --state CERTIFIED' },
  });
});
