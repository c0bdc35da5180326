// Differences between two gate1.yml texts, as a unified diff. Pure: no I/O.
// `semantic` compares the normalised documents instead of the texts: both are parsed, keys sorted
// at every level and numbers/strings printed one way, so key order, quoting, comments and
// formatting alone are not a difference. List order is kept: it is part of what the author wrote.
import { FILE_HEADERS_ONLY, formatPatch, structuredPatch } from 'diff';
import type { StructuredPatchHunk } from 'diff';
import { parseDocument, stringify } from 'yaml';

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
}

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
export function diffGateTexts(before: DiffSide, after: DiffSide, options: { semantic: boolean }): GateDiff {
  const oldText = options.semantic ? normaliseGateYaml(before) : before.text;
  const newText = options.semantic ? normaliseGateYaml(after) : after.text;
  const patch = structuredPatch(before.name, after.name, oldText, newText, undefined, undefined, {
    context: 3,
  });
  const hunks = patch.hunks.map(toHunk);
  return {
    identical: hunks.length === 0,
    semantic: options.semantic,
    hunks,
    unified: hunks.length === 0 ? '' : formatPatch(patch, FILE_HEADERS_ONLY),
  };
}

/** The unified text diff of any two texts (empty when they are equal). */
export function unifiedDiff(before: DiffSide, after: DiffSide): string {
  return diffGateTexts(before, after, { semantic: false }).unified;
}

/** The canonical YAML text of a document: what semantic mode compares. */
export function normaliseGateYaml(side: DiffSide): string {
  const document = parseDocument(side.text, { logLevel: 'error' });
  const [problem] = document.errors;
  if (problem !== undefined) {
    const position = problem.linePos?.[0] ?? { line: 1, col: 1 };
    throw new GateYamlError(side.name, position.line, position.col, firstLine(problem.message));
  }
  const value: unknown = document.toJS({ maxAliasCount: 100 });
  return stringify(value, { sortMapEntries: true, lineWidth: 0 });
}

/** Whether two gate1.yml texts hold the same rules (semantic comparison); a text that is not YAML is never the same. */
export function sameGateRules(a: string, b: string): boolean {
  try {
    return normaliseGateYaml({ name: 'a', text: a }) === normaliseGateYaml({ name: 'b', text: b });
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
