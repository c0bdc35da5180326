// Differences between two gate1.yml texts, as a unified diff. Pure: no I/O.
// `semantic` compares the normalised documents instead of the texts: both are parsed, keys sorted
// at every level and numbers/strings printed one way, so key order, quoting, comments and
// formatting alone are not a difference. List order is kept: it is part of what the author wrote.
// The sides are first compared by check (keyed by name; a field override by its field): which
// checks were added, removed, changed or moved. The line diff after it is bounded: past
// MAX_EDIT_LINES differing lines (10,000 reordered checks), Myers' O(N·D) search gives way to one
// hunk from the first differing line to the last, found in linear time.
import type { StructuredPatch, StructuredPatchHunk } from 'diff';
import type { Document } from 'yaml';
import { countText } from './count-text.js';
import { type Diff, loadDiff } from './libraries/diff.js';
import { loadYaml, type Yaml } from './libraries/yaml.js';
import { declaresNothing } from './gate1/schema.js';

/** The libraries a gate diff reads and compares with (the semantic mode's reading alone needs yaml). */
export interface GateDiffLibraries {
  yaml: Yaml;
  diff: Diff;
}

let loaded: GateDiffLibraries | undefined;

/** yaml and the diff library, loaded once: a plan asks for them for every table it compares. */
export async function loadGateDiffLibraries(): Promise<GateDiffLibraries> {
  if (loaded !== undefined) return loaded;
  const [yaml, diff] = await Promise.all([loadYaml(), loadDiff()]);
  loaded = { yaml, diff };
  return loaded;
}

export interface DiffSide {
  /** Shown in the `---` / `+++` headers and in error positions. */
  name: string;
  text: string;
}

export interface DiffHunk {
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  lines: string[];
}

export interface GateDiff {
  identical: boolean;
  semantic: boolean;
  hunks: DiffHunk[];
  /** The unified diff (`---`, `+++`, `@@` and the lines); empty when identical. */
  unified: string;
  /** The differences by check, when both sides list their checks in a form read by name. */
  checks?: CheckChanges;
  /** True when the sides differ in more lines than MAX_EDIT_LINES: one hunk spans them all. */
  coarse?: boolean;
}

/** A check: its list (`patternChecks`, `customPredicates`, `fieldOverrides`) and its name (or field). */
export interface CheckRef {
  section: string;
  name: string;
}

export interface CheckChanges {
  added: CheckRef[];
  removed: CheckRef[];
  changed: CheckRef[];
  /** Checks on both sides, unchanged or not, that are not in the same order: the fewest that moved. */
  moved: CheckRef[];
}

/**
 * One line saying what changed by check, when the line diff alone says it poorly: checks moved, or over
 * MAX_EDIT_LINES lines differ. Undefined otherwise (the unified diff says it all).
 */
export function checkSummary(diff: GateDiff): string | undefined {
  const { checks } = diff;
  if (checks === undefined || diff.identical) return undefined;
  if (checks.moved.length === 0 && diff.coarse !== true) return undefined;
  const parts: string[] = [];
  const part = (refs: CheckRef[], verb: string) => {
    if (refs.length === 0) return;
    const names = refs.slice(0, 3).map((r) => r.name);
    const more = refs.length > 3 ? `, … (${countText(refs.length)})` : '';
    parts.push(`${verb} ${names.join(', ')}${more}`);
  };
  part(checks.added, 'added');
  part(checks.removed, 'removed');
  part(checks.changed, 'changed');
  part(checks.moved, 'moved');
  const coarse = diff.coarse === true ? ' (over 1,000 lines differ: one hunk spans them)' : '';
  return parts.length === 0 ? undefined : `By check: ${parts.join('; ')}.${coarse}`;
}

/** The most differing lines the line diff searches for a shortest edit; beyond, one hunk spans them. */
export const MAX_EDIT_LINES = 1_000;

/** A side that is not valid YAML in semantic mode, with the 1-based position of the first problem. */
export class GateYamlError extends Error {
  constructor(
    readonly source: string,
    readonly line: number,
    readonly col: number,
    readonly reason: string,
  ) {
    super(`${source}:${line}:${col}: ${reason}`);
    this.name = 'GateYamlError';
  }
}

