// The README's command reference is generated from the commands (npm run readme): every command of the
// explicit map has its section, so a command added without regenerating the reference fails here.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/commands/index.js';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

describe('README command reference', () => {
  it.each(Object.keys(COMMANDS))('documents gds %s', (id) => {
    const words = id.split(':').join(' ');
    expect(readme).toMatch(new RegExp(`^## \`gds ${words}(?: [A-Z\\[].*)?\`$`, 'm'));
  });

  it('names the two commands a newcomer needs', () => {
    expect(readme).toContain('npm ci && npm run demo');
    expect(readme).toContain('npm ci && npm test');
  });
});
