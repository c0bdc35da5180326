// How the service reads a JSON body, in one place for every route: as bytes, refused when they are not UTF-8
// (Fastify's own parser decodes them with each bad byte turned into U+FFFD, so a record, a name or a note would
// be stored silently changed: the input rule of input-rule.ts, for the bytes before the JSON), then by
// Fastify's parser as configured (its refusals: malformed JSON, `__proto__`).
import type { FastifyInstance } from 'fastify';
import { mayLoseDigits, parseLossless } from '../core/lossless-json.js';
import { firstInvalidUtf8 } from '../core/utf8.js';
import { badRequest } from './errors.js';

/**
 * Sets the scope's JSON body parser. With `keepDigits` (the table endpoints' row values), a number a double
 * cannot hold (a numeric 123456789012345678.123456, an int8 above 2^53) is kept as its text, not rounded.
 */
export function readJsonBodies(scope: FastifyInstance, options: { keepDigits?: boolean } = {}): void {
  const parseJson = scope.getDefaultJsonParser('error', 'error');
  scope.removeContentTypeParser('application/json');
  scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const bytes = body as Buffer;
    const invalid = firstInvalidUtf8(bytes);
    if (invalid !== undefined) {
      done(
        badRequest(
          'invalid_input',
          `The body is not UTF-8: byte ${invalid} is 0x${(bytes[invalid] ?? 0).toString(16).toUpperCase().padStart(2, '0')}, which does not begin or continue a UTF-8 character; nothing was stored.`,
          { where: 'body', byteOffset: invalid },
        ),
        undefined,
      );
      return;
    }
    const text = bytes.toString('utf8');
    if (options.keepDigits !== true) {
      parseJson(request, text, done);
      return;
    }
    parseJson(request, text, (error, value) => {
      if (error) done(error);
      else done(null, mayLoseDigits(text) ? parseLossless(text) : value);
    });
  });
}
