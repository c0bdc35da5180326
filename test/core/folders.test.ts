// Where gds keeps its files: the XDG base directories when absolute, the home folder's defaults otherwise.
import { homedir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cacheDir, configDir, stateDir } from '../../src/core/folders.js';

describe('the folders of gds', () => {
  it('are under the XDG base directories when they are absolute', () => {
    const env = { XDG_CONFIG_HOME: '/x/config', XDG_STATE_HOME: '/x/state', XDG_CACHE_HOME: '/x/cache' };
    expect([configDir(env), stateDir(env), cacheDir(env)]).toEqual([
      join('/x/config', 'gds'),
      join('/x/state', 'gds'),
      join('/x/cache', 'gds'),
    ]);
  });

  it('fall back to the home folder when unset, empty or relative (the XDG spec: a relative path is invalid)', () => {
    const defaults = [
      join(homedir(), '.config', 'gds'),
      join(homedir(), '.local', 'state', 'gds'),
      join(homedir(), '.cache', 'gds'),
    ];
    for (const value of [undefined, '', 'relative/path']) {
      const env = { XDG_CONFIG_HOME: value, XDG_STATE_HOME: value, XDG_CACHE_HOME: value };
      expect([configDir(env), stateDir(env), cacheDir(env)]).toEqual(defaults);
    }
  });

  it('GDS_CONFIG_DIR names the config folder itself', () => {
    expect(configDir({ GDS_CONFIG_DIR: '/x/mine', XDG_CONFIG_HOME: '/x/config' })).toBe('/x/mine');
  });
});
