import { getBuiltinModule } from 'node:process';
import { describe, expect, it } from 'vitest';
import {
  collectGarbage,
  topTierCompilerWanted,
  withOldGenerationRoom,
  withoutOptimisingCompilers,
  withoutTopTierCompiler,
} from '../../src/io/young-generation.js';

describe('collectGarbage', () => {
  it('collects what nothing holds any more, at once', async () => {
    const ref = (() => new WeakRef({ rows: Array.from({ length: 1_000 }, (_, i) => ({ i })) }))();
    // A WeakRef's target is kept until the job that made it ends.
    await new Promise((resolve) => setImmediate(resolve));
    collectGarbage();
    expect(ref.deref()).toBeUndefined();
  });
});

describe('withoutOptimisingCompilers', () => {
  // V8's own view of a function (natives syntax, allowed only while these two are made).
  const v8 = getBuiltinModule('node:v8');
  v8.setFlagsFromString('--allow-natives-syntax');
  const optimiseNow = new Function(
    'f',
    '%PrepareFunctionForOptimization(f); f(3); f(4); %OptimizeFunctionOnNextCall(f); f(5);',
  );
  const statusOf = new Function('f', 'return %GetOptimizationStatus(f)') as (f: unknown) => number;
  v8.setFlagsFromString('--no-allow-natives-syntax');
  const OPTIMIZED = 1 << 4;
  const loop = () => new Function('n', 'let s = 0; for (let i = 0; i < n; i += 1) s += i; return s;');

  it('runs the work unoptimised and gives its answer; the compilers are on again after it', async () => {
    const during = loop();
    const answer = await withoutOptimisingCompilers(async () => {
      optimiseNow(during);
      return statusOf(during);
    });
    expect(answer & OPTIMIZED).toBe(0);
    const after = loop();
    optimiseNow(after);
    expect(statusOf(after) & OPTIMIZED).toBe(OPTIMIZED);
  });

  it("passes the work's error on, and turns the compilers on again", async () => {
    await expect(withoutOptimisingCompilers(() => Promise.reject(new Error('refused')))).rejects.toThrow(
      'refused',
    );
    const after = loop();
    optimiseNow(after);
    expect(statusOf(after) & OPTIMIZED).toBe(OPTIMIZED);
  });
});

describe('withoutTopTierCompiler', () => {
  // V8's own view of its compilers (natives syntax, allowed only while these are made).
  const v8 = getBuiltinModule('node:v8');
  v8.setFlagsFromString('--allow-natives-syntax');
  const compilers = new Function('return [%IsTurbofanEnabled(), %IsMaglevEnabled()]') as () => boolean[];
  v8.setFlagsFromString('--no-allow-natives-syntax');

  it('runs the work with Maglev and without TurboFan, and both after it, also after an error', async () => {
    expect(compilers()).toEqual([true, true]);
    const during = await withoutTopTierCompiler(() => Promise.resolve(compilers()));
    expect(during).toEqual([false, true]);
    expect(compilers()).toEqual([true, true]);
    await expect(withoutTopTierCompiler(() => Promise.reject(new Error('no manifest')))).rejects.toThrow(
      'no manifest',
    );
    expect(compilers()).toEqual([true, true]);
  });

  it('gives TurboFan back as soon as the work asks for it (its first table to change), and leaves it on', async () => {
    const seen = await withoutTopTierCompiler(() => {
      const held = compilers();
      topTierCompilerWanted();
      return Promise.resolve([held, compilers()]);
    });
    expect(seen).toEqual([
      [false, true],
      [true, true],
    ]);
    expect(compilers()).toEqual([true, true]);
    // Asked for outside such work: nothing to give back.
    topTierCompilerWanted();
    expect(compilers()).toEqual([true, true]);
  });
});

describe('withOldGenerationRoom', () => {
  // What it changes is when V8 starts a full collection of its own, which depends on the heap's state and V8's
  // other heuristics: its effect is measured by the bench (docs/bench.md), not here.
  it("passes the work's answer and its error on", async () => {
    await expect(withOldGenerationRoom(() => Promise.resolve(42))).resolves.toBe(42);
    await expect(withOldGenerationRoom(() => Promise.reject(new Error('no manifest')))).rejects.toThrow(
      'no manifest',
    );
  });
});

// Last in the file: V8's last-resort collection drops the bytecode of functions not run yet, and the natives
// functions the blocks above make when the file is collected would then no longer compile.
describe('collectGarbage, a compiler job holding what was dropped', () => {
  it('collects what only an optimising compiler job waiting to be installed still holds', async () => {
    // A closure over the objects, optimised on a background thread and not installed yet (natives syntax,
    // allowed only while such a function is made): the job holds the closure, and with it the objects.
    // The rest of the heap's garbage first: what the job holds is then all a full collection could free.
    collectGarbage();
    const v8 = getBuiltinModule('node:v8');
    const natives = (...code: string[]) => {
      v8.setFlagsFromString('--allow-natives-syntax');
      try {
        return new Function(...code);
      } finally {
        v8.setFlagsFromString('--no-allow-natives-syntax');
      }
    };
    const optimiseInBackground = natives(
      'rows',
      `const f = (x) => rows[x % 10].i + x;
       %PrepareFunctionForOptimization(f); f(1); f(2);
       %DisableOptimizationFinalization();
       %OptimizeFunctionOnNextCall(f, 'concurrent'); f(3);
       %WaitForBackgroundOptimization();`,
    ) as (rows: unknown[]) => void;
    try {
      const ref = (() => {
        const rows = Array.from({ length: 10_000 }, (_, i) => ({ i }));
        optimiseInBackground(rows);
        return new WeakRef(rows);
      })();
      await new Promise((resolve) => setImmediate(resolve));
      collectGarbage();
      expect(ref.deref()).toBeUndefined();
    } finally {
      // Made only now: the collection drops the bytecode of a function not run yet.
      (natives('%FinalizeOptimization()') as () => void)();
    }
  });
});
