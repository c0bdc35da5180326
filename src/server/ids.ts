import { createHash, randomBytes } from 'node:crypto';
import { stripControlCharacters } from '../core/terminal-text.js';

/** A random id with a readable prefix, e.g. `tbl_1f3a9c0d5e7b2a48`. */
export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(8).toString('hex')}`;
}

/** A random secret for tokens (URL-safe). */
export function newSecret(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/** How secrets are stored: never the secret itself. */
export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * The longest id a door looks up: a REST path segment (the router's limit), a GraphQL or MCP argument. The
 * server's own ids are at most 20 characters (`tbl_` and 16 hex digits, newId); a record's id is its key's
 * text, given room. A longer id names nothing: it is refused as an unknown one, and never said back whole.
 */
export const MAX_ID_LENGTH = 100;

/** An id too long to be one, as a message says it back: its start, without control characters, and its length. */
export function cutId(id: string): string {
  return `${JSON.stringify(stripControlCharacters(id.slice(0, 24)))}… (${id.length.toLocaleString('en-US')} characters)`;
}
