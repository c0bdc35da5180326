// The CLI's own settings and command aliases (`gds settings`, `gds alias`), as gh keeps them in config.yml:
// `settings.json` beside config.json in the config folder (core/folders.ts, GDS_CONFIG_DIR), written
// through the config module, src/auth/config.ts (its lock, an atomic replace, mode 0600; the lock library
// loads only to write). It holds no secret, so it is a file of its own: reading a setting never opens the
// file that may hold tokens.
//
// Precedence, for every key: a flag, then the environment variable, then the setting, then the default. As in
// gh, the generic variables that every program reads (BROWSER, PAGER) come after the setting: a setting made
// for gds beats the desktop's default, GDS_BROWSER/GDS_PAGER beat both.
//
// A setting is read only when it can change the answer (a prompt on a terminal, a browser opened, colour
// not decided by a variable), once per process; aliases only when the first word names no command.
import { constants, openSync, readFileSync, closeSync, fstatSync } from 'node:fs';
import { join } from 'node:path';
import type { Env } from '../auth/config.js';
import { configDir } from '../core/folders.js';
import { closest } from '../core/did-you-mean.js';
import { CliError, ExitCode } from '../core/errors.js';
import { quotedEcho } from '../core/echo.js';
import { isObject, versionedObject } from '../core/versioned-file.js';
import { rewriteConfigFolderFile } from '../auth/config.js';

export const settingsFileName = 'settings.json';
const settingsVersion = 1;

export type SettingKey = 'prompt' | 'browser' | 'pager' | 'color';

export interface SettingSpec {
  key: SettingKey;
  description: string;
  /** The values allowed; undefined: a program (any text). */
  values?: readonly string[];
  /** What applies when neither a variable nor the setting says ('' for a program: none named). */
  default: string;
  /** The default as a person reads it in `gds settings list`. */
  defaultLabel?: string;
  /** The variables that beat the setting (before it in precedence). */
  overriddenBy: readonly string[];
  /** Variables read only when the setting is not made (after it). */
  fallback?: readonly string[];
}

export const SETTINGS: readonly SettingSpec[] = [
  {
    key: 'prompt',
    description: 'Whether gds may ask questions on a terminal (disabled: as when piped).',
    values: ['enabled', 'disabled'],
    default: 'enabled',
    overriddenBy: ['GDS_PROMPT_DISABLED'],
  },
  {
    key: 'browser',
    description: 'The program that opens web pages (auth login, --web); false or none: never open one.',
    default: '',
    defaultLabel: 'the desktop opener',
    overriddenBy: ['GDS_BROWSER'],
    fallback: ['BROWSER'],
  },
  {
    key: 'pager',
    description: 'The program long output goes through on a terminal, e.g. "less -R"; cat: no pager.',
    default: '',
    defaultLabel: 'no pager',
    overriddenBy: ['GDS_PAGER'],
    fallback: ['PAGER'],
  },
  {
    key: 'color',
    description: 'auto: colour on a terminal only; always: also when piped; never: no colour.',
    values: ['auto', 'always', 'never'],
    default: 'auto',
    overriddenBy: ['NO_COLOR', 'FORCE_COLOR', 'CLICOLOR_FORCE', 'CLICOLOR'],
  },
];

export const settingKeys: readonly SettingKey[] = SETTINGS.map((s) => s.key);

export interface SettingsFile {
  version: typeof settingsVersion;
  settings: Partial<Record<SettingKey, string>>;
  /** Alias name → expansion (`list --state CERTIFIED`; `!…` a shell command). */
  aliases: Record<string, string>;
}

export function settingsPath(env: Env = process.env): string {
  return join(configDir(env), settingsFileName);
}

const emptySettings = (): SettingsFile => ({ version: settingsVersion, settings: {}, aliases: {} });

const cache = new Map<string, SettingsFile>();

/** Forgets what was read: a run of gds in the test process starts as a new process would. */
export function forgetSettings(): void {
  cache.clear();
}

/**
 * settings.json as on disk (empty when absent), read once per process and path. Like config.json, only a
 * regular file is read (a symbolic link is refused): a setting names programs gds runs.
 */
export function readSettings(env: Env = process.env): SettingsFile {
  const path = settingsPath(env);
  const known = cache.get(path);
  if (known !== undefined) return known;
  const text = readSettingsText(path);
  const parsed = text === undefined ? emptySettings() : parseSettings(text, path);
  cache.set(path, parsed);
  return parsed;
}

/** The file's text, undefined when there is none; a symbolic link or anything but a file is refused. */
function readSettingsText(path: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    if (code === 'ELOOP') throw damaged(path, 'it is a symbolic link, not a regular file');
    throw damaged(path, (error as Error).message);
  }
  try {
    if (!fstatSync(fd).isFile()) throw damaged(path, 'it is not a regular file');
    return readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
}

/**
 * The value the settings file gives `key`, for the code that applies it: undefined when it is not set, or
 * when the file cannot be read (a damaged file never stops a command; `gds settings list` reports it).
 */
export function settingValue(key: SettingKey, env: Env = process.env): string | undefined {
  try {
    return readSettings(env).settings[key];
  } catch {
    return undefined;
  }
}

/**
 * Locks settings.json, re-reads it, lets `change` edit it, and replaces it atomically (0600). A file left
 * with no setting and no alias is removed. Returns what `change` returned.
 */
