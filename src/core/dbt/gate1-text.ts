// The text of a gate1.yml gds writes from a dbt model's tests, byte for byte as the `yaml` package prints the
// same document (a block map of lists of flat maps, a comment before the document and before each item),
// without building that package's document: a plan of 2,000 models printed them in seconds. Only what this
// printer knows to print as `yaml` does is printed here (names plainly, any other single-line scalar as `yaml`
// prints it alone); anything else (a comment or value over several lines, an unusual number) is undefined,
// and the caller prints the document with `yaml`. test/core/dbt/gate1-text.test.ts compares the two.
import type { Yaml } from '../libraries/yaml.js';

type Value = string | number | boolean | null | Value[] | { [key: string]: Value };

/** An item of a top-level list, and the comment printed before it (none: undefined). */
export interface CommentedItem {
  value: Record<string, Value>;
  comment?: string | undefined;
}

const PLAIN = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Words the YAML 1.2 core schema reads as something else than a string (any case, to be safe). */
const NOT_PLAIN = new Set(['null', 'true', 'false', 'y', 'n', 'yes', 'no', 'on', 'off']);
const printedAlone = new Map<string, string | undefined>();

class NotPrinted extends Error {}

function scalar(yaml: Yaml, value: string | number | boolean | null): string {
  if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean')
    throw new NotPrinted();
  if (typeof value === 'boolean') return String(value);
  if (typeof value === 'number') {
    if (Object.is(value, -0) || (!Number.isSafeInteger(value) && !/^-?\d+\.\d+$/.test(String(value))))
      throw new NotPrinted();
    return String(value);
  }
  if (PLAIN.test(value) && !NOT_PLAIN.has(value.toLowerCase())) return value;
  let printed = printedAlone.get(value);
  if (!printedAlone.has(value)) {
    const text = value.includes('\n')
      ? undefined
      : yaml.stringify(value, { lineWidth: 0 }).replace(/\n$/, '');
    printed = text === undefined || text.includes('\n') ? undefined : text;
    if (printedAlone.size > 10_000) printedAlone.clear();
    printedAlone.set(value, printed);
  }
  if (printed === undefined) throw new NotPrinted();
  return printed;
}

function comment(text: string, indent: string): string {
  if (text === '') return ''; // as yaml prints an empty comment: not at all
  if (text.includes('\n')) throw new NotPrinted();
  return `${indent}#${text}\n`;
}

/** Whether an object has a member of its own. */
function hasKeys(value: object): boolean {
  for (const key in value) if (Object.hasOwn(value, key)) return true;
  return false;
}

/**
 * `indent` and `more` after it (`'  '`: one level deeper; `'- '`: a list item's lead): the few there are made
 * once.
 */
function indented(indent: string, more: '  ' | '- '): string {
  const made = madeIndents[more];
  let text = made.get(indent);
  if (text === undefined) {
    text = `${indent}${more}`;
    made.set(indent, text);
  }
  return text;
}
const madeIndents = { '  ': new Map<string, string>(), '- ': new Map<string, string>() };

/**
 * The lines of a map's entries at `indent` (its first key printed at `first`, after a `- `), added to `out`
 * piece by piece (joined once by gate1Text: no string made for a line).
 */
function mapLines(
  yaml: Yaml,
  out: string[],
  map: Record<string, Value>,
  indent: string,
  first = indent,
): void {
  let lead = first;
  const before = out.length;
  // Key by key, not by entries: a plan prints thousands of these maps, and each entry would be a pair.
  for (const key in map) {
    if (!Object.hasOwn(map, key)) continue;
    const value = map[key] as Value | undefined;
    if (value === undefined) continue; // as yaml leaves it out
    const name = scalar(yaml, key);
    if (Array.isArray(value)) {
      if (value.length === 0) throw new NotPrinted();
      out.push(lead, name, ':\n');
      listLines(yaml, out, value, indented(indent, '  '));
    } else if (value !== null && typeof value === 'object') {
      if (!hasKeys(value)) throw new NotPrinted();
      out.push(lead, name, ':\n');
      mapLines(yaml, out, value, indented(indent, '  '));
    } else out.push(lead, name, ': ', scalar(yaml, value), '\n');
    lead = indent;
  }
  if (out.length === before) throw new NotPrinted();
}

function listLines(
  yaml: Yaml,
  out: string[],
  items: Value[],
  indent: string,
  comments: Array<string | undefined> = [],
): void {
  for (let index = 0; index < items.length; index += 1) {
    const item = items[index] as Value;
    const before = comments[index];
    if (before !== undefined) out.push(comment(before, indent));
    if (Array.isArray(item)) throw new NotPrinted();
    if (item !== null && typeof item === 'object') {
      if (!hasKeys(item)) throw new NotPrinted();
      mapLines(yaml, out, item, indented(indent, '  '), indented(indent, '- '));
    } else out.push(indented(indent, '- '), scalar(yaml, item), '\n');
  }
}

/**
 * `# header`, a blank line, then each list under its key, each item after its comment; undefined when this
 * printer cannot be sure to print it as `yaml` does. Joined once at the end: a text built by `+=` is held
 * by V8 as a tree of its pieces, and a plan keeps thousands of these texts.
 */
export function gate1Text(
  yaml: Yaml,
  header: string,
  lists: Array<[string, CommentedItem[]]>,
): string | undefined {
  try {
    const out = [comment(header, ''), '\n'];
    // An index, not for-of with destructuring: no iterator objects a list (TurboFan is held off while a
    // project is declared).
    for (let l = 0; l < lists.length; l++) {
      const list = lists[l] as [string, CommentedItem[]];
      const key = list[0];
      const items = list[1];
      if (items.length === 0) throw new NotPrinted();
      out.push(`${scalar(yaml, key)}:\n`);
      listLines(
        yaml,
        out,
        items.map((i) => i.value),
        '  ',
        items.map((i) => i.comment),
      );
    }
    return out.join('');
  } catch (error) {
    if (error instanceof NotPrinted) return undefined;
    throw error;
  }
}

/** The same text printed by `yaml` from its document. */
export function gate1TextWithYaml(
  yaml: Yaml,
  header: string,
  lists: Array<[string, CommentedItem[]]>,
): string {
  const doc = new yaml.Document(
    Object.fromEntries(lists.map(([key, items]) => [key, items.map((i) => i.value)])),
  );
  doc.commentBefore = header;
  for (const [key, items] of lists) {
    const printed = doc.get(key) as { items: Array<{ commentBefore?: string }> };
    for (const [index, item] of items.entries())
      if (item.comment !== undefined && printed.items[index] !== undefined)
        printed.items[index].commentBefore = item.comment;
  }
  return doc.toString({ lineWidth: 0 });
}

/** gate1Text, else gate1TextWithYaml. */
export function printGate1(yaml: Yaml, header: string, lists: Array<[string, CommentedItem[]]>): string {
  return gate1Text(yaml, header, lists) ?? gate1TextWithYaml(yaml, header, lists);
}
