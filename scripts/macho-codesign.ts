// Ad-hoc code signatures for the macOS executables, written on Linux. Apple silicon runs only signed code,
// injecting the SEA blob removes Node's own signature (postject drops LC_CODE_SIGNATURE), and no Mach-O signing
// tool is packaged for Debian or npm. An ad-hoc signature is no more than what Go's linker writes into every
// darwin/arm64 binary it builds (cmd/internal/codesign): an embedded-signature SuperBlob holding one
// CodeDirectory, the SHA-256 of every 4 KiB page of the file before the signature, flagged ad hoc and
// linker-signed, with the __TEXT segment as the executable segment. `codesign -v` on a Mac accepts it, and
// `codesign --sign "Developer ID…" --force` replaces it for a notarized release.
//
// The same reader checks a signature Apple's codesign wrote: the build uses it to hold each macOS Node binary
// to the Node.js project's own signature (its page hashes match, and it names the Node.js Foundation's
// Developer ID) before gds is injected into it.
import { createHash } from 'node:crypto';

const MH_MAGIC_64 = 0xfeedfacf;
const LC_SEGMENT_64 = 0x19;
const LC_CODE_SIGNATURE = 0x1d;
const CSMAGIC_EMBEDDED_SIGNATURE = 0xfade0cc0;
const CSMAGIC_CODEDIRECTORY = 0xfade0c02;
const CSSLOT_CODEDIRECTORY = 0;
const CSSLOT_ALTERNATE_CODEDIRECTORIES = 0x1000;
const CSSLOT_SIGNATURESLOT = 0x10000;
const CS_HASHTYPE_SHA1 = 1;
const CS_HASHTYPE_SHA256 = 2;
const CS_ADHOC = 0x2;
const CS_LINKER_SIGNED = 0x20000;
const CS_EXECSEG_MAIN_BINARY = 0x1;
const PAGE_SIZE_BITS = 12;
const PAGE_SIZE = 1 << PAGE_SIZE_BITS;
const SUPER_BLOB_SIZE = 12;
const BLOB_INDEX_SIZE = 8;
/** A CodeDirectory of version 0x20400 (with the executable segment) up to its identifier. */
const CODE_DIRECTORY_SIZE = 88;
const CPU_TYPE_ARM64 = 0x0100000c;

interface Segment {
  name: string;
  /** Offset of the load command in the file. */
  command: number;
  vmsize: bigint;
  fileoff: number;
  filesize: number;
}

interface MachO {
  cpuType: number;
  ncmds: number;
  sizeofcmds: number;
  segments: Segment[];
  /** The LC_CODE_SIGNATURE command's offset, and the signature it points at. */
  codeSignature?: { command: number; dataoff: number; datasize: number };
  /** The lowest file offset a section's contents start at: load commands must end before it. */
  firstSectionOffset: number;
}

function parse(file: Buffer): MachO {
  if (file.length < 32 || file.readUInt32LE(0) !== MH_MAGIC_64)
    throw new Error('not a 64-bit little-endian Mach-O file (a universal binary is not signed here)');
  const ncmds = file.readUInt32LE(16);
  const sizeofcmds = file.readUInt32LE(20);
  const segments: Segment[] = [];
  let codeSignature: MachO['codeSignature'];
  let firstSectionOffset = file.length;
  let at = 32;
  for (let i = 0; i < ncmds; i++) {
    const cmd = file.readUInt32LE(at);
    const size = file.readUInt32LE(at + 4);
    if (size < 8 || at + size > 32 + sizeofcmds) throw new Error(`load command ${i} runs past the header`);
    if (cmd === LC_SEGMENT_64) {
      segments.push({
        name: file.toString('latin1', at + 8, at + 24).replace(/\0+$/, ''),
        command: at,
        vmsize: file.readBigUInt64LE(at + 32),
        fileoff: Number(file.readBigUInt64LE(at + 40)),
        filesize: Number(file.readBigUInt64LE(at + 48)),
      });
      const sections = file.readUInt32LE(at + 64);
      for (let s = 0; s < sections; s++) {
        const offset = file.readUInt32LE(at + 72 + s * 80 + 48);
        if (offset > 0) firstSectionOffset = Math.min(firstSectionOffset, offset);
      }
    } else if (cmd === LC_CODE_SIGNATURE) {
      codeSignature = {
        command: at,
        dataoff: file.readUInt32LE(at + 8),
        datasize: file.readUInt32LE(at + 12),
      };
    }
    at += size;
  }
  return { cpuType: file.readUInt32LE(4), ncmds, sizeofcmds, segments, codeSignature, firstSectionOffset };
}

