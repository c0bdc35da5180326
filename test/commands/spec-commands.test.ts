// Every client command of the service's spec (§4.9, where the client is `cli`), with the flags and arguments
// it names: users' scripts are written from that table, so each must parse in gds under the same name (or as
// an alias of a better one), a flag the spec requires required here too, and the global options
// (--token, --base, --profile, --json) on every command. What the commands do is tested where each is.
import { describe, expect, it } from 'vitest';
import { COMMAND_LOADERS } from '../../src/commands/loaders.js';

interface SpecCommand {
  /** Positional arguments, in order. */
  args?: number;
  /** Flags as the spec writes them (`-o` for a short one); `!` after a name: the spec requires it. */
  flags?: string[];
}

/** §4.9's tables, as written there. */
const SPEC: Record<string, SpecCommand> = {
  'auth login': { flags: ['--profile', '--force'] },
  'auth set': { flags: ['--token', '--base'] },
  'auth status': {},
  'auth logout': { flags: ['--profile'] },
  whoami: {},
  list: {},
  status: { args: 1, flags: ['--watch'] },
  push: { args: 1, flags: ['--connector', '--source', '--replace', '--wait'] },
  delete: { args: 1, flags: ['--yes'] },
  'connectors list': {},
  'versions list': { args: 1 },
  'versions restore': { args: 1, flags: ['--to!', '--reason!', '--env'] },
  certify: { args: 1 },
  reject: { args: 1, flags: ['--reason!'] },
  'quarantine list': {},
  'quarantine open': { args: 1 },
  'recertification list': {},
  'recertification dismiss': { args: 1 },
  'config list': {},
  'config set': { args: 2 },
  'config history': { args: 1 },
  'contract set-intent': {
    args: 1,
    flags: ['--intent', '--allowed-consumers', '--grain-type', '--grain-key', '--grain', '--meaning'],
  },
  'env promote': { args: 1, flags: ['--to!', '--dest-profile', '--bundle-out', '--bundle-in'] },
  'gate get': { args: 1, flags: ['-o'] },
  'gate apply': { args: 1, flags: ['-f!'] },
  'gate validate': { flags: ['-f!'] },
  'gate diff': { args: 1, flags: ['-f', '--from', '--to'] },
  'gate run': { args: 1, flags: ['--gate', '--baseline', '--sample'] },
  'gate submit': { args: 1 },
  'gate result': { args: 1 },
  'gate status': { args: 1, flags: ['--gate!'] },
  'gate cancel': { args: 1, flags: ['--gate'] },
  'gate suggest': { args: 1 },
};

const GLOBAL = ['--token', '--base', '--profile', '--json'];

interface FlagShape {
  char?: string;
  aliases?: string[];
  charAliases?: string[];
  required?: boolean;
}

async function commandOf(words: string) {
  const id = words.split(' ').join(':');
  const load = (COMMAND_LOADERS as Record<string, (() => Promise<{ default: unknown }>) | undefined>)[id];
  expect(load, `gds ${words}`).toBeDefined();
  return (await load!()).default as {
    args?: Record<string, unknown>;
    flags?: Record<string, FlagShape>;
    baseFlags?: Record<string, FlagShape>;
  };
}

/** The flag `written` (`--name` or `-c`) names, under its own name or an alias. */
function flagFor(flags: Record<string, FlagShape>, written: string): FlagShape | undefined {
  if (written.startsWith('--')) {
    const name = written.slice(2);
    return flags[name] ?? Object.values(flags).find((f) => f.aliases?.includes(name));
  }
  const char = written.slice(1);
  return Object.values(flags).find((f) => f.char === char || f.charAliases?.includes(char));
}

describe('the spec’s client commands in gds', () => {
  it.each(Object.entries(SPEC))('gds %s takes what the spec gives it', async (words, spec) => {
    const command = await commandOf(words);
    const flags = { ...command.baseFlags, ...command.flags };
    for (const global of GLOBAL) expect(flagFor(flags, global), `${words} ${global}`).toBeDefined();
    expect(Object.keys(command.args ?? {}).length, `${words}: arguments`).toBeGreaterThanOrEqual(
      spec.args ?? 0,
    );
    for (const written of spec.flags ?? []) {
      const required = written.endsWith('!');
      const flag = flagFor(flags, written.replace(/!$/, ''));
      expect(flag, `${words} ${written}`).toBeDefined();
      // A flag the spec makes optional must not be required by gds (scripts leave it out).
      if (!required) expect(flag?.required ?? false, `${words} ${written} optional`).toBe(false);
    }
  });

  it('every command of gds takes the global options', async () => {
    const missing: string[] = [];
    for (const id of Object.keys(COMMAND_LOADERS)) {
      if (id === '__complete') continue; // the shells' completion hook, never typed
      const command = await commandOf(id.split(':').join(' '));
      const flags = { ...command.baseFlags, ...command.flags };
      for (const global of GLOBAL) if (flagFor(flags, global) === undefined) missing.push(`${id} ${global}`);
    }
    expect(missing).toEqual([]);
  });
});
