// oclif parsing of a command apart from what it does: a probe subclass records what run() would receive, so
// nothing is sent anywhere. Bad values end as exit 2 with the probe never run.
//
//   const flags = await flagsOf(Push, ['f.sql', '--connector', 'c1']);
//   expect(await usageError(Push, ['f.sql'])).toContain('Missing required flag --connector');
//   setEnv({ GDS_CONNECTOR: 'c1' });                   // undone when the test ends
//
// Nothing here is a hook of the file that loads it first: in a test process shared by several files
// (vitest.config.ts) this module is loaded once, and a hook would be registered for that file alone.
import { Config } from '@oclif/core';
import type { Command } from '@oclif/core';
import { expect, onTestFinished, vi } from 'vitest';
import { repoRoot } from '../../cli/helpers/cli-process.js';

let config: Promise<Config> | undefined;

export function setEnv(values: Record<string, string>): void {
  for (const [name, value] of Object.entries(values)) {
    onTestFinished(() => {
      delete process.env[name];
    });
    process.env[name] = value;
  }
}

type Parsed = { flags: Record<string, unknown>; args: Record<string, unknown> };
interface Outcome {
  parsed?: Parsed;
  exit?: number;
  stderr: string;
}
type CommandClass = (new (argv: string[], config: Config) => Command) & {
  run(argv: string[], config: Config): Promise<unknown>;
};

/** Parses `argv` as `command` would; `run()` is replaced, so nothing is sent anywhere. */
export async function parse(command: typeof Command, argv: string[]): Promise<Outcome> {
  let parsed: Parsed | undefined;
  const Probe = class extends (command as unknown as CommandClass) {
    override async run() {
      const self = this as unknown as Parsed;
      parsed = { flags: self.flags, args: self.args };
    }
  } as unknown as CommandClass;
  let stderr = '';
  const loaded = await (config ??= Config.load(repoRoot));
  const write = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
    stderr += String(chunk);
    return true;
  });
  const sigint = process.listeners('SIGINT');
  try {
    await Probe.run(argv, loaded);
  } catch (error) {
    const exit = (error as { oclif?: { exit?: number } }).oclif?.exit;
    if (typeof exit !== 'number') throw error;
    return { exit, stderr };
  } finally {
    write.mockRestore();
    for (const listener of process.listeners('SIGINT')) {
      if (!sigint.includes(listener)) process.removeListener('SIGINT', listener);
    }
  }
  if (parsed === undefined) throw new Error('the probe did not run');
  return { parsed, stderr };
}

export async function flagsOf(command: typeof Command, argv: string[]): Promise<Record<string, unknown>> {
  const outcome = await parse(command, argv);
  expect(outcome.exit, outcome.exit === undefined ? '' : outcome.stderr).toBeUndefined();
  return outcome.parsed?.flags ?? {};
}

export async function usageError(command: typeof Command, argv: string[]): Promise<string> {
  const outcome = await parse(command, argv);
  expect(outcome.exit).toBe(2);
  return outcome.stderr;
}