const roundUp = (n: number, to: number) => Math.ceil(n / to) * to;

/** The size of the SuperBlob an ad-hoc signature of `codeLimit` bytes takes. */
function signatureSize(codeLimit: number, identifier: string): number {
  const pages = Math.ceil(codeLimit / PAGE_SIZE);
  return SUPER_BLOB_SIZE + BLOB_INDEX_SIZE + CODE_DIRECTORY_SIZE + identifier.length + 1 + pages * 32;
}

/**
 * The file signed ad hoc: any earlier signature replaced, LC_CODE_SIGNATURE added when missing (in the room
 * every linker leaves between the load commands and the first section), the signature appended at the end of
 * __LINKEDIT (which must be the file's last segment) and __LINKEDIT grown to hold it.
 */
export function adHocSign(input: Buffer, identifier: string): Buffer {
  const macho = parse(input);
  const linkedit = macho.segments.find((s) => s.name === '__LINKEDIT');
  const text = macho.segments.find((s) => s.name === '__TEXT');
  if (linkedit === undefined || text === undefined) throw new Error('no __LINKEDIT or __TEXT segment');
  if (macho.segments.some((s) => s !== linkedit && s.fileoff + s.filesize > linkedit.fileoff))
    throw new Error('__LINKEDIT is not the last segment of the file');
  // The code is everything up to the old signature, or up to the end of the file when there is none.
  const codeEnd = macho.codeSignature?.dataoff ?? linkedit.fileoff + linkedit.filesize;
  const codeLimit = roundUp(codeEnd, 16);
  const size = signatureSize(codeLimit, identifier);
  const output = Buffer.alloc(codeLimit + size);
  input.copy(output, 0, 0, Math.min(codeEnd, input.length));

  let command = macho.codeSignature?.command;
  if (command === undefined) {
    command = 32 + macho.sizeofcmds;
    if (command + 16 > macho.firstSectionOffset)
      throw new Error('no room after the load commands for LC_CODE_SIGNATURE');
    if (output.subarray(command, command + 16).some((byte) => byte !== 0))
      throw new Error('the bytes after the load commands are not free');
    output.writeUInt32LE(macho.ncmds + 1, 16);
    output.writeUInt32LE(macho.sizeofcmds + 16, 20);
    output.writeUInt32LE(LC_CODE_SIGNATURE, command);
    output.writeUInt32LE(16, command + 4);
  }
  output.writeUInt32LE(codeLimit, command + 8);
  output.writeUInt32LE(size, command + 12);
  const linkeditSize = codeLimit + size - linkedit.fileoff;
  const segmentPage = macho.cpuType === CPU_TYPE_ARM64 ? 0x4000 : 0x1000;
  output.writeBigUInt64LE(BigInt(linkeditSize), linkedit.command + 48);
  const vmsize = BigInt(roundUp(linkeditSize, segmentPage));
  if (vmsize > linkedit.vmsize) output.writeBigUInt64LE(vmsize, linkedit.command + 32);

  // The signature, big-endian as every code-signing structure is.
  const pages = Math.ceil(codeLimit / PAGE_SIZE);
  const directoryLength = size - SUPER_BLOB_SIZE - BLOB_INDEX_SIZE;
  const identOffset = CODE_DIRECTORY_SIZE;
  const hashOffset = identOffset + identifier.length + 1;
  const sig = output.subarray(codeLimit);
  sig.writeUInt32BE(CSMAGIC_EMBEDDED_SIGNATURE, 0);
  sig.writeUInt32BE(size, 4);
  sig.writeUInt32BE(1, 8);
  sig.writeUInt32BE(CSSLOT_CODEDIRECTORY, 12);
  sig.writeUInt32BE(SUPER_BLOB_SIZE + BLOB_INDEX_SIZE, 16);
  const cd = sig.subarray(SUPER_BLOB_SIZE + BLOB_INDEX_SIZE);
  cd.writeUInt32BE(CSMAGIC_CODEDIRECTORY, 0);
  cd.writeUInt32BE(directoryLength, 4);
  cd.writeUInt32BE(0x20400, 8);
  cd.writeUInt32BE(CS_ADHOC | CS_LINKER_SIGNED, 12);
  cd.writeUInt32BE(hashOffset, 16);
  cd.writeUInt32BE(identOffset, 20);
  cd.writeUInt32BE(0, 24); // no special slots: no Info.plist, requirements or entitlements
  cd.writeUInt32BE(pages, 28);
  cd.writeUInt32BE(codeLimit, 32);
  cd.writeUInt8(32, 36);
  cd.writeUInt8(CS_HASHTYPE_SHA256, 37);
  cd.writeUInt8(0, 38);
  cd.writeUInt8(PAGE_SIZE_BITS, 39);
  // spare2, scatterOffset, teamOffset, spare3 and codeLimit64 stay 0.
  cd.writeBigUInt64BE(BigInt(text.fileoff), 64);
  cd.writeBigUInt64BE(BigInt(text.filesize), 72);
  cd.writeBigUInt64BE(BigInt(CS_EXECSEG_MAIN_BINARY), 80);
  cd.write(identifier, identOffset, 'latin1');
  // Last, the hashes: the pages include the load commands changed above.
  for (let page = 0; page < pages; page++) {
    const start = page * PAGE_SIZE;
    createHash('sha256')
      .update(output.subarray(start, Math.min(start + PAGE_SIZE, codeLimit)))
      .digest()
      .copy(cd, hashOffset + page * 32);
  }
  return output;
}

