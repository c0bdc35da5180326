// The initial memory of libpg-query's and jq's WebAssembly, lowered before compiling: the module
// still validates, PostgreSQL's parser answers exactly what the package's own module answers, also for a
// statement that makes it grow its memory well past the lowered start, and a module whose layout is not
// read is left as it was.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as pg from 'libpg-query';
import { initialMemoryPages, lowerInitialMemory } from '../../src/core/wasm-initial-memory.js';
import { readSharedFixture } from '../helpers/fixtures.js';
import { needs, noSharedFixtures } from '../helpers/skip.js';

// The project's lib has no DOM types, where WebAssembly's are declared: the little used here.
interface WasmApi {
  validate(bytes: Uint8Array): boolean;
  instantiate(bytes: Uint8Array, imports: object): Promise<{ instance: object }>;
}
const { WebAssembly: wasm } = globalThis as unknown as { WebAssembly: WasmApi };
const require = createRequire(import.meta.url);
const pgWasmPath = require.resolve('libpg-query/wasm/libpg-query.wasm');
// jq-wasm's exports hide the .wasm; it sits in dist/build beside the CommonJS entry.
const jqWasmPath = join(dirname(require.resolve('jq-wasm')), 'build/jq.wasm');
const realView = 'real/sql/snowflake_jfb_shared.billing_estimator_rates.sql';

interface PgModule {
  HEAPU8: Uint8Array;
  lengthBytesUTF8(text: string): number;
  stringToUTF8(text: string, at: number, max: number): void;
  UTF8ToString(at: number): string;
  getValue(at: number, type: 'i32'): number;
  _malloc(bytes: number): number;
  _free(at: number): void;
  _wasm_parse_query_raw(at: number): number;
  _wasm_free_parse_result(at: number): void;
}
type Factory = (options: object) => Promise<PgModule>;

/** libpg-query's Emscripten module instantiated from `bytes`, as the single executable does. */
async function pgModuleFrom(bytes: Uint8Array): Promise<PgModule> {
  const factory = require('libpg-query/wasm/libpg-query.js') as Factory | { default: Factory };
  const create = typeof factory === 'function' ? factory : factory.default;
  return create({
    instantiateWasm(imports: object, receive: (instance: object) => void) {
      void wasm.instantiate(bytes, imports).then(({ instance }) => receive(instance));
      return {};
    },
  });
}

/** The parse tree as JSON text, or PostgreSQL's message (what libpg-query's parseSync reads). */
function parse(module: PgModule, sql: string): string {
  const size = module.lengthBytesUTF8(sql) + 1;
  const text = module._malloc(size);
  module.stringToUTF8(sql, text, size);
  const result = module._wasm_parse_query_raw(text);
  try {
    const error = module.getValue(result + 8, 'i32');
    if (error !== 0) return `error: ${module.UTF8ToString(module.getValue(error, 'i32'))}`;
    return module.UTF8ToString(module.getValue(result, 'i32'));
  } finally {
    module._free(text);
    module._wasm_free_parse_result(result);
  }
}

let lowered: Promise<PgModule> | undefined;
function loweredParser(): Promise<PgModule> {
  lowered ??= pgModuleFrom(lowerInitialMemory(readFileSync(pgWasmPath)));
  return lowered;
}

async function expectSameAnswers(module: PgModule, texts: string[]): Promise<void> {
  await pg.loadModule();
  for (const sql of texts) {
    let expected: string;
    try {
      expected = JSON.stringify(pg.parseSync(sql));
    } catch (error) {
      expected = `error: ${(error as Error).message}`;
    }
    const answer = parse(module, sql);
    expect(answer.startsWith('error: ') ? answer : JSON.stringify(JSON.parse(answer))).toBe(expected);
  }
}

describe('lowerInitialMemory', () => {
  it("lowers libpg-query's 128 MiB and jq's 16 MiB to their data and stack, and both still validate", () => {
    const pgBytes = readFileSync(pgWasmPath);
    expect(initialMemoryPages(pgBytes)).toBe(2048);
    const pgLowered = lowerInitialMemory(pgBytes);
    // The stack pointer starts at about 32.9 MiB (Emscripten's 32 MiB stack after 0.9 MiB of data): 34 MiB.
    expect(initialMemoryPages(pgLowered)).toBe(543);
    expect(pgLowered.length).toBe(readFileSync(pgWasmPath).length);
    expect(wasm.validate(pgLowered)).toBe(true);

    const jqBytes = readFileSync(jqWasmPath);
    expect(initialMemoryPages(jqBytes)).toBe(256);
    const jqLowered = lowerInitialMemory(jqBytes);
    expect(initialMemoryPages(jqLowered)).toBeLessThan(64);
    expect(wasm.validate(jqLowered)).toBe(true);
  });

  it("answers what libpg-query's own module answers, also where the parser grows its memory", async () => {
    const lowered = await loweredParser();
    const startBytes = lowered.HEAPU8.length;
    expect(startBytes).toBe(543 * 65_536);
    const columns = Array.from({ length: 15_000 }, (_, i) => `coalesce(t.c${i}, 'x${i}') as c${i}`);
    await expectSameAnswers(lowered, [
      'create view v as select 1 as a',
      `create view wide as select ${columns.join(',\n  ')} from t`,
      'create view broken as select from where',
    ]);
    expect(lowered.HEAPU8.length).toBeGreaterThan(startBytes + 16 * 65_536);
  });

  it('answers the same for a real 262-line view', needs(noSharedFixtures), async () => {
    await expectSameAnswers(await loweredParser(), [readSharedFixture(realView)]);
  });

  it('leaves alone what is not a module, and a module that declares no memory', () => {
    const text = new TextEncoder().encode('not WebAssembly at all');
    expect(lowerInitialMemory(text)).toEqual(new TextEncoder().encode('not WebAssembly at all'));
    const empty = Uint8Array.of(0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00);
    expect(initialMemoryPages(empty)).toBeUndefined();
    expect(lowerInitialMemory(empty)).toEqual(empty);
  });
});
