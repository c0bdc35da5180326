import type { Position } from './types.js';

/** 1-based line and column of a character offset (columns count UTF-16 units, as editors and parsers report them). */
export function positionAt(text: string, offset: number): Position {
  const clamped = Math.max(0, Math.min(offset, text.length));
  const before = text.slice(0, clamped);
  const lineStart = before.lastIndexOf('\n') + 1;
  let line = 1;
  for (let i = before.indexOf('\n'); i !== -1; i = before.indexOf('\n', i + 1)) line++;
  return { line, column: clamped - lineStart + 1 };
}