export interface CodeDirectory {
  identifier: string;
  flags: number;
  hashType: number;
  codeLimit: number;
  pageSize: number;
  execSegBase: bigint;
  execSegLimit: bigint;
  execSegFlags: bigint;
  /** Pages whose hash does not match the file (none for a good signature). */
  badPages: number[];
}

export interface CodeSignature {
  directories: CodeDirectory[];
  /** The CMS signature blob of a signature made with a certificate; absent for ad hoc. */
  cms?: Buffer;
}

/** The file's embedded signature, every CodeDirectory's page hashes checked against the file. */
export function readCodeSignature(file: Buffer): CodeSignature {
  const macho = parse(file);
  const where = macho.codeSignature;
  if (where === undefined) throw new Error('the file is not signed (no LC_CODE_SIGNATURE)');
  const linkedit = macho.segments.find((s) => s.name === '__LINKEDIT');
  if (
    linkedit === undefined ||
    where.dataoff < linkedit.fileoff ||
    where.dataoff + where.datasize > linkedit.fileoff + linkedit.filesize ||
    where.dataoff + where.datasize > file.length
  )
    throw new Error('the signature lies outside __LINKEDIT');
  const sig = file.subarray(where.dataoff, where.dataoff + where.datasize);
  if (sig.readUInt32BE(0) !== CSMAGIC_EMBEDDED_SIGNATURE) throw new Error('no embedded-signature SuperBlob');
  const count = sig.readUInt32BE(8);
  const directories: CodeDirectory[] = [];
  let cms: Buffer | undefined;
  for (let i = 0; i < count; i++) {
    const type = sig.readUInt32BE(SUPER_BLOB_SIZE + i * BLOB_INDEX_SIZE);
    const offset = sig.readUInt32BE(SUPER_BLOB_SIZE + i * BLOB_INDEX_SIZE + 4);
    const length = sig.readUInt32BE(offset + 4);
    const blob = sig.subarray(offset, offset + length);
    if (type === CSSLOT_SIGNATURESLOT) cms = blob.subarray(8);
    const isDirectory =
      type === CSSLOT_CODEDIRECTORY ||
      (type >= CSSLOT_ALTERNATE_CODEDIRECTORIES && type < CSSLOT_ALTERNATE_CODEDIRECTORIES + 5);
    if (isDirectory && blob.readUInt32BE(0) === CSMAGIC_CODEDIRECTORY)
      directories.push(codeDirectory(blob, file));
  }
  if (directories.length === 0) throw new Error('the signature holds no CodeDirectory');
  return { directories, ...(cms === undefined ? {} : { cms }) };
}

