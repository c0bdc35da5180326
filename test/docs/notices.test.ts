// LICENSE and THIRD-PARTY-NOTICES: gds's own license, and the licenses of everything it redistributes, kept
// up to date with the lock file (`npm run notices` writes the file again after a dependency changes).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { thirdPartyNotices } from '../../scripts/third-party-notices.js';
import { repoRoot } from '../cli/helpers/cli-process.js';

const read = (file: string) => readFileSync(join(repoRoot, file), 'utf8');

describe('the licenses in the repository', () => {
  it('LICENSE is the MIT License that package.json declares', () => {
    expect((JSON.parse(read('package.json')) as { license: string }).license).toBe('MIT');
    expect(read('LICENSE')).toMatch(/^MIT License\n\nCopyright \(c\) \d{4} /);
  });

  it('THIRD-PARTY-NOTICES is what `npm run notices` writes from the lock file today', () => {
    expect(read('THIRD-PARTY-NOTICES') === thirdPartyNotices()).toBe(true);
  });

  it('names every production dependency with its version and license, and Node.js with its own LICENSE', () => {
    const notices = read('THIRD-PARTY-NOTICES');
    const lock = JSON.parse(read('package-lock.json')) as {
      packages: Record<string, { version?: string; dev?: boolean; link?: boolean }>;
    };
    for (const [key, entry] of Object.entries(lock.packages)) {
      if (key === '' || entry.dev === true || entry.link === true) continue;
      const name = key.slice(key.lastIndexOf('node_modules/') + 'node_modules/'.length);
      expect(notices).toContain(`\n${name}@${entry.version} — `);
    }
    for (const direct of ['@oclif/core', 'libpg-query', 'jq-wasm', 'yaml', 'openid-client'])
      expect(notices).toMatch(new RegExp(`\\n${direct.replace('/', '\\/')}@[0-9][^ ]* — [A-Za-z]`));
    expect(notices).toMatch(/\nNode\.js 24\.\d+\.\d+ \(the runtime inside each single executable\)/);
    // Node's LICENSE carries the licenses of V8 and OpenSSL, which the executables contain.
    expect(notices).toContain('V8');
    expect(notices).toContain('OpenSSL');
  });
});