export async function updateSettings<T>(
  change: (file: SettingsFile) => T,
  options: { env?: Env } = {},
): Promise<T> {
  const env = options.env ?? process.env;
  return rewriteConfigFolderFile(
    settingsFileName,
    async (path) => {
      const text = readSettingsText(path);
      const file = text === undefined ? emptySettings() : parseSettings(text, path);
      const result = change(file);
      cache.set(path, file);
      const empty = Object.keys(file.settings).length === 0 && Object.keys(file.aliases).length === 0;
      return { text: empty ? undefined : `${JSON.stringify(file, null, 2)}\n`, result };
    },
    { env },
  );
}

/** The key, or exit 2 naming the keys (and the one meant). */
export function checkSettingKey(key: string): SettingSpec {
  const spec = SETTINGS.find((s) => s.key === key);
  if (spec !== undefined) return spec;
  const near = closest(key, settingKeys);
  throw new CliError(`Unknown setting: ${quotedEcho(key)}.`, {
    exitCode: ExitCode.Usage,
    code: 'unknown_setting',
    suggestion:
      (near === undefined ? '' : `Did you mean \`${near}\`? `) +
      `The settings are ${settingKeys.join(', ')}.`,
  });
}

/** The value as stored, or exit 2 naming the allowed values (and the one meant). */
export function checkSettingValue(spec: SettingSpec, value: string, command = 'gds settings set'): string {
  const trimmed = value.trim();
  if (spec.values === undefined) {
    if (trimmed === '') {
      throw new CliError(`The ${spec.key} setting needs a program.`, {
        exitCode: ExitCode.Usage,
        code: 'invalid_setting_value',
        suggestion: `Name one (${command} ${spec.key} …), or remove the setting: gds settings unset ${spec.key}.`,
      });
    }
    return trimmed;
  }
  if (spec.values.includes(trimmed)) return trimmed;
  const near = closest(trimmed, spec.values);
  throw new CliError(`${quotedEcho(value)} is not a value of ${spec.key}.`, {
    exitCode: ExitCode.Usage,
    code: 'invalid_setting_value',
    suggestion:
      (near === undefined ? '' : `Did you mean \`${command} ${spec.key} ${near}\`? `) +
      `Allowed: ${spec.values.join(', ')}.`,
  });
}

function parseSettings(text: string, path: string): SettingsFile {
  const value = versionedObject(text, path, { kind: 'settings', version: settingsVersion, damaged: damaged });
  const settings = value.settings ?? {};
  const aliases = value.aliases ?? {};
  if (!isObject(settings)) throw damaged(path, '"settings" is not an object');
  if (!isObject(aliases)) throw damaged(path, '"aliases" is not an object');
  for (const [key, setting] of Object.entries(settings)) {
    const spec = SETTINGS.find((s) => s.key === key);
    if (spec === undefined) throw damaged(path, `"settings" has an unknown key ${JSON.stringify(key)}`);
    if (typeof setting !== 'string' || (spec.values !== undefined && !spec.values.includes(setting)))
      throw damaged(path, `"settings.${key}" is not one of ${spec.values?.join(', ') ?? 'a program'}`);
  }
  for (const [name, expansion] of Object.entries(aliases)) {
    if (typeof expansion !== 'string' || expansion.trim() === '')
      throw damaged(path, `alias ${JSON.stringify(name)} has no expansion`);
  }
  return {
    version: settingsVersion,
    settings: settings as SettingsFile['settings'],
    aliases: aliases as Record<string, string>,
  };
}

function damaged(path: string, reason: string): CliError {
  return new CliError(`The gds settings file ${path} is damaged: ${reason}.`, {
    exitCode: ExitCode.Usage,
    code: 'settings_invalid',
    suggestion: `Fix it by hand, or remove it (rm ${path}): it holds only settings and aliases, no credentials.`,
  });
}

/** One key as `gds settings get|list` print it under --json. */
export interface SettingRecord {
  key: SettingKey;
  /** The setting, else the default. */
  value: string;
  source: 'settings' | 'default';
  default: string;
  allowedValues: readonly string[] | null;
  /** The variable set in this environment that beats the setting (precedence: flag, variable, setting). */
  overriddenBy: string | null;
  description: string;
}

export function settingRecord(spec: SettingSpec, file: SettingsFile, env: Env = process.env): SettingRecord {
  const stored = file.settings[spec.key];
  return {
    key: spec.key,
    value: stored ?? spec.default,
    source: stored === undefined ? 'default' : 'settings',
    default: spec.default,
    allowedValues: spec.values ?? null,
    overriddenBy: spec.overriddenBy.find((name) => variableSet(name, env)) ?? null,
    description: spec.description,
  };
}

/**
 * FORCE_COLOR as gds was started with: off a terminal, main() sets FORCE_COLOR=0 for oclif's own colours
 * (colourOnlyOnTerminals), which is not the user's doing. This module loads before that.
 */
const startedWith = { FORCE_COLOR: process.env.FORCE_COLOR };

/** Set so that it decides: non-empty (CLICOLOR only as 0, the one value gds reads). */
function variableSet(name: string, env: Env): boolean {
  const value = name === 'FORCE_COLOR' && env === process.env ? startedWith.FORCE_COLOR : env[name];
  if (name === 'CLICOLOR') return value === '0';
  if (name === 'FORCE_COLOR') return value !== undefined;
  return value !== undefined && value.trim() !== '';
}
