// The place json-error-place.ts gives an error V8's JSON.parse says without one (an unexpected token, the end
// of the text), and that it is V8's own place wherever V8 says one.
import { describe, expect, it } from 'vitest';
import { jsonErrorPlace } from '../../src/core/json-error-place.js';

function v8Error(text: string): string {
  try {
    JSON.parse(text);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`V8 took ${JSON.stringify(text)}`);
}

describe('an error V8 gives no place', () => {
  it.each([
    ['a value not in quotes', '{\n  "version": 1,\n  "aliases": {"ls": list}\n}', 3, 21],
    ['a single-quoted string', '{\n  "a": \'b\'}', 2, 8],
    ['a literal cut short', '{\n  "a": tru}', 2, 11],
    ['a value missing', '{"a": }', 1, 7],
    ['an array item missing', '[1,\n ,2]', 2, 2],
    ['the end of the text after a colon', '{"a":', 1, 6],
    ['the end of the text after a comma', '{\n  "a": [1,\n', 3, 1],
  ])('%s', (_, text, line, column) => {
    expect(v8Error(text)).not.toMatch(/\(line \d+ column \d+\)$/);
    expect(jsonErrorPlace(text)).toEqual({ line, column });
  });
});

// Inside a string or a number V8 places its errors itself; between values the walk stops where V8 does.
describe("an error V8 places between values: V8's own place", () => {
  it.each([
    ['a comma before a closing brace', '{\n  "version": 1,\n}'],
    ['two values', '{\n  "a": 1\n  "b": 2\n}'],
    ['a key not in quotes', '{\n  version: 1\n}'],
    ['text after the object', '{"a": [1, 2]}\n}'],
    ['an object cut short', '{"version":1,"settings":{'],
    ['an array cut short', '{\n  "a": 1,\n  "b": [true'],
  ])('%s', (_, text) => {
    const [, line, column] = /\(line (\d+) column (\d+)\)$/.exec(v8Error(text)) ?? [];
    expect(line, v8Error(text)).toBeDefined();
    expect(jsonErrorPlace(text)).toEqual({ line: Number(line), column: Number(column) });
  });
});