/** `before` is the reference (the server's version, or `--against`), `after` the file being proposed. */
export function diffGateTexts(
  { yaml, diff }: GateDiffLibraries,
  before: DiffSide,
  after: DiffSide,
  options: { semantic: boolean },
): GateDiff {
  const { semantic } = options;
  if (before.text === after.text || !semantic)
    return lineDiff(diff, before, after, before.text, after.text, semantic);
  // Both sides mostly hold the same checks: each distinct check is read and printed once (normaliseByCheck).
  const printed: PrintedChecks = new Map();
  // A side that declares nothing (a table with no gate1.yml yet) is no lines, not the YAML of null.
  const normalise = (side: DiffSide) =>
    declaresNothing(side.text)
      ? ''
      : (normaliseByCheck(yaml, side.text, printed) ?? normaliseGateYaml(yaml, side));
  return lineDiff(diff, before, after, normalise(before), normalise(after), semantic);
}

/** The diff of the two sides' texts as compared (the texts themselves, or their normalised forms). */
function lineDiff(
  diff: Diff,
  before: DiffSide,
  after: DiffSide,
  oldText: string,
  newText: string,
  semantic: boolean,
): GateDiff {
  if (oldText === newText) return { identical: true, semantic, hunks: [], unified: '' };
  const checks = checkChanges(oldText, newText);
  const { patch, coarse } = boundedPatch(diff, before.name, after.name, oldText, newText);
  const hunks = patch.hunks.map(toHunk);
  return {
    identical: hunks.length === 0,
    semantic,
    hunks,
    unified: hunks.length === 0 ? '' : diff.formatPatch(patch, diff.FILE_HEADERS_ONLY),
    ...(checks === undefined ? {} : { checks }),
    ...(coarse ? { coarse } : {}),
  };
}

/** The line diff: the shortest edit within MAX_EDIT_LINES, else one hunk over the differing middle. */
function boundedPatch(
  diff: Diff,
  oldName: string,
  newName: string,
  oldText: string,
  newText: string,
): { patch: StructuredPatch; coarse: boolean } {
  const patch = diff.structuredPatch(oldName, newName, oldText, newText, undefined, undefined, {
    context: 3,
    maxEditLength: MAX_EDIT_LINES,
  });
  if (patch !== undefined) return { patch, coarse: false };
  return { patch: spanningPatch(oldName, newName, oldText, newText), coarse: true };
}

const CONTEXT = 3;
const NO_NEWLINE = '\\ No newline at end of file';

/** Lines as jsdiff reads them: the text split at newlines, and whether the last one ends with one. */
function linesOf(text: string): { lines: string[]; newlineAtEnd: boolean } {
  if (text === '') return { lines: [], newlineAtEnd: true };
  const lines = text.split('\n');
  const newlineAtEnd = text.endsWith('\n');
  if (newlineAtEnd) lines.pop();
  return { lines, newlineAtEnd };
}

/** One hunk from the first differing line to the last (with context): linear time, whatever moved. */
function spanningPatch(oldName: string, newName: string, oldText: string, newText: string): StructuredPatch {
  const before = linesOf(oldText);
  const after = linesOf(newText);
  const a = before.lines;
  const b = after.lines;
  let prefix = 0;
  while (prefix < a.length && prefix < b.length && a[prefix] === b[prefix]) prefix++;
  // The last lines differ when only one side ends with a newline.
  const sameEnding = before.newlineAtEnd === after.newlineAtEnd;
  let suffix = 0;
  while (
    sameEnding &&
    suffix < a.length - prefix &&
    suffix < b.length - prefix &&
    a[a.length - 1 - suffix] === b[b.length - 1 - suffix]
  )
    suffix++;
  const start = Math.max(0, prefix - CONTEXT);
  const oldEnd = Math.min(a.length, a.length - suffix + CONTEXT);
  const newEnd = Math.min(b.length, b.length - suffix + CONTEXT);
  const lines: string[] = [];
  for (let i = start; i < prefix; i++) lines.push(` ${a[i]}`);
  for (let i = prefix; i < a.length - suffix; i++) {
    lines.push(`-${a[i]}`);
    if (i === a.length - 1 && !before.newlineAtEnd) lines.push(NO_NEWLINE);
  }
  for (let i = prefix; i < b.length - suffix; i++) {
    lines.push(`+${b[i]}`);
    if (i === b.length - 1 && !after.newlineAtEnd) lines.push(NO_NEWLINE);
  }
  for (let i = a.length - suffix; i < oldEnd; i++) {
    lines.push(` ${a[i]}`);
    if (i === a.length - 1 && !before.newlineAtEnd) lines.push(NO_NEWLINE);
  }
  const oldLines = oldEnd - start;
  const newLines = newEnd - start;
  const hunk: StructuredPatchHunk = {
    oldStart: oldLines === 0 ? start : start + 1,
    oldLines,
    newStart: newLines === 0 ? start : start + 1,
    newLines,
    lines,
  };
  return {
    oldFileName: oldName,
    newFileName: newName,
    oldHeader: undefined,
    newHeader: undefined,
    hunks: [hunk],
  };
}

