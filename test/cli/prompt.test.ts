// canAsk: a person can answer only when stdin and stderr are terminals and GDS_PROMPT_DISABLED is not set.
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { canAsk, promptsDisabled } from '../../src/cli/prompt.js';

const tty = () => Object.assign(new PassThrough(), { isTTY: true });

describe('canAsk', () => {
  it('asks on a terminal', () => {
    expect(canAsk({ input: tty(), output: tty() }, {})).toBe(true);
  });

  it('never asks off a terminal', () => {
    expect(canAsk({ input: new PassThrough(), output: tty() }, {})).toBe(false);
  });

  it.each(['1', 'true', 'yes'])('never asks with GDS_PROMPT_DISABLED=%s, even on a terminal', (value) => {
    expect(canAsk({ input: tty(), output: tty() }, { GDS_PROMPT_DISABLED: value })).toBe(false);
  });

  it.each(['', '0', 'false'])('GDS_PROMPT_DISABLED=%j leaves prompts on', (value) => {
    expect(promptsDisabled({ GDS_PROMPT_DISABLED: value })).toBe(false);
  });
});
