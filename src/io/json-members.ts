// Reads a large JSON file (a dbt manifest of thousands of models is tens of MB) without holding it whole:
// the file is read in chunks through a streaming parser (@streamparser/json), and the members the caller
// asks for are handed over one at a time, each dropped once handed. JSON.parse of the whole text would hold
// the bytes, the text and every object of the file at once (a 5,000-model manifest: about 150 MB).
import { TokenParser, Tokenizer, TokenType } from '@streamparser/json';
import type { ParsedTokenInfo } from '@streamparser/json';
import { readBoundedText, regularFileChunks } from './input.js';
import type { BoundedInputOptions } from './input.js';

export type JsonKind = 'object' | 'array' | 'value';

export interface JsonMembersOptions extends BoundedInputOptions {
  /** Top-level members whose own members are handed over one by one (`nodes`: each node). */
  each: readonly string[];
  /** Top-level members handed over whole (`metadata`). */
  whole: readonly string[];
}

/** What the document was: its root's kind, and the kind of each top-level member (when the root is an object). */
export interface JsonOutline {
  root: JsonKind;
  members: Map<string, JsonKind>;
}

/** The file is not JSON; the message is the parser's. */
export class JsonSyntaxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JsonSyntaxError';
  }
}

function kindOf(token: TokenType): JsonKind {
  return token === TokenType.LEFT_BRACE ? 'object' : token === TokenType.LEFT_BRACKET ? 'array' : 'value';
}

/**
 * Reads the JSON file `path` (bounded, UTF-8, a regular file: as readBoundedText reads it) and calls
 * `member(name, key, value)` for each member `key` of a top-level object member `name` of `options.each`,
 * and `member(name, undefined, value)` for each top-level member of `options.whole`, in file order. A member
 * written twice is handed over twice (JSON.parse keeps the last). Throws JsonSyntaxError for text that is
 * not JSON.
 */
export async function readJsonMembers(
  path: string,
  options: JsonMembersOptions,
  member: (name: string, key: string | undefined, value: unknown) => void,
): Promise<JsonOutline> {
  const each = new Set(options.each);
  const tokenizer = new Tokenizer();
  // keepStack false: a member handed over (and every value under a member not asked for) is dropped from
  // its parent once complete, so nothing of the document stays.
  const parser = new TokenParser({
    paths: [...options.each.map((name) => `$.${name}.*`), ...options.whole.map((name) => `$.${name}`)],
    keepStack: false,
  });
  let root: JsonKind | undefined;
  const members = new Map<string, JsonKind>();
  let depth = 0;
  let name: string | undefined;
  let afterColon = false;
  tokenizer.onToken = (info: ParsedTokenInfo) => {
    const { token } = info;
    if (depth === 0) root ??= kindOf(token);
    else if (depth === 1 && root === 'object') {
      if (afterColon && name !== undefined) members.set(name, kindOf(token));
      if (token === TokenType.STRING && !afterColon) name = info.value as string;
      afterColon = token === TokenType.COLON;
    }
    if (token === TokenType.LEFT_BRACE || token === TokenType.LEFT_BRACKET) depth += 1;
    else if (token === TokenType.RIGHT_BRACE || token === TokenType.RIGHT_BRACKET) depth -= 1;
    parser.write(info);
  };
  tokenizer.onEnd = () => {
    if (!parser.isEnded) parser.end();
  };
  parser.onError = (error: Error) => tokenizer.error(error);
  parser.onEnd = () => {
    if (!tokenizer.isEnded) tokenizer.end();
  };
  // The parser throws plain Errors for text that is not JSON; a failure of `member` is told apart.
  let failure: { error: unknown } | undefined;
  parser.onValue = ({ value, key, parent, stack }) => {
    const top = stack.length === 1 ? key : stack[1]?.key;
    if (typeof top !== 'string') return;
    try {
      if (stack.length === 2 && each.has(top) && !Array.isArray(parent)) member(top, String(key), value);
      else if (stack.length === 1) member(top, undefined, value);
    } catch (error) {
      failure = { error };
      throw error;
    }
  };
  const parse = (step: () => void) => {
    try {
      step();
    } catch (error) {
      if (failure !== undefined) throw failure.error;
      throw new JsonSyntaxError((error as Error).message);
    }
  };
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  const checkUtf8 = async (bytes?: Buffer) => {
    try {
      utf8.decode(bytes, { stream: bytes !== undefined });
    } catch {
      // Read again as every input is read, for the refusal that names the byte and its line.
      await readBoundedText(path, options);
    }
  };
  for await (const chunk of regularFileChunks(path, options)) {
    await checkUtf8(chunk);
    parse(() => tokenizer.write(chunk));
  }
  await checkUtf8();
  parse(() => {
    if (!tokenizer.isEnded) tokenizer.end();
  });
  if (root === undefined) throw new JsonSyntaxError('Unexpected end of JSON input');
  return { root, members };
}