function codeDirectory(cd: Buffer, file: Buffer): CodeDirectory {
  const version = cd.readUInt32BE(8);
  const hashOffset = cd.readUInt32BE(16);
  const identOffset = cd.readUInt32BE(20);
  const pages = cd.readUInt32BE(28);
  const codeLimit = cd.readUInt32BE(32);
  const hashSize = cd.readUInt8(36);
  const hashType = cd.readUInt8(37);
  const pageSize = 1 << cd.readUInt8(39);
  const algorithm =
    hashType === CS_HASHTYPE_SHA256 ? 'sha256' : hashType === CS_HASHTYPE_SHA1 ? 'sha1' : undefined;
  if (algorithm === undefined) throw new Error(`hash type ${hashType} is not read here`);
  const badPages: number[] = [];
  for (let page = 0; page < pages; page++) {
    const start = page * pageSize;
    const digest = createHash(algorithm)
      .update(file.subarray(start, Math.min(start + pageSize, codeLimit)))
      .digest()
      .subarray(0, hashSize);
    const stored = cd.subarray(hashOffset + page * hashSize, hashOffset + (page + 1) * hashSize);
    if (!digest.equals(stored)) badPages.push(page);
  }
  if (pages !== Math.ceil(codeLimit / pageSize)) badPages.push(-1);
  const exec = version >= 0x20400;
  return {
    identifier: cd.toString('latin1', identOffset, cd.indexOf(0, identOffset)),
    flags: cd.readUInt32BE(12),
    hashType,
    codeLimit,
    pageSize,
    execSegBase: exec ? cd.readBigUInt64BE(64) : 0n,
    execSegLimit: exec ? cd.readBigUInt64BE(72) : 0n,
    execSegFlags: exec ? cd.readBigUInt64BE(80) : 0n,
    badPages,
  };
}

/**
 * Throws unless the file carries the Node.js project's own signature, unchanged: every CodeDirectory's page
 * hashes match the file and the CMS signature names the Node.js Foundation's Developer ID. (The CMS itself is
 * not verified against Apple's certificate chain here; the pinned sha256 of the package is what makes the
 * download trusted, this check that the pinned package is the Node.js project's build.)
 */
export function assertOfficialNodeBinary(file: Buffer, name: string): void {
  const signature = readCodeSignature(file);
  const bad = signature.directories.filter((d) => d.badPages.length > 0);
  if (bad.length > 0) throw new Error(`${name}: its code signature does not match its pages`);
  const signer = signature.cms?.toString('latin1') ?? '';
  if (!signer.includes('Developer ID Application: Node.js Foundation'))
    throw new Error(`${name}: not signed by the Node.js Foundation's Developer ID`);
}

export const AD_HOC_FLAGS = CS_ADHOC | CS_LINKER_SIGNED;