/** The lists of checks, and the line that names one of their items (`name:`, `field:`). */
const SECTIONS = new Map(
  [
    ['patternChecks', 'name'],
    ['customPredicates', 'name'],
    ['uniqueChecks', 'name'],
    ['fieldOverrides', 'field'],
  ].map(([section, key]) => [section, new RegExp(`^\\s*(?:-\\s+)?${key}\\s*:\\s*(.*?)\\s*(?:#.*)?$`)]),
);

interface CheckBlocks {
  /** `section/name` → the check's lines, in the order written. */
  blocks: Map<string, string>;
  /** Everything outside the checks (comments, other keys, section headers). */
  frame: string;
}

/** A list item of a check section, as written: its lines (trailing blank lines dropped) and its name. */
interface CheckItem {
  section: string;
  lines: string[];
  /** The item's `name:` (`field:`) within its first 8 lines; null when it names itself twice. */
  key: string | null | undefined;
}

/**
 * The items of the check sections of a gate1.yml in block style (the form gds writes and most people do),
 * read line by line: a list item of a section starts at its `-`; every other line is the frame. Undefined
 * when a section's value is written inline (a flow list; `[]` alone is read as no item).
 */
function scanCheckItems(text: string): { items: CheckItem[]; frame: string[] } | undefined {
  const items: CheckItem[] = [];
  const frame: string[] = [];
  let section: string | undefined;
  let itemIndent = -1;
  let current: CheckItem | undefined;
  const close = () => {
    if (current === undefined) return;
    // Blank lines after a check separate it from the next: not part of it.
    while (current.lines.length > 0 && (current.lines.at(-1) ?? '').trim() === '') current.lines.pop();
    items.push(current);
    current = undefined;
  };
  for (const line of text.split('\n')) {
    const top = /^([A-Za-z_][\w-]*)\s*:(.*)$/.exec(line);
    if (top) {
      close();
      section = SECTIONS.has(top[1] ?? '') ? top[1] : undefined;
      // An inline value (`patternChecks: []`, a flow list) is not read by check.
      if (
        section !== undefined &&
        !/^\s*(#.*)?$/.test(top[2] ?? '') &&
        !/^\s*\[\s*\]\s*(#.*)?$/.test(top[2] ?? '')
      )
        return undefined;
      itemIndent = -1;
      frame.push(line);
      continue;
    }
    const item = section === undefined ? null : /^(\s*)-(\s|$)/.exec(line);
    if (section !== undefined && item && (itemIndent < 0 || item[1]?.length === itemIndent)) {
      close();
      itemIndent = item[1]?.length ?? 0;
      current = { section, lines: [], key: undefined };
    }
    if (current === undefined) {
      frame.push(line);
      continue;
    }
    current.lines.push(line);
    const named = current.lines.length <= 8 ? SECTIONS.get(current.section)?.exec(line) : undefined;
    if (named) current.key = current.key === undefined ? unquoteScalar(named[1] ?? '') : null;
  }
  close();
  return { items, frame };
}

/**
 * The checks of a gate1.yml in block style, by name. Undefined for any other form (flow lists, a nameless
 * or twice-named check): the line diff alone then shows the change.
 */
function checkBlocks(text: string): CheckBlocks | undefined {
  const scanned = scanCheckItems(text);
  if (scanned === undefined) return undefined;
  const blocks = new Map<string, string>();
  for (const { section, lines, key } of scanned.items) {
    if (key === undefined || key === null || blocks.has(`${section}/${key}`)) return undefined;
    blocks.set(`${section}/${key}`, lines.join('\n'));
  }
  return { blocks, frame: scanned.frame.join('\n') };
}

function unquoteScalar(value: string): string {
  if (value.length >= 2 && (value[0] === '"' || value[0] === "'") && value.endsWith(value[0]))
    return value.slice(1, -1);
  return value;
}

const refOf = (key: string): CheckRef => {
  const slash = key.indexOf('/');
  return { section: key.slice(0, slash), name: key.slice(slash + 1) };
};

/** Added, removed, changed and moved checks, by name: linear but for the moves (n log n). */
export function checkChanges(oldText: string, newText: string): CheckChanges | undefined {
  const before = checkBlocks(oldText);
  const after = checkBlocks(newText);
  if (before === undefined || after === undefined) return undefined;
  const added: CheckRef[] = [];
  const removed: CheckRef[] = [];
  const changed: CheckRef[] = [];
  const order = new Map<string, number>();
  let position = 0;
  for (const key of before.blocks.keys()) order.set(key, position++);
  const common: string[] = [];
  for (const [key, block] of after.blocks) {
    const old = before.blocks.get(key);
    if (old === undefined) added.push(refOf(key));
    else {
      common.push(key);
      if (old !== block) changed.push(refOf(key));
    }
  }
  for (const key of before.blocks.keys()) if (!after.blocks.has(key)) removed.push(refOf(key));
  const stay = longestIncreasing(common.map((key) => order.get(key) ?? 0));
  const moved = common.filter((_, index) => !stay.has(index)).map(refOf);
  return { added, removed, changed, moved };
}

/** The indexes of one longest strictly increasing subsequence of `values` (patience sorting, n log n). */
function longestIncreasing(values: number[]): Set<number> {
  const tails: number[] = []; // tails[k]: index of the smallest tail of an increasing run of length k + 1
  const previous = new Array<number>(values.length).fill(-1);
  for (let i = 0; i < values.length; i++) {
    const value = values[i] ?? 0;
    let low = 0;
    let high = tails.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if ((values[tails[middle] ?? 0] ?? 0) < value) low = middle + 1;
      else high = middle;
    }
    if (low > 0) previous[i] = tails[low - 1] ?? -1;
    tails[low] = i;
  }
  const kept = new Set<number>();
  for (let i = tails.at(-1) ?? -1; i >= 0; i = previous[i] ?? -1) kept.add(i);
  return kept;
}

/** The unified text diff of any two texts (empty when they are equal), bounded as gate diff's is. */
export function unifiedDiff(diff: Diff, before: DiffSide, after: DiffSide): string {
  return lineDiff(diff, before, after, before.text, after.text, false).unified;
}

const CANONICAL = { sortMapEntries: true, lineWidth: 0 } as const;

/** The canonical YAML text of a document: what semantic mode compares. */
export function normaliseGateYaml(yaml: Yaml, side: DiffSide): string {
  const document = yaml.parseDocument(side.text, { logLevel: 'error' });
  const [problem] = document.errors;
  if (problem !== undefined) {
    const position = problem.linePos?.[0] ?? { line: 1, col: 1 };
    throw new GateYamlError(side.name, position.line, position.col, firstLine(problem.message));
  }
  const value: unknown = document.toJS({ maxAliasCount: 100 });
  return yaml.stringify(value, CANONICAL);
}

/** A check item's text → its canonical lines as an item of its section (null: not read on its own). */
export type PrintedChecks = Map<string, string | null>;

/**
 * normaliseGateYaml's text, made check by check: each check item of a block-style gate1.yml is read and
 * printed on its own, once per distinct text (`printed` is shared by the two sides of a diff, which mostly
 * hold the same checks), and set into the canonical text of the rest. Undefined, for normaliseGateYaml to
 * answer, wherever a part read alone could mean something else than in the whole: anchors, aliases, tags,
 * directives, several documents, tabs or carriage returns, a check indented less than its `-`, a part that
 * is not valid YAML (normaliseGateYaml then says where), or an inline section. gate-diff-by-check.test.ts
 * compares it with normaliseGateYaml over many texts.
 */
export function normaliseByCheck(yaml: Yaml, text: string, printed: PrintedChecks): string | undefined {
  if (/[\r\t]|^(?:%|---|\.\.\.)/m.test(text)) return undefined;
  const scanned = scanCheckItems(text);
  if (scanned === undefined || scanned.items.length === 0) return undefined;
  const frameDocument = yaml.parseDocument(scanned.frame.join('\n'), QUICK);
  if (!plainDocument(yaml, frameDocument)) return undefined;
  const frame: unknown = frameDocument.toJS();
  if (frame === null || typeof frame !== 'object' || Array.isArray(frame)) return undefined;
  const sections = new Map<string, string[]>();
  for (const item of scanned.items) {
    const itemText = item.lines.join('\n');
    let lines = printed.get(itemText);
    if (lines === undefined) {
      lines = printedItem(yaml, item.lines);
      printed.set(itemText, lines);
    }
    if (lines === null) return undefined;
    const list = sections.get(item.section) ?? [];
    list.push(lines);
    sections.set(item.section, list);
  }
  // Each section with checks prints as a placeholder first, then its checks take the placeholder's line.
  const skeleton: Record<string, unknown> = { ...frame };
  for (const section of sections.keys()) {
    if (!Object.hasOwn(skeleton, section) || skeleton[section] !== null) return undefined;
    skeleton[section] = `gds-checks-of-${section.toLowerCase()}`;
  }
  let canonical = `\n${yaml.stringify(skeleton, CANONICAL)}`;
  for (const [section, lines] of sections) {
    const line = `\n${section}: gds-checks-of-${section.toLowerCase()}\n`;
    const at = canonical.indexOf(line);
    if (at < 0 || canonical.indexOf(line, at + 1) >= 0) return undefined;
    canonical = `${canonical.slice(0, at)}\n${section}:\n${lines.join('')}${canonical.slice(at + line.length)}`;
  }
  return canonical.slice(1);
}

/** Reading options where only whether a part is valid matters: its messages come from normaliseGateYaml. */
const QUICK = { logLevel: 'error', prettyErrors: false } as const;

/** Valid, one document, and no anchor, alias or tag (whose meaning may reach past a part read alone). */
function plainDocument(yaml: Yaml, document: Document): boolean {
  if (document.errors.length > 0) return false;
  const { isAlias, isNode, visit } = yaml;
  let plain = true;
  visit(document, (_key, node) => {
    if (isAlias(node) || (isNode(node) && (node.anchor !== undefined || node.tag !== undefined))) {
      plain = false;
      return visit.BREAK;
    }
    return undefined;
  });
  return plain;
}

/** One check item's canonical lines, indented as an item of a top-level section; null if not read alone. */
function printedItem(yaml: Yaml, lines: string[]): string | null {
  const indent = /^\s*/.exec(lines[0] ?? '')?.[0].length ?? 0;
  // Every line after the `-` deeper than it (blank lines and comments aside), as in the whole document.
  for (const line of lines.slice(1)) {
    const trimmed = line.trimStart();
    if (trimmed !== '' && !trimmed.startsWith('#') && line.length - trimmed.length <= indent) return null;
  }
  const document = yaml.parseDocument(lines.join('\n'), QUICK);
  if (!plainDocument(yaml, document)) return null;
  const value: unknown = document.toJS();
  if (!Array.isArray(value) || value.length !== 1) return null;
  return yaml
    .stringify(value, CANONICAL)
    .split('\n')
    .map((line) => (line === '' ? line : `  ${line}`))
    .join('\n');
}

/** Whether two gate1.yml texts hold the same rules (semantic comparison); a text that is not YAML is never the same. */
export function sameGateRules(yaml: Yaml, a: string, b: string): boolean {
  if (a === b) return true;
  try {
    return (
      normaliseGateYaml(yaml, { name: 'a', text: a }) === normaliseGateYaml(yaml, { name: 'b', text: b })
    );
  } catch (error) {
    if (error instanceof GateYamlError) return false;
    throw error;
  }
}

function toHunk(hunk: StructuredPatchHunk): DiffHunk {
  const { oldStart, oldLines, newStart, newLines, lines } = hunk;
  return { oldStart, oldLines, newStart, newLines, lines };
}

/** yaml's pretty message repeats the position and quotes the source below it: keep the reason only. */
function firstLine(message: string): string {
  const first = message.split('\n', 1)[0] ?? message;
  return first.replace(/ at line \d+, column \d+:?$/, '');
}
