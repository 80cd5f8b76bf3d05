import { crc32, inflateRawSync } from 'node:zlib';
import { limitExceeded } from './limits.js';

/** A problem with the archive itself (not a limit): the caller reports it as an invalid file. */
export class ArchiveError extends Error {}

interface Entry {
  readonly name: string;
  readonly method: number;
  readonly compressedSize: number;
  /** As the archive declares it; may lie. */
  readonly declaredSize: number;
  readonly localOffset: number;
}

const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;

/** The entries of a zip archive's central directory. Throws `ArchiveError` for a broken, encrypted or ZIP64 archive. */
function centralDirectory(zip: Buffer): Entry[] {
  // The end record is the last 22 bytes, or earlier by the length of a comment (at most 65,535).
  let end = -1;
  for (let at = zip.length - 22; at >= Math.max(0, zip.length - 22 - 65_535); at--) {
    if (zip.readUInt32LE(at) === EOCD) {
      end = at;
      break;
    }
  }
  if (end < 0) throw new ArchiveError('it has no zip directory (end record missing)');
  const count = zip.readUInt16LE(end + 10);
  const offset = zip.readUInt32LE(end + 16);
  if (count === 0xffff || offset === 0xffffffff) throw new ArchiveError('ZIP64 archives are not supported');
  const entries: Entry[] = [];
  let at = offset;
  for (let i = 0; i < count; i++) {
    if (at + 46 > zip.length || zip.readUInt32LE(at) !== CENTRAL) throw new ArchiveError('its zip directory is broken');
    const flags = zip.readUInt16LE(at + 8);
    if (flags & 1) throw new ArchiveError('it is encrypted');
    const nameLength = zip.readUInt16LE(at + 28);
    entries.push({
      name: zip.toString('utf8', at + 46, at + 46 + nameLength),
      method: zip.readUInt16LE(at + 10),
      compressedSize: zip.readUInt32LE(at + 20),
      declaredSize: zip.readUInt32LE(at + 24),
      localOffset: zip.readUInt32LE(at + 42),
    });
    at += 46 + nameLength + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
  }
  return entries;
}

/** The stored bytes of an entry (still compressed), from its local header. */
function rawData(zip: Buffer, entry: Entry): Buffer {
  const at = entry.localOffset;
  if (at + 30 > zip.length || zip.readUInt32LE(at) !== LOCAL) throw new ArchiveError(`its entry ${entry.name} is broken`);
  const start = at + 30 + zip.readUInt16LE(at + 26) + zip.readUInt16LE(at + 28);
  if (start + entry.compressedSize > zip.length) throw new ArchiveError(`its entry ${entry.name} is cut short`);
  return zip.subarray(start, start + entry.compressedSize);
}

/** Index of `needle` in `data` from `from`, or the end of the data. */
const find = (data: Buffer, needle: string, from: number) => {
  const at = data.indexOf(needle, from);
  return at < 0 ? data.length : at;
};

/**
 * How deep the elements of an XML document nest where that first passes `max`, or 0 when it
 * never does. One pass over the bytes (markup is ASCII in UTF-8): comments, CDATA,
 * processing instructions and declarations are skipped, quoted attribute values may hold `>`.
 */
export function xmlDepthOver(xml: Buffer, max: number): number {
  let depth = 0;
  let at = xml.indexOf(0x3c); // <
  while (at >= 0) {
    const next = xml[at + 1];
    let end: number;
    if (next === 0x2f) {
      depth--;
      end = find(xml, '>', at);
    } else if (next === 0x3f) {
      end = find(xml, '?>', at);
    } else if (next === 0x21) {
      const head = xml.toString('latin1', at, at + 9);
      end = head.startsWith('<!--') ? find(xml, '-->', at + 4) : head === '<![CDATA[' ? find(xml, ']]>', at + 9) : find(xml, '>', at);
    } else {
      let quote = 0;
      end = at + 1;
      for (; end < xml.length; end++) {
        const c = xml[end];
        if (quote) {
          if (c === quote) quote = 0;
        } else if (c === 0x22 || c === 0x27) quote = c;
        else if (c === 0x3e) break;
      }
      if (xml[end - 1] !== 0x2f && ++depth > max) return depth;
    }
    at = xml.indexOf(0x3c, end);
  }
  return 0;
}

