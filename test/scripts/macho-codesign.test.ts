// The ad-hoc signer of the macOS executables (scripts/macho-codesign.ts), on a small Mach-O made here: the
// signature it writes is read back by the same reader that checks Apple's (test/release holds it to the Node.js
// project's real signatures and to the released executables), every page hash matches, a changed byte is found,
// and signing again gives the same bytes.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { AD_HOC_FLAGS, adHocSign, readCodeSignature } from '../../scripts/macho-codesign.js';

const TEXT_SIZE = 3 * 4096 + 100;
const LINKEDIT_SIZE = 5000;

/** A Mach-O with __TEXT (one section at 4096) and __LINKEDIT, like a linked program after postject. */
function machO(cpuType = 0x0100000c): Buffer {
  const file = Buffer.alloc(TEXT_SIZE + LINKEDIT_SIZE);
  const textCommand = 72 + 80;
  const linkeditCommand = 72;
  file.writeUInt32LE(0xfeedfacf, 0);
  file.writeUInt32LE(cpuType, 4);
  file.writeUInt32LE(2, 12); // MH_EXECUTE
  file.writeUInt32LE(2, 16);
  file.writeUInt32LE(textCommand + linkeditCommand, 20);
  let at = 32;
  // __TEXT with one section
  file.writeUInt32LE(0x19, at);
  file.writeUInt32LE(textCommand, at + 4);
  file.write('__TEXT', at + 8, 'latin1');
  file.writeBigUInt64LE(0x100000000n, at + 24);
  file.writeBigUInt64LE(0x4000n, at + 32);
  file.writeBigUInt64LE(0n, at + 40);
  file.writeBigUInt64LE(BigInt(TEXT_SIZE), at + 48);
  file.writeUInt32LE(1, at + 64);
  file.write('__text', at + 72, 'latin1');
  file.writeUInt32LE(4096, at + 72 + 48);
  at += textCommand;
  file.writeUInt32LE(0x19, at);
  file.writeUInt32LE(linkeditCommand, at + 4);
  file.write('__LINKEDIT', at + 8, 'latin1');
  file.writeBigUInt64LE(0x100004000n, at + 24);
  file.writeBigUInt64LE(0x4000n, at + 32);
  file.writeBigUInt64LE(BigInt(TEXT_SIZE), at + 40);
  file.writeBigUInt64LE(BigInt(LINKEDIT_SIZE), at + 48);
  for (let i = 4096; i < file.length; i++) file[i] = (i * 31) & 0xff;
  return file;
}

describe('adHocSign', () => {
  it('adds LC_CODE_SIGNATURE and an ad-hoc SHA-256 CodeDirectory whose every page hash matches', () => {
    const unsigned = machO();
    const signed = adHocSign(unsigned, 'gds');
    expect(signed.readUInt32LE(16)).toBe(3);
    const [directory, ...others] = readCodeSignature(signed).directories;
    expect(others).toEqual([]);
    expect(directory).toMatchObject({
      identifier: 'gds',
      flags: AD_HOC_FLAGS,
      hashType: 2,
      pageSize: 4096,
      codeLimit: Math.ceil((TEXT_SIZE + LINKEDIT_SIZE) / 16) * 16,
      execSegBase: 0n,
      execSegLimit: BigInt(TEXT_SIZE),
      execSegFlags: 1n,
      badPages: [],
    });
    expect(readCodeSignature(signed).cms).toBeUndefined();
    // Nothing of the program changed but the load commands the signature needs.
    expect(signed.subarray(4096, unsigned.length).equals(unsigned.subarray(4096))).toBe(true);
    // __LINKEDIT now reaches the end of the file, signature included.
    const linkeditAt = 32 + 152;
    expect(Number(signed.readBigUInt64LE(linkeditAt + 40) + signed.readBigUInt64LE(linkeditAt + 48))).toBe(
      signed.length,
    );
  });

  it('finds a changed byte, and signing a signed file again gives the same bytes', () => {
    const signed = adHocSign(machO(), 'gds');
    expect(adHocSign(signed, 'gds').equals(signed)).toBe(true);
    const tampered = Buffer.from(signed);
    tampered[4096 * 2 + 7] = (tampered[4096 * 2 + 7] ?? 0) ^ 1;
    expect(readCodeSignature(tampered).directories[0]?.badPages).toEqual([2]);
    // The load commands are hashed too: a changed header is found as well.
    const header = Buffer.from(signed);
    header.writeUInt32LE(3, 12);
    expect(readCodeSignature(header).directories[0]?.badPages).toEqual([0]);
  });

  it('hashes exactly what it signs: page n is the SHA-256 of bytes n*4096 up to the code limit', () => {
    const signed = adHocSign(machO(0x01000007), 'gds');
    const codeLimit = signed.readUInt32LE(32 + 152 + 72 + 8);
    const last = Math.floor((codeLimit - 1) / 4096);
    const digest = createHash('sha256')
      .update(signed.subarray(last * 4096, codeLimit))
      .digest('hex');
    expect(signed.subarray(codeLimit).toString('hex')).toContain(digest);
  });

  it('refuses what it cannot sign: not a 64-bit Mach-O, or no room for the load command', () => {
    expect(() => adHocSign(Buffer.from('\x7fELF....................................'), 'gds')).toThrow(
      /not a 64-bit little-endian Mach-O/,
    );
    const crowded = machO();
    crowded.fill(1, 32 + 152 + 72, 4096);
    expect(() => adHocSign(crowded, 'gds')).toThrow(/not free/);
  });
});
