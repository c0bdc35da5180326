// Where bytes stop being UTF-8: one definition for what gds reads (io/input.ts: artifacts, gate1.yml, imports)
// and what the service receives (a JSON body's bytes, server/app.ts), so neither reads a bad byte as U+FFFD.
import { isUtf8 } from 'node:buffer';

/**
 * The offset of the first byte that is not part of a well-formed UTF-8 character (RFC 3629), if any, looking
 * from `from` (a character boundary: the byte after an earlier bad one, to find them all in one pass).
 */
export function firstInvalidUtf8(bytes: Uint8Array, from = 0): number | undefined {
  if (from === 0 && isUtf8(bytes)) return undefined;
  let i = from;
  while (i < bytes.length) {
    const b = bytes[i] ?? 0;
    if (b < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let min: number;
    if (b >= 0xc2 && b <= 0xdf) [need, min] = [1, 0x80];
    else if (b >= 0xe0 && b <= 0xef) [need, min] = [2, 0x800];
    else if (b >= 0xf0 && b <= 0xf4) [need, min] = [3, 0x10000];
    else return i;
    let code = b & (0x3f >> need);
    for (let k = 1; k <= need; k++) {
      const c = bytes[i + k];
      if (c === undefined || (c & 0xc0) !== 0x80) return i;
      code = (code << 6) | (c & 0x3f);
    }
    if (code < min || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return i;
    i += need + 1;
  }
  return undefined;
}
