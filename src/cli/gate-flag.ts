// `--gate <n>` of the gate job commands (gate status, gate cancel).
import { Flags } from '@oclif/core';
import type { GateNumber } from '../client/areas/gates.js';

export const gateFlag = Flags.custom<GateNumber>({
  description: 'The gate of the job: 1 (the auto-baseline job), 2 or 3.',
  options: ['1', '2', '3'],
  parse: async (input) => Number(input) as GateNumber,
});
