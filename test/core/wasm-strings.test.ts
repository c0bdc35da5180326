// libpg-query's module with Node's encoder and decoder moving its text (src/core/wasm-strings.ts, as
// dist/gds runs it): parseSync and scanSync answer exactly what the package's own module answers, for
// ASCII, accented letters, CJK, emoji (4-byte characters), refused SQL (messages and positions) and a long
// view; and the methods keep the glue's contract at the edges (a buffer too small, a byte limit, NUL).
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import * as pg from 'libpg-query';
import { useNativeStrings } from '../../src/core/wasm-strings.js';
import type { EmscriptenStrings } from '../../src/core/wasm-strings.js';
import { readSharedFixture } from '../helpers/fixtures.js';
import { needs, noSharedFixtures } from '../helpers/skip.js';

const require = createRequire(import.meta.url);
type Api = Pick<typeof pg, 'loadModule' | 'parseSync' | 'scanSync'>;

/** A second copy of libpg-query (index.cjs and its own Emscripten module), its text moved by Node. */
async function nativeStringsParser(): Promise<{ api: Api; module: EmscriptenStrings }> {
  const factoryPath = require.resolve('libpg-query/wasm/libpg-query.js');
  const indexPath = require.resolve('libpg-query');
  const factory = require(factoryPath) as (options: object) => Promise<EmscriptenStrings>;
  let module: EmscriptenStrings | undefined;
  const keep = (started: EmscriptenStrings) => {
    module = started;
  };
  const wrapped = (options: object) =>
    factory({
      ...options,
      onRuntimeInitialized(this: EmscriptenStrings) {
        keep(this);
        useNativeStrings(this);
      },
    });
  // index.cjs starts its module as it loads: it is loaded afresh with the wrapped factory in the cache.
  const saved = { factory: require.cache[factoryPath], index: require.cache[indexPath] };
  delete require.cache[indexPath];
  require.cache[factoryPath] = { ...saved.factory, exports: wrapped } as NodeJS.Module;
  try {
    const api = require(indexPath) as Api;
    await api.loadModule();
    if (module === undefined) throw new Error('onRuntimeInitialized was not called');
    return { api, module };
  } finally {
    require.cache[factoryPath] = saved.factory;
    require.cache[indexPath] = saved.index;
  }
}

function answer(read: () => unknown): string {
  try {
    return JSON.stringify(read());
  } catch (error) {
    const { message, sqlDetails } = error as { message: string; sqlDetails?: unknown };
    return `error: ${message} ${JSON.stringify(sqlDetails)}`;
  }
}

const texts = [
  'create view v as select 1 as a',
  'create view "Crème brûlée" as select prix as "coût€", \'naïve\' as note from café',
  'create view 売上 as select 金額 as "合計", \'東京\' as city from 注文',
  'create view v as select \'🙂🚀\' as emoji, x as "𝔘𝔫𝔦𝔠𝔬𝔡𝔢" from t -- 👋',
  'create view v as select from where é',
  "create view v as select 'unterminated 🙂 from t",
  `create view wide as select ${Array.from({ length: 3000 }, (_, i) => `c${i} as "é${i}"`).join(', ')} from t`,
];

describe('useNativeStrings', () => {
  it("parseSync and scanSync answer what libpg-query's own module answers", async () => {
    await pg.loadModule();
    const { api } = await nativeStringsParser();
    for (const sql of texts) {
      expect(answer(() => api.parseSync(sql))).toBe(answer(() => pg.parseSync(sql)));
      expect(answer(() => api.scanSync(sql))).toBe(answer(() => pg.scanSync(sql)));
    }
  });

  it('answers the same for a real 262-line view', needs(noSharedFixtures), async () => {
    await pg.loadModule();
    const { api } = await nativeStringsParser();
    const sql = readSharedFixture('real/sql/snowflake_jfb_shared.billing_estimator_rates.sql');
    expect(answer(() => api.parseSync(sql))).toBe(answer(() => pg.parseSync(sql)));
  });

  it("keeps the glue's contract: bytes counted, a limit on what is written and read, the NUL", async () => {
    const { module } = await nativeStringsParser();
    expect(module.lengthBytesUTF8('aé売🙂')).toBe(1 + 2 + 3 + 4);
    const at = 1024;
    module.HEAPU8.fill(0xff, at, at + 16);
    // 8 bytes of room: 7 of text and the NUL; the 4-byte emoji that would not fit is left out whole.
    expect(module.stringToUTF8('aé売🙂', at, 8)).toBe(6);
    expect([...module.HEAPU8.subarray(at, at + 8)]).toEqual([0x61, 0xc3, 0xa9, 0xe5, 0xa3, 0xb2, 0, 0xff]);
    expect(module.UTF8ToString(at)).toBe('aé売');
    expect(module.UTF8ToString(at, 3)).toBe('aé');
    expect(module.UTF8ToString(0)).toBe('');
    expect(module.stringToUTF8('abc', at, 0)).toBe(0);
  });
});
