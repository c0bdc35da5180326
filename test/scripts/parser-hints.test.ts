// The executable's libpg-query asset names the functions a parse reaches for V8 to compile ahead
// (scripts/bundle/parser-hints.ts): the section comes before the code section, where V8 reads it, with one
// byte a function, eager for the named ones; the module still validates; bytes not read are left as they were.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import {
  parserFunctionsReached,
  sectionsOf,
  withCompilationHints,
} from '../../scripts/bundle/parser-hints.js';

// The project's lib has no DOM types, where WebAssembly's are declared: the little used here.
interface WasmApi {
  validate(bytes: Uint8Array): boolean;
  Module: { new (bytes: Uint8Array): object; customSections(module: object, name: string): ArrayBuffer[] };
}
const { WebAssembly: wasm } = globalThis as unknown as { WebAssembly: WasmApi };
const pgWasm = () =>
  new Uint8Array(readFileSync(createRequire(import.meta.url).resolve('libpg-query/wasm/libpg-query.wasm')));

describe('compilation hints of the parser', () => {
  it('finds the functions parsing views reaches, by V8 trace of what it compiles', () => {
    const reached = parserFunctionsReached();
    expect(reached.length).toBeGreaterThan(50);
    expect(reached).toEqual([...new Set(reached)].sort((a, b) => a - b));
  });

  it('names them eager before the code section, one byte a function, and the module still validates', () => {
    const bytes = pgWasm();
    const hinted = withCompilationHints(bytes, [25, 26, 140]);
    expect(wasm.validate(hinted)).toBe(true);
    const order = sectionsOf(hinted).map(({ id, name }) => name ?? String(id));
    expect(order.indexOf('compilationHints')).toBe(order.indexOf('10') - 1);
    const [section] = wasm.Module.customSections(new wasm.Module(hinted), 'compilationHints');
    const payload = new Uint8Array(section ?? new ArrayBuffer(0));
    // 526 declared functions (two bytes of LEB128), after 25 imported ones.
    expect([...payload.subarray(0, 2)]).toEqual([0x8e, 0x04]);
    const hints = payload.subarray(2);
    expect(hints.length).toBe(526);
    expect([hints[0], hints[1], hints[115], hints[2]]).toEqual([0x16, 0x16, 0x16, 0x01]);
    expect(hints.filter((hint) => hint === 0x16).length).toBe(3);
  });

  it('leaves bytes it does not read as they were', () => {
    const notWasm = new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(withCompilationHints(notWasm, [1])).toBe(notWasm);
  });
});
