// The two fields of a Windows executable (PE32+) that injecting gds into node.exe leaves wrong. Node's
// Authenticode signature is a certificate table at the end of the file, named by the optional header's
// Certificate Table entry; it signs Node, not gds, so it is removed before the blob goes in (Node's SEA guide
// does the same with signtool remove), else the entry points into the relocated resources and verifiers report
// a signature "not at the end of the file". After injection the optional header's CheckSum is computed again
// (the image checksum of imagehlp's CheckSumMappedFile), which postject leaves stale.

interface PeLayout {
  /** Offset of the optional header's CheckSum field. */
  checksumAt: number;
  /** Offset of the Certificate Table data directory entry (file offset and size of the table). */
  certificateEntryAt: number;
}

function layout(file: Buffer): PeLayout {
  if (file.length < 0x40 || file.toString('latin1', 0, 2) !== 'MZ') throw new Error('not a PE file (no MZ)');
  const pe = file.readUInt32LE(0x3c);
  if (pe + 24 > file.length || file.readUInt32LE(pe) !== 0x00004550) throw new Error('not a PE file');
  const optional = pe + 24;
  const magic = file.readUInt16LE(optional);
  if (magic !== 0x20b) throw new Error(`not a PE32+ file (optional header magic ${magic.toString(16)})`);
  const directories = file.readUInt32LE(optional + 108);
  if (directories < 5) throw new Error('the PE file has no Certificate Table entry');
  return { checksumAt: optional + 64, certificateEntryAt: optional + 112 + 4 * 8 };
}

export interface PeSignatureInfo {
  checksum: number;
  certificateTable: { offset: number; size: number };
}

export function readPe(file: Buffer): PeSignatureInfo {
  const at = layout(file);
  return {
    checksum: file.readUInt32LE(at.checksumAt),
    certificateTable: {
      offset: file.readUInt32LE(at.certificateEntryAt),
      size: file.readUInt32LE(at.certificateEntryAt + 4),
    },
  };
}

/** The file without its Authenticode signature: the table cut off the end and its entry zeroed. */
export function removeAuthenticode(input: Buffer): Buffer {
  const at = layout(input);
  const { offset, size } = readPe(input).certificateTable;
  if (offset === 0 && size === 0) return input;
  if (offset + size !== input.length)
    throw new Error('the certificate table is not at the end of the file: not removed');
  const output = Buffer.from(input.subarray(0, offset));
  output.writeUInt32LE(0, at.certificateEntryAt);
  output.writeUInt32LE(0, at.certificateEntryAt + 4);
  return output;
}

/** The PE image checksum: 16-bit one's-complement-style sum of the file, CheckSum field as 0, plus its length. */
export function peChecksum(file: Buffer): number {
  const { checksumAt } = layout(file);
  let sum = 0;
  const words = Math.floor(file.length / 2);
  for (let i = 0; i < words; i++) {
    const offset = i * 2;
    if (offset === checksumAt || offset === checksumAt + 2) continue;
    sum += file.readUInt16LE(offset);
    sum = (sum & 0xffff) + (sum >>> 16);
  }
  if (file.length % 2 === 1) {
    sum += file[file.length - 1] ?? 0;
    sum = (sum & 0xffff) + (sum >>> 16);
  }
  sum = (sum & 0xffff) + (sum >>> 16);
  return (sum + file.length) >>> 0;
}

/** The file with its CheckSum field set to what `peChecksum` computes. */
export function withPeChecksum(file: Buffer): Buffer {
  const { checksumAt } = layout(file);
  file.writeUInt32LE(peChecksum(file), checksumAt);
  return file;
}
