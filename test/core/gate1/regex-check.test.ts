import { describe, expect, it } from 'vitest';
import { checkRegex } from '../../../src/core/gate1/index.js';

const codes = (re: string) => checkRegex(re).map((p) => `${p.severity}:${p.code}`);

describe('checkRegex flags what PostgreSQL rejects (error) or reads differently (warning)', () => {
  it.each([
    ['^(?<user>[a-z]+)@', 'error:regex-named-group'],
    ['(?P<user>x)', 'error:regex-named-group'],
    ['(a)\\k<a>', 'error:regex-escape'],
    ['\\p{L}+', 'error:regex-unicode-property'],
    ['\\P{Lu}', 'error:regex-unicode-property'],
    ['abc(?i)def', 'error:regex-embedded-option'],
    ['(?i:abc)', 'error:regex-embedded-option'],
    ['(?u)abc', 'error:regex-embedded-option'],
    ['a++', 'error:regex-possessive'],
    ['a*+', 'error:regex-possessive'],
    ['a{2}+', 'error:regex-possessive'],
    ['a**', 'error:regex-quantifier-operand'],
    ['(?>abc)', 'error:regex-atomic-group'],
    ['abc\\z', 'error:regex-escape'],
    ['\\h+', 'error:regex-escape'],
    ['\\R', 'error:regex-escape'],
    ['\\Qa.b\\E', 'error:regex-escape'],
    ['\\u{1F600}', 'error:regex-escape'],
    ['\\x{41}', 'error:regex-escape'],
    ['(a)(?=\\1)', 'error:regex-backreference'],
    ['(?<=(a))\\1', 'error:regex-backreference'],
    ['(a)\\2', 'error:regex-backreference'],
    ['a{256}', 'error:regex-repeat-too-large'],
    ['a{1,1000}', 'error:regex-repeat-too-large'],
    ['a{3,1}', 'error:regex-bound'],
    ['[z-a]', 'error:regex-range'],
    ['[\\d-z]', 'error:regex-range'],
    ['[[:foo:]]', 'error:regex-posix-class'],
    ['[abc', 'error:regex-unbalanced'],
    ['[[.]a', 'error:regex-unbalanced'],
    ['[[=a]', 'error:regex-unbalanced'],
    ['[[..]]', 'error:regex-collating-element'],
    ['[[.ab.]]', 'error:regex-collating-element'],
    ['[[=ab=]]', 'error:regex-collating-element'],
    ['[z-[.hyphen.]]', 'error:regex-range'],
    ['(abc', 'error:regex-unbalanced'],
    ['abc)', 'error:regex-unbalanced'],
    ['abc\\', 'error:regex-escape'],
    ['*abc', 'error:regex-quantifier-operand'],
    ['^*', 'error:regex-quantifier-operand'],
    ['\\bword\\b', 'warning:regex-backslash-b'],
    ['a\\Bb', 'warning:regex-backslash-capital-b'],
    ['abc\\Z', 'warning:regex-backslash-capital-z'],
    ['\\x41B', 'warning:regex-hex-escape'],
    ['(?m)^abc$', 'warning:regex-option-m'],
    ['(?e)a+', 'warning:regex-flavour'],
  ])('%j -> %s', (re, expected) => {
    expect(codes(re)).toContain(expected);
  });

  it.each([
    '^[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\\.[A-Za-z]{2,}$',
    '^\\d{5}(-\\d{4})?$',
    '^[[:upper:]]{2}[[:digit:]]+$',
    '[[.hyphen.][.space.]a-z]+',
    '[[.].]]',
    '\\ybar\\y',
    '\\mword\\M',
    '(?<=USD )\\d+',
    '(?<!-)\\d+',
    'a(?=b)',
    '(?i)^abc$',
    '(?x) ^ a b c # comment',
    '(ab)\\1',
    '[\\d\\s]+',
    '[\\w-]+',
    'a{255}',
    'a{,3}',
    '***=a(b',
    '(?q)a(b',
    '\\u00e9',
    '\\U0001F600',
    '[^]a]',
    '(?#note)abc',
  ])('%j is accepted as written', (re) => {
    expect(checkRegex(re)).toEqual([]);
  });

  it('points at the offending offset', () => {
    expect(checkRegex('abc(?<n>x)')[0]?.index).toBe(3);
  });
});
