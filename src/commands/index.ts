// The explicit command map oclif loads (package.json oclif.commands, identifier COMMANDS), built from the
// loader table: every command, imported. Where oclif has a manifest (the npm package, the single
// executable) cli/main.ts imports only the command that runs instead.
import type { Command } from '@oclif/core';
import { COMMAND_LOADERS } from './loaders.js';

export const COMMANDS: Record<string, Command.Class> = Object.fromEntries(
  await Promise.all(
    Object.entries(COMMAND_LOADERS).map(async ([id, load]) => [id, (await load()).default] as const),
  ),
);
