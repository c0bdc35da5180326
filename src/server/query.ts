// Strict query-string parsing: unknown parameters and malformed values are a 400 naming the parameter.
import { isoTimestamp } from '../core/iso-timestamp.js';
import { badCharacter } from '../core/text-rule.js';
import { badRequest } from './errors.js';

export type Query = Record<string, string | string[] | undefined>;

export function rejectUnknownParams(query: Query, allowed: string[]): void {
  const unknown = Object.keys(query).filter((k) => !allowed.includes(k));
  if (unknown.length > 0) {
    throw badRequest(
      'invalid_query',
      `Unknown query parameters: ${unknown.join(', ')}. Allowed: ${allowed.join(', ')}.`,
      {
        unknown,
        allowed,
      },
    );
  }
}

export function stringParam(query: Query, name: string): string | undefined {
  const value = query[name];
  if (value === undefined) return undefined;
  if (Array.isArray(value) || value === '') {
    throw badRequest('invalid_query', `${name} must be given once, with a value.`, { parameter: name });
  }
  return wellFormed(name, value);
}

/** A parameter that may be repeated (`?name=a&name=b`), up to `max` values, each with a value. */
export function repeatedStringParam(query: Query, name: string, max: number): string[] | undefined {
  const value = query[name];
  if (value === undefined) return undefined;
  // Given once, it is checked (and refused) as a single parameter is.
  if (!Array.isArray(value)) return [stringParam(query, name) ?? value];
  if (value.length > max) {
    throw badRequest(
      'invalid_query',
      `${name} may be repeated at most ${max} times; got ${value.length}: ask for the rest in another request.`,
      { parameter: name, max },
    );
  }
  if (value.includes('')) {
    throw badRequest('invalid_query', `${name} must be given with a value each time.`, { parameter: name });
  }
  return value.map((v) => wellFormed(name, v));
}

function wellFormed(name: string, value: string): string {
  const problem = badCharacter(value);
  if (problem !== undefined) {
    throw badRequest('invalid_query', `${name} holds ${problem}: send well-formed text (UTF-8, no NUL).`, {
      parameter: name,
    });
  }
  return value;
}

export function intParam(query: Query, name: string, min: number, max: number, fallback: number): number {
  const raw = stringParam(query, name);
  if (raw === undefined) return fallback;
  const value = /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw badRequest('invalid_query', `${name} must be an integer from ${min} to ${max}; got "${raw}".`, {
      parameter: name,
      min,
      max,
    });
  }
  return value;
}

export function booleanParam(query: Query, name: string, fallback: boolean): boolean {
  const raw = stringParam(query, name);
  if (raw === undefined) return fallback;
  if (raw !== 'true' && raw !== 'false') {
    throw badRequest('invalid_query', `${name} must be true or false; got "${raw}".`, { parameter: name });
  }
  return raw === 'true';
}

export function timestampParam(query: Query, name: string): string | undefined {
  const raw = stringParam(query, name);
  if (raw === undefined) return undefined;
  const time = isoTimestamp(raw);
  if (time === undefined) {
    throw badRequest(
      'invalid_query',
      `${name} must be an ISO-8601 timestamp such as 2026-01-31T12:00:00Z; got "${raw}".`,
      {
        parameter: name,
      },
    );
  }
  return time;
}
