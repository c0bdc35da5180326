// Finds where a document path (patternChecks[0].regex) and an offset inside a string value sit in the
// YAML source, as 1-based line and column.
import type { Document, LineCounter, Node, Pair, Scalar } from 'yaml';
import type { Yaml } from '../libraries/yaml.js';

export type PathSegment = string | number;

export interface Position {
  line: number;
  column: number;
}

/** `['customPredicates', 1, 'sql']` -> `customPredicates[1].sql` */
export function formatPath(path: readonly PathSegment[]): string {
  return path.reduce<string>(
    (out, seg) => (typeof seg === 'number' ? `${out}[${seg}]` : out ? `${out}.${seg}` : seg),
    '',
  );
}

interface Located {
  node?: Node;
  key?: Node;
}

export class SourceMap {
  constructor(
    private readonly yaml: Yaml,
    private readonly doc: Document,
    private readonly lines: LineCounter,
    private readonly text: string,
  ) {}

  position(offset: number): Position {
    const { line, col } = this.lines.linePos(Math.max(0, Math.min(offset, this.text.length)));
    return { line, column: col };
  }

  /** The deepest node on the path, and the key of the pair holding it. */
  private locate(path: readonly PathSegment[]): Located {
    const { isAlias, isMap, isScalar, isSeq } = this.yaml;
    let current: Located = { node: (this.doc.contents as Node | null) ?? undefined };
    for (const seg of path) {
      let node: unknown = current.node;
      if (isAlias(node)) node = node.resolve(this.doc);
      if (isMap(node) && typeof seg === 'string') {
        const pair = node.items.find((p: Pair) => isScalar(p.key) && String(p.key.value) === seg);
        if (!pair) return current;
        current = { node: (pair.value as Node | null) ?? undefined, key: pair.key as Node };
        if (!current.node) return { node: current.key, key: current.key };
      } else if (isSeq(node) && typeof seg === 'number') {
        const item = node.items[seg] as Node | undefined;
        if (!item) return current;
        current = { node: item };
      } else {
        return current;
      }
    }
    return current;
  }

  /** Where the value at `path` starts; `atKey` points at its key instead (for unknown keys). */
  at(path: readonly PathSegment[], atKey = false): Position {
    const { node, key } = this.locate(path);
    const target = atKey && key ? key : node;
    return this.position(target?.range?.[0] ?? 0);
  }

  /** Where character `index` of the string value at `path` sits, falling back to the value's start. */
  inString(path: readonly PathSegment[], index: number | undefined): Position {
    const { node } = this.locate(path);
    const start = node?.range?.[0] ?? 0;
    if (index === undefined || !this.yaml.isScalar(node) || typeof node.value !== 'string')
      return this.position(start);
    const offset = this.offsetInScalar(node, index);
    const value = node.value;
    return this.position(offset !== undefined && this.text[offset] === value[index] ? offset : start);
  }

  private offsetInScalar(node: Scalar, index: number): number | undefined {
    const [start = 0, end = 0] = node.range ?? [];
    const value = String(node.value);
    const source = this.text.slice(start, end);
    const { Scalar } = this.yaml;
    switch (node.type) {
      case Scalar.PLAIN:
        return source === value ? start + index : undefined;
      case Scalar.QUOTE_SINGLE: {
        const quotesBefore = value.slice(0, index).split("'").length - 1;
        return start + 1 + index + quotesBefore;
      }
      case Scalar.QUOTE_DOUBLE:
        return source === `"${value}"` ? start + 1 + index : undefined;
      case Scalar.BLOCK_LITERAL:
        return this.offsetInBlockLiteral(start, value, index);
      default:
        return undefined;
    }
  }

  /** In a `|` block, value line k is source line k after the header, indented by the block's indentation. */
  private offsetInBlockLiteral(start: number, value: string, index: number): number | undefined {
    const headerEnd = this.text.indexOf('\n', start);
    if (headerEnd < 0) return undefined;
    const before = value.slice(0, index).split('\n');
    const lineInValue = before.length - 1;
    const columnInLine = before[before.length - 1]?.length ?? 0;
    let lineStart = headerEnd + 1;
    const indent = /^ */.exec(this.text.slice(lineStart))?.[0].length ?? 0;
    for (let k = 0; k < lineInValue; k++) {
      const next = this.text.indexOf('\n', lineStart);
      if (next < 0) return undefined;
      lineStart = next + 1;
    }
    return lineStart + indent + columnInLine;
  }
}
