// The regex check against the real thing: PostgreSQL 18 (PGlite) must reject exactly the regexes
// checkRegex calls errors, for a curated list and for generated ones.
import { PGlite } from '@electric-sql/pglite';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkRegex } from '../../../src/core/gate1/index.js';

let db: PGlite;
beforeAll(async () => {
  db = new PGlite();
  await db.query('select 1');
});
afterAll(async () => {
  await db.close();
});

async function postgresAccepts(re: string): Promise<boolean> {
  try {
    await db.query("select 'abc' ~ $1", [re]);
    return true;
  } catch {
    return false;
  }
}

const curated = [
  '(?<=a)b',
  '(?<!x)b',
  '(?<name>b)',
  '(?P<n>b)',
  '\\k<n>',
  '\\p{L}',
  '(?i)ABC',
  'a(?i)BC',
  '(?i:ABC)',
  'a*+',
  'a++',
  '(?>a)',
  'c\\Z',
  'c\\z',
  '\\h',
  '\\R',
  '\\K',
  '\\G',
  '\\X',
  '\\Qa\\E',
  'a\\bc',
  'a\\Bb',
  '[\\d]',
  '[\\D]',
  '[\\W]',
  '(a)(?=\\1)',
  '(a)\\1',
  '\\u{61}',
  '\\u0061',
  '\\x41B',
  '\\_',
  'a{256}',
  'a{255}',
  '[[:alpha:]]+',
  '\\yabc\\y',
  '(?#c)abc',
  '***:abc',
  '(?m)abc',
  '(?x) a b c',
  'a{,3}',
  'a{',
  'x|',
  '()',
  'a*?',
  '[a-\\d]',
  '\\8',
  '\\1',
  '(a)\\12',
  '[z-a]',
  '(?=(a))',
  '[^]a]',
  '\\cA',
  'a{2,1}',
  '[[:word:]]',
  '[[=a=]]',
  '[[.a.]]',
  '[[.]a',
  '[[:]a',
  '[[=a]',
  '[[..]]',
  '[[.ab.]]',
  '[[=ab=]]',
  '[[.hyphen.]]',
  '[[=space=]]',
  '[[.hyphen.]-z]',
  '[z-[.hyphen.]]',
  '[[.].]]',
  '[[.]].]]',
  '[a-b-c]',
  '[a-b-]',
  '[a-b--]',
  '[.-a-b]',
  '[\\t-\\a]',
  '[\\a-\\t]',
  '[a-\\b]',
  '[\\B-a]',
  '[a-\\B]',
  '[a-\\0]',
  '[\\cZ-\\cA]',
  '[\\cz-a]',
  '[\\101-\\100]',
  '[\\12-a]',
  '[a-\\12]',
  '[a-\\e]',
  '[\\07-\\06]',
  '[[:ascii:]]',
  '[[:<:]]a',
  'a[[:>:]]',
  '[[:<:]]*',
  '[a[:<:]]',
  '[\\1234-a]',
  '[\\400-a]',
  '[a-\\1214]',
  '[\\19-0]',
  '\\81',
  '\\99',
  '(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)(k)(l\\12)',
  '(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)(k)(l)\\12',
  '[\\377-a]',
  '[\\x1c-\\c😀]',
  '[\\c😀-\\x05]',
  '[\\s-z]',
  '^*',
  '(?=a)*',
  '\\y*',
  'a{1,2}{3}',
  'a???',
  'a{2}?',
  '(?i)(?x)a',
  '(?ix)a',
  '(?)a',
  '***=a(',
  '(?q)a(',
  '[[:foo:]]',
  '[a',
  'a)',
  '(a',
  '\\',
  '[a-]',
  '[\\y]',
  '[\\b]',
  '[\\B]',
  '\\x',
  '\\x{41}',
  '\\U0001F600',
  '\\c',
  '$*',
  '[[:alpha:]-z]',
  '\\07',
];

const tokens = [
  'a',
  'b',
  '\\',
  '(',
  ')',
  '[',
  ']',
  '{',
  '}',
  '1',
  ',',
  '*',
  '+',
  '?',
  '|',
  '^',
  '$',
  '-',
  ':',
  '=',
  '!',
  '<',
  '>',
  '#',
  'x',
  '4',
  'F',
  '\\d',
  '\\1',
  '(?',
  '[:alpha:]',
  '.',
  '\\b',
  '\\B',
  '\\Z',
  '\\z',
  '\\x41',
  '{1,2}',
  '{300}',
  '\\u00',
  '[.a.]',
  '\\p',
  '(?<=',
  '(?=',
  '(?!',
  '(?i)',
  '(?x)',
  '\\k',
  'é',
  '\\0',
  '\\12',
  '***:',
  '\\y',
  '\\A',
  ' ',
];

describe('checkRegex agrees with PostgreSQL on what it rejects', () => {
  it.each(curated)('%j', async (re) => {
    const flagged = checkRegex(re).some((p) => p.severity === 'error');
    expect(flagged).toBe(!(await postgresAccepts(re)));
  });

  it('on 400 generated regexes', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom(...tokens), { minLength: 1, maxLength: 10 }),
        async (parts) => {
          const re = parts.join('');
          const flagged = checkRegex(re).some((p) => p.severity === 'error');
          expect({ re, flagged }).toEqual({ re, flagged: !(await postgresAccepts(re)) });
        },
      ),
      { numRuns: 400 },
    );
  });
});
