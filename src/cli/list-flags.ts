// The flag every list command shares: `-L/--limit N` keeps the first N rows (in the table and under --json).
import { Flags } from '@oclif/core';

export const limitFlag = Flags.integer({
  char: 'L',
  description: 'Show at most this many rows.',
  min: 1,
});
