// Help is for people who cannot see the spec: no section marks (§4.8) in any command's help text.
import { describe, expect, it } from 'vitest';
import { COMMAND_LOADERS } from '../../src/commands/loaders.js';

describe('help text', () => {
  it.each(Object.keys(COMMAND_LOADERS))('gds %s cites no spec section', async (id) => {
    const command = (await COMMAND_LOADERS[id as keyof typeof COMMAND_LOADERS]()).default;
    const flags = Object.values({ ...command.baseFlags, ...command.flags }).map((f) => f.description ?? '');
    const args = Object.values(command.args ?? {}).map((a) => a.description ?? '');
    const examples = (command.examples ?? []).map((e) =>
      typeof e === 'string' ? e : (e as { command: string }).command,
    );
    const text = [command.summary, command.description, ...flags, ...args, ...examples].join('\n');
    expect(text).not.toMatch(/§\s*\d/);
  });
});
