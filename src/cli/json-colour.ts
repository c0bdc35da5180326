// JSON for a person at a terminal, as `gh api` prints it: indented by two spaces, keys blue, strings green,
// null cyan, true/false yellow, numbers and punctuation plain. Without colour (piped, NO_COLOR) the
// segments join to exactly `JSON.stringify(value, null, 2)`, but for the characters a terminal would act on
// (C1, DEL, bidi overrides, zero width spaces), written as `\u` escapes as in NDJSON (core/ndjson.ts): the
// data stays whole, and Output's stripping of what it prints finds nothing to take.
import { isRawJson } from '../core/lossless-json.js';
import { escapedJson } from '../core/ndjson.js';
import type { Segment } from './segment.js';

/** The segments of `value` printed as indented JSON; `Output.print(...segments)` colours them or not. */
export function jsonSegments(value: unknown): Segment[] {
  const out: Segment[] = [];
  write(value, '', out);
  return out;
}

function write(value: unknown, indent: string, out: Segment[]): void {
  if (value === null || value === undefined) {
    out.push({ text: 'null', style: 'cyan' });
    return;
  }
  if (typeof value === 'string') {
    out.push({ text: escapedJson(JSON.stringify(value)), style: 'green' });
    return;
  }
  if (typeof value === 'boolean') {
    out.push({ text: String(value), style: 'yellow' });
    return;
  }
  // A number no double holds, kept as its digits (core/lossless-json.ts): JSON.stringify writes them.
  if (typeof value !== 'object' || isRawJson(value)) {
    out.push(JSON.stringify(value) ?? 'null');
    return;
  }
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    if (value.length === 0) {
      out.push('[]');
      return;
    }
    out.push('[\n');
    value.forEach((item: unknown, i) => {
      out.push(inner);
      write(item, inner, out);
      out.push(i < value.length - 1 ? ',\n' : '\n');
    });
    out.push(`${indent}]`);
    return;
  }
  // As JSON.stringify: toJSON is honoured, undefined and functions are left out of objects.
  const json = (value as { toJSON?: () => unknown }).toJSON;
  if (typeof json === 'function') {
    write(json.call(value), indent, out);
    return;
  }
  const entries = Object.entries(value).filter(([, v]) => v !== undefined && typeof v !== 'function');
  if (entries.length === 0) {
    out.push('{}');
    return;
  }
  out.push('{\n');
  entries.forEach(([key, item], i) => {
    out.push(inner, { text: escapedJson(JSON.stringify(key)), style: ['bold', 'blue'] }, ': ');
    write(item, inner, out);
    out.push(i < entries.length - 1 ? ',\n' : '\n');
  });
  out.push(`${indent}}`);
}
