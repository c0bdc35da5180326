// The executable reads its bundles as latin1, one byte per character (scripts/sea/boot.ts, asset-module.ts):
// a character beyond ASCII becomes two to four characters there. esbuild's `charset: 'ascii'` escapes strings,
// template literals and identifiers, but keeps a regular-expression literal as written: ansis's `strip`
// (/[\u001B\u009B].../, which oclif measures text with) held a raw U+009B, so in the executable alone its class
// also matched `Â`. The build writes such characters as escapes, and refuses what it cannot escape safely.
import { readFileSync, writeFileSync } from 'node:fs';

export interface NonAscii {
  line: number;
  column: number;
  codePoint: string;
  excerpt: string;
}

/** The first character of `text` beyond ASCII, where it is and the text around it; undefined when none is. */
export function firstNonAscii(text: string): NonAscii | undefined {
  const at = text.search(/[^\x00-\x7f]/);
  return at === -1 ? undefined : placeOf(text, at);
}

function placeOf(text: string, at: number): NonAscii {
  const lineStart = text.lastIndexOf('\n', at - 1) + 1;
  const line = text.slice(0, at).split('\n').length;
  const codePoint = (text.codePointAt(at) as number).toString(16).toUpperCase().padStart(4, '0');
  const excerpt = text.slice(Math.max(lineStart, at - 40), at + 40).split('\n')[0] as string;
  return { line, column: at - lineStart + 1, codePoint: `U+${codePoint}`, excerpt };
}

/**
 * `text` with every UTF-16 unit beyond ASCII written `\uXXXX`. Outside strings, esbuild's ASCII output keeps
 * such a unit only in a regular-expression literal (or a comment), where the escape means the same unit, with
 * or without the `u` flag (a surrogate pair written as two escapes is still one code point under `u`). A unit
 * right after a backslash (an identity escape, `\é`) would turn into a literal `u`: refused, naming the place.
 */
export function escapeNonAscii(text: string, file = 'bundle'): string {
  return text.replace(/[^\x00-\x7f]/g, (unit, at: number) => {
    let backslashes = 0;
    while (text[at - 1 - backslashes] === '\\') backslashes += 1;
    if (backslashes % 2 === 1) {
      const place = placeOf(text, at);
      throw new Error(
        `${file}:${place.line}:${place.column} holds ${place.codePoint} right after a backslash in ` +
          `\`${place.excerpt}\`: the executable reads its bundles as latin1 and this one cannot be escaped ` +
          `as it stands; write it as \\u${place.codePoint.slice(2)} in the source`,
      );
    }
    return `\\u${unit.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
  });
}

/** Rewrites a bundle the executable reads as latin1 so that it is ASCII only (see escapeNonAscii). */
export function makeBundleAscii(file: string): void {
  const text = readFileSync(file, 'utf8');
  if (firstNonAscii(text) === undefined) return;
  writeFileSync(file, escapeNonAscii(text, file));
}
