// JSON read to the digit. JSON.parse makes every number a double, so a warehouse's numeric(30,6)
// 123456789012345678.123456 or a bigint above 2^53 would come out as 123456789012345680. parseLossless keeps
// such a number as JSON.rawJSON of its own text (TC39 "JSON.parse source text access", Node >= 21), which
// JSON.stringify writes back digit for digit; a number a double holds exactly (1.5, 1.500000, 1e3) stays a
// plain number, so only values that were silently changed before change shape.

/** What JSON.rawJSON gives: a frozen object JSON.stringify writes as `rawJSON`'s text. */
interface RawJson {
  readonly rawJSON: string;
}
interface SourceContext {
  source?: string;
}
const json = JSON as JSON & { rawJSON?: (text: string) => RawJson; isRawJSON?: (value: unknown) => boolean };
const reviveLossless = (_key: string, value: unknown, context?: SourceContext): unknown =>
  typeof value === 'number' &&
  context?.source !== undefined &&
  json.rawJSON !== undefined &&
  decimal(context.source) !== decimal(String(value))
    ? json.rawJSON(context.source)
    : value;

/**
 * Only a number of 16 or more significant digits (a double holds any of 15) or a 3-digit exponent can lose
 * anything: text without either is parsed as plain JSON.parse does, at its speed. A number starts the text or
 * follows `:`, `,` or `[`, so long runs of digits inside strings (ids, hashes, a view's SQL) do not count.
 */
const MAY_LOSE = /(?:^|[:,[])\s*-?(?:\d(?:\.?\d){15}|[\d.]+[eE][+-]?\d{3})/;

/** Whether JSON.parse of `text` may change a number (parseLossless would keep one as its text). */
export function mayLoseDigits(text: string): boolean {
  return json.rawJSON !== undefined && MAY_LOSE.test(text);
}

/** JSON.parse, with every number whose value a double cannot hold kept as its own text (see above). */
export function parseLossless(text: string): unknown {
  if (json.rawJSON === undefined || !MAY_LOSE.test(text)) return JSON.parse(text);
  return JSON.parse(text, reviveLossless as (key: string, value: unknown) => unknown);
}

/** Whether `value` is such a kept number (an object to typeof, written by JSON.stringify as its text). */
export function isRawJson(value: unknown): value is RawJson {
  return json.isRawJSON?.(value) === true;
}

/** A number's text as `<sign><digits>e<exponent>` without leading or trailing zeros: equal for equal values. */
function decimal(text: string): string {
  const match = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (match === null) return text;
  const [, sign = '', whole = '', fraction = '', exponent = '0'] = match;
  const all = whole + fraction;
  const digits = all.replace(/^0+/, '').replace(/0+$/, '');
  if (digits === '') return '0';
  const trailing = all.length - all.replace(/0+$/, '').length;
  return `${sign}${digits}e${Number(exponent) - fraction.length + trailing}`;
}

/**
 * One text for a value however its number is written (`1.50`, `15e-1`, a kept number, a double), as jsonb
 * compares them: a key to match values by. Other values as JSON.
 */
export function valueKey(value: unknown): string {
  if (typeof value === 'number' && Number.isFinite(value)) return `number:${decimal(String(value))}`;
  if (isRawJson(value)) return `number:${decimal(value.rawJSON)}`;
  return JSON.stringify(value) ?? 'undefined';
}

/**
 * A number written as text (a CSV cell: `+1`, `.5`, `007`, `1.`, `1e3`): a plain number when a double holds
 * it, else kept to the digit as parseLossless keeps one; undefined when the text is no number.
 */
export function numberOfText(text: string): unknown {
  const match = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (match === null || (match[2] === '' && (match[3] ?? '') === '')) return undefined;
  const [, sign, whole = '', fraction = '', exponent] = match;
  const json = `${sign === '-' ? '-' : ''}${whole.replace(/^0+(?=\d)/, '') || '0'}${fraction === '' ? '' : `.${fraction}`}${exponent === undefined ? '' : `e${exponent}`}`;
  return parseLossless(json);
}
