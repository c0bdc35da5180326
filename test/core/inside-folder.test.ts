import { describe, expect, it } from 'vitest';
import { isInsideFolder } from '../../src/core/inside-folder.js';

describe('isInsideFolder: where a project may read a file it names', () => {
  it('takes a file in the folder or below it', () => {
    expect(isInsideFolder('/p/shop', '/p/shop/seeds/customers.csv')).toBe(true);
    expect(isInsideFolder('/p/shop', '/p/shop/..seeds/a.csv')).toBe(true);
  });

  it('refuses a sibling whose name starts with the folder name, the parent, and the folder itself', () => {
    expect(isInsideFolder('/p/shop', '/p/shop-other/secret.csv')).toBe(false);
    expect(isInsideFolder('/p/shop', '/p/secret.csv')).toBe(false);
    expect(isInsideFolder('/p/shop', '/p')).toBe(false);
    expect(isInsideFolder('/p/shop', '/p/shop')).toBe(false);
  });

  it('reads a project at the root of the file system (its files are not under "//")', () => {
    expect(isInsideFolder('/', '/seeds/customers.csv')).toBe(true);
    expect(isInsideFolder('/', '/')).toBe(false);
  });
});
