// The Windows executable's signature entry and checksum (scripts/pe-file.ts), on a small PE32+ made here;
// test/release checks the real node.exe (whose stored checksum the same computation reproduces) and the built
// executable with osslsigncode.
import { describe, expect, it } from 'vitest';
import { peChecksum, readPe, removeAuthenticode, withPeChecksum } from '../../scripts/pe-file.js';

const PE = 0x80;
const OPTIONAL = PE + 24;

function pe(certificate = Buffer.from('a certificate table, signed', 'latin1')): Buffer {
  const body = Buffer.alloc(4096);
  body.write('MZ', 0, 'latin1');
  body.writeUInt32LE(PE, 0x3c);
  body.writeUInt32LE(0x00004550, PE);
  body.writeUInt16LE(0x20b, OPTIONAL);
  body.writeUInt32LE(16, OPTIONAL + 108);
  for (let i = 0x400; i < body.length; i++) body[i] = (i * 7) & 0xff;
  body.writeUInt32LE(body.length, OPTIONAL + 144);
  body.writeUInt32LE(certificate.length, OPTIONAL + 148);
  return Buffer.concat([body, certificate]);
}

describe('removeAuthenticode', () => {
  it('cuts the certificate table off the end and zeroes its entry', () => {
    const signed = pe();
    expect(readPe(signed).certificateTable).toEqual({ offset: 4096, size: 27 });
    const unsigned = removeAuthenticode(signed);
    expect(unsigned.length).toBe(4096);
    expect(readPe(unsigned).certificateTable).toEqual({ offset: 0, size: 0 });
    expect(removeAuthenticode(unsigned)).toBe(unsigned);
  });

  it('refuses a table that is not at the end, and a file that is not PE32+', () => {
    const moved = Buffer.concat([pe(), Buffer.from('resources after it')]);
    expect(() => removeAuthenticode(moved)).toThrow(/not at the end/);
    expect(() => readPe(Buffer.from('#!/bin/sh\n'.padEnd(128, ' ')))).toThrow(/not a PE file/);
  });
});

describe('peChecksum', () => {
  it('skips its own field, folds the carries and adds the length', () => {
    const file = removeAuthenticode(pe());
    const sum = peChecksum(file);
    file.writeUInt32LE(0xdeadbeef, OPTIONAL + 64);
    expect(peChecksum(file)).toBe(sum);
    const changed = Buffer.from(file);
    changed[0x500] = (changed[0x500] ?? 0) ^ 0xff;
    expect(peChecksum(changed)).not.toBe(sum);
    const odd = Buffer.concat([file, Buffer.from([1])]);
    expect(peChecksum(odd)).not.toBe(sum);
    expect(readPe(withPeChecksum(file)).checksum).toBe(sum);
    expect(sum).toBeGreaterThan(file.length);
  });
});
