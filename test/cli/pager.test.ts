// Which pager gds uses (src/cli/pager.ts), the precedence gh 2.23 has (GH_PAGER, the config's pager, PAGER)
// with gds's names: GDS_PAGER, the CLI's pager setting (given by whoever keeps it), PAGER. The behaviour on a
// terminal is in test/e2e/pager.test.ts.
import { describe, expect, it } from 'vitest';
import { pagerEnvironment, pagerFound, resolvePager } from '../../src/cli/pager.js';

describe('resolvePager', () => {
  it.each([
    [{}, undefined, undefined],
    [{ PAGER: 'less' }, undefined, 'less'],
    [{ PAGER: 'less', GDS_PAGER: 'more' }, undefined, 'more'],
    [{ PAGER: 'less' }, 'most', 'most'],
    [{ PAGER: 'less', GDS_PAGER: 'more' }, 'most', 'more'],
    // GDS_PAGER set but empty: no pager, whatever else says (as GH_PAGER=)
    [{ PAGER: 'less', GDS_PAGER: '' }, 'most', undefined],
    [{ PAGER: 'less', GDS_PAGER: 'cat' }, undefined, undefined],
    [{ PAGER: 'cat' }, undefined, undefined],
    [{ PAGER: '  ' }, undefined, undefined],
    // an empty setting is no setting: PAGER then
    [{ PAGER: 'less -R' }, '', 'less -R'],
  ])('%j with the setting %j → %j', (env, setting, expected) => {
    expect(resolvePager(env, setting)).toBe(expected);
  });
});

describe('the pager runs', () => {
  it("with gh's LESS=FRX and LV=-c unless set, and without PAGER", () => {
    expect(pagerEnvironment({ PAGER: 'less', HOME: '/h' })).toEqual({ HOME: '/h', LESS: 'FRX', LV: '-c' });
    expect(pagerEnvironment({ LESS: '-R', LV: '' })).toEqual({ LESS: '-R', LV: '' });
  });

  it('found on PATH or by path; a shell command is left to the shell', () => {
    const env = { PATH: '/usr/bin:/bin' };
    expect(pagerFound('sh -c "cat"', env)).toBe(true);
    expect(pagerFound('/bin/sh', env)).toBe(true);
    expect(pagerFound('no-such-pager-gds -R', env)).toBe(false);
    expect(pagerFound('/nowhere/less', env)).toBe(false);
    expect(pagerFound('"quoted pager" -R', env)).toBe(true);
    expect(pagerFound('sh', { PATH: '' })).toBe(false);
  });
});