/** One entry of a zip archive as written: its bytes as stored (`method` 0: as they are; 8: deflated). */
export interface ZipEntry {
  readonly name: string;
  readonly method: 0 | 8;
  readonly body: Uint8Array;
  /** CRC-32 and length of the content (uncompressed), as the headers declare them. */
  readonly crc: number;
  readonly size: number;
}

/** A little-endian record of `size` bytes with `fields` ([offset, 2 or 4 bytes, value]) set, the rest zero. */
function record(size: number, fields: readonly [number, 2 | 4, number][]): Buffer {
  const bytes = Buffer.alloc(size);
  for (const [at, width, value] of fields) {
    if (width === 2) bytes.writeUInt16LE(value, at);
    else bytes.writeUInt32LE(value, at);
  }
  return bytes;
}

/** A zip archive of `entries`: local headers and bodies, the central directory, the end record. */
export function zipArchive(entries: readonly ZipEntry[]): Buffer {
  const parts: Buffer[] = [];
  const directory: Buffer[] = [];
  let offset = 0;
  for (const { name, method, body, crc, size } of entries) {
    const nameBytes = Buffer.from(name);
    // Method, CRC-32, sizes and name length: in the same order in both headers, from byte 8 of
    // the local one and byte 10 of the central one (which adds "version made by").
    const common = (from: number): [number, 2 | 4, number][] => [
      [from, 2, method],
      [from + 6, 4, crc],
      [from + 10, 4, body.length],
      [from + 14, 4, size],
      [from + 18, 2, nameBytes.length],
    ];
    const local = record(30, [[0, 4, LOCAL], [4, 2, 20], ...common(8)]);
    const central = record(46, [[0, 4, CENTRAL], [4, 2, 20], [6, 2, 20], ...common(10), [42, 4, offset]]);
    parts.push(local, nameBytes, Buffer.from(body));
    directory.push(central, nameBytes);
    offset += local.length + nameBytes.length + body.length;
  }
  const size = directory.reduce((n, b) => n + b.length, 0);
  return Buffer.concat([
    ...parts,
    ...directory,
    record(22, [
      [0, 4, EOCD],
      [8, 2, entries.length],
      [10, 2, entries.length],
      [12, 4, size],
      [16, 4, offset],
    ]),
  ]);
}

/**
 * The XML parts of a DOCX (`.xml`, `.rels`: all that is read of it; images and other media
 * are left out) unpacked under the limits, as a new archive of stored entries that mammoth
 * reads without inflating anything. Before any inflating, the sizes the archive declares must
 * add up to at most `maxUnzippedBytes`; while inflating, each entry may fill only what is left
 * of that budget (declared sizes can lie: inflating stops there). Each part's elements may nest
 * at most `maxNesting` deep (mammoth converts XML recursively). Over a limit: `payload_too_large`
 * naming it; a broken archive: `ArchiveError`.
 */
export function unpackDocx(bytes: Uint8Array, limits: { maxUnzippedBytes: number; maxNesting: number }): Buffer {
  const zip = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const { maxUnzippedBytes: budget, maxNesting } = limits;
  const parts = centralDirectory(zip).filter((e) => /\.(xml|rels)$/i.test(e.name));
  const declared = parts.reduce((sum, e) => sum + e.declaredSize, 0);
  if (declared > budget) throw limitExceeded('maxUnzippedBytes', `the DOCX unpacks to ${declared} bytes`, budget);
  let used = 0;
  const files = parts.map((entry) => {
    const raw = rawData(zip, entry);
    const overBudget = () => limitExceeded('maxUnzippedBytes', `the DOCX unpacks to more than ${budget} bytes`, budget);
    let data: Buffer;
    if (entry.method === 0) data = raw;
    else if (entry.method === 8) {
      try {
        // Inflating stops one byte past what is left: an entry that fills the budget exactly is fine.
        data = inflateRawSync(raw, { maxOutputLength: budget - used + 1 });
      } catch (error) {
        if ((error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw overBudget();
        throw new ArchiveError(`its entry ${entry.name} does not inflate: ${(error as Error).message}`);
      }
    } else throw new ArchiveError(`its entry ${entry.name} uses compression method ${entry.method}, not deflate`);
    used += data.length;
    if (used > budget) throw overBudget();
    const depth = xmlDepthOver(data, maxNesting);
    if (depth > 0) throw limitExceeded('maxNesting', `the DOCX part ${entry.name} nests elements ${depth} deep`, maxNesting);
    return { name: entry.name, data };
  });
  return zipArchive(files.map(({ name, data }) => ({ name, method: 0, body: data, crc: crc32(data), size: data.length })));
}
