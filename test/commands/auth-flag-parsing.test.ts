// Flag parsing of the auth commands apart from what they do (nothing is sent, nothing is written).
import { describe, expect, it } from 'vitest';
import AuthSet from '../../src/commands/auth/set.js';
import AuthSwitch from '../../src/commands/auth/switch.js';
import AuthToken from '../../src/commands/auth/token.js';
import GateValidate from '../../src/commands/gate/validate.js';
import { flagsOf, usageError } from './helpers/oclif-parse.js';

describe('auth set --verify', () => {
  it('checks the token by default; --no-verify turns it off', async () => {
    expect(await flagsOf(AuthSet, ['--token', 't', '--base', 'https://a.example'])).toMatchObject({
      verify: true,
    });
    expect(
      await flagsOf(AuthSet, ['--token', 't', '--base', 'https://a.example', '--no-verify']),
    ).toMatchObject({
      verify: false,
    });
  });
});

describe('auth switch and auth token', () => {
  it('take the global --profile and no argument', async () => {
    expect(await flagsOf(AuthSwitch, ['--profile', 'staging'])).toMatchObject({ profile: 'staging' });
    expect(await flagsOf(AuthToken, ['--profile', 'ci'])).toMatchObject({ profile: 'ci' });
    expect(await usageError(AuthToken, ['extra'])).toContain('Unexpected argument: extra');
  });
});

describe('gate validate', () => {
  it('takes an optional table id before -f', async () => {
    expect(await flagsOf(GateValidate, ['-f', 'g.yml'])).toMatchObject({ file: 'g.yml' });
    expect(await flagsOf(GateValidate, ['t_1', '-f', 'g.yml'])).toMatchObject({ file: 'g.yml' });
  });
});
