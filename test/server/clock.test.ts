// `--clock-offset-file`: the offset is read again at each request; missing or empty is 0, and a file that
// holds anything but whole seconds keeps the last good offset and says so once.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { offsetFileClock, parseClockOffset } from '../../src/server/clock.js';

describe('the clock offset file', () => {
  it('adds its seconds to the base clock at each reload, and keeps the last good offset', async () => {
    const file = join(await mkdtemp(join(tmpdir(), 'gds-clock-')), 'offset');
    const warnings: string[] = [];
    const { clock, reload } = offsetFileClock(
      file,
      () => 1_000,
      (m) => warnings.push(m),
    );
    await reload();
    expect(clock()).toBe(1_000);
    await writeFile(file, '2678400\n');
    await reload();
    expect(clock()).toBe(1_000 + 2_678_400_000);
    await writeFile(file, 'soon');
    await reload();
    await reload();
    expect(clock()).toBe(1_000 + 2_678_400_000);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('not a whole number of seconds; the offset stays 2678400 s');
    await writeFile(file, '-60');
    await reload();
    expect(clock()).toBe(1_000 - 60_000);
    await rm(file);
    await reload();
    expect(clock()).toBe(1_000);
  });

  it('reads whole seconds only', () => {
    expect(parseClockOffset(' 7200 \n')).toBe(7200);
    expect(parseClockOffset('')).toBe(0);
    expect(parseClockOffset('1.5')).toBeUndefined();
    expect(parseClockOffset('31d')).toBeUndefined();
  });
});
