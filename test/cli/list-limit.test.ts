// Every command that lists takes -L/--limit N, as gh's lists do: checked over the whole command map, so a
// list added later without it fails here.
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/commands/index.js';

/** Commands whose output is a list of rows of one kind (a walk or a report of outcomes is not). */
const lists = Object.keys(COMMANDS).filter((id) => /(^|:)(list|jobs|history)$/.test(id));

describe('-L on every list', () => {
  it('finds the lists', () => {
    expect(lists).toEqual(
      expect.arrayContaining([
        'list',
        'tokens:list',
        'alias:list',
        'settings:list',
        'audit:list',
        'gate:jobs',
      ]),
    );
  });

  it.each(lists)('gds %s takes -L/--limit, a whole number of at least 1', (id) => {
    const limit = (COMMANDS[id]?.flags as Record<string, { char?: string; type?: string }> | undefined)
      ?.limit;
    expect(limit, `${id} has no --limit`).toBeDefined();
    expect(limit?.char).toBe('L');
    expect(limit?.type).toBe('option');
  });
});
