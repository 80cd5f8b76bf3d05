/**
 * The AWS event stream's binary framing (`application/vnd.amazon.eventstream`), written here
 * from its specification so that a test of an adapter proves the adapter's decoder against an
 * independent encoder. One message:
 *
 * ```
 * total length (uint32 BE) | headers length (uint32 BE) | prelude CRC32 (of the 8 bytes before)
 * headers: name length (uint8) | name (UTF-8) | value type (uint8, 7 = string) | value length (uint16 BE) | value
 * payload (here: JSON)
 * message CRC32 (of every byte before it, the prelude and its CRC included)
 * ```
 *
 * Bedrock's ConverseStream sends events as `:message-type: event` with `:event-type` (e.g.
 * `contentBlockDelta`) and `:content-type: application/json`; a modelled error mid-stream as
 * `:message-type: exception` with `:exception-type` (e.g. `throttlingException`).
 */

/** CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320), as the event stream uses. */
const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

export function crc32(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) crc = (CRC_TABLE[(crc ^ byte) & 0xff] as number) ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** Value type 7: a UTF-8 string. (The others, bool, byte, int, long, bytes, timestamp, uuid, are not used by Bedrock's events.) */
const STRING = 7;

/** One message with string headers, in the order given, and `payload`. */
export function encodeMessage(headers: Readonly<Record<string, string>>, payload: Uint8Array): Uint8Array {
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(headers)) {
    const nameBytes = Buffer.from(name, 'utf8');
    const valueBytes = Buffer.from(value, 'utf8');
    const head = Buffer.alloc(1 + nameBytes.length + 1 + 2);
    head.writeUInt8(nameBytes.length, 0);
    nameBytes.copy(head, 1);
    head.writeUInt8(STRING, 1 + nameBytes.length);
    head.writeUInt16BE(valueBytes.length, 2 + nameBytes.length);
    parts.push(head, valueBytes);
  }
  const headerBytes = Buffer.concat(parts);
  const total = 12 + headerBytes.length + payload.length + 4;
  const message = Buffer.alloc(total);
  message.writeUInt32BE(total, 0);
  message.writeUInt32BE(headerBytes.length, 4);
  message.writeUInt32BE(crc32(message.subarray(0, 8)), 8);
  headerBytes.copy(message, 12);
  Buffer.from(payload).copy(message, 12 + headerBytes.length);
  message.writeUInt32BE(crc32(message.subarray(0, total - 4)), total - 4);
  return message;
}

/** An event of a ConverseStream answer: `{ "<eventType>": payload }` on the wire is the event type header and the payload alone. */
export function encodeEvent(eventType: string, payload: Record<string, unknown>): Uint8Array {
  return encodeMessage({ ':event-type': eventType, ':content-type': 'application/json', ':message-type': 'event' }, Buffer.from(JSON.stringify(payload), 'utf8'));
}

/** A modelled exception mid-stream (`throttlingException`, `validationException`, `modelStreamErrorException`, ...). */
export function encodeException(exceptionType: string, payload: Record<string, unknown>): Uint8Array {
  return encodeMessage({ ':exception-type': exceptionType, ':content-type': 'application/json', ':message-type': 'exception' }, Buffer.from(JSON.stringify(payload), 'utf8'));
}

/** What `decodeMessages` reads back: the headers and the payload of one message. */
export interface DecodedMessage {
  readonly headers: Record<string, string>;
  readonly payload: Uint8Array;
}

/**
 * The messages of a whole body, checking both CRCs (for the fake's own test: a round trip of
 * the encoder). Throws on a truncated message or a checksum that does not match.
 */
export function decodeMessages(body: Uint8Array): DecodedMessage[] {
  const out: DecodedMessage[] = [];
  const view = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  for (let at = 0; at < view.length; ) {
    const total = view.readUInt32BE(at);
    const headersLength = view.readUInt32BE(at + 4);
    if (at + total > view.length) throw new Error('truncated message');
    if (crc32(view.subarray(at, at + 8)) !== view.readUInt32BE(at + 8)) throw new Error('prelude checksum mismatch');
    if (crc32(view.subarray(at, at + total - 4)) !== view.readUInt32BE(at + total - 4)) throw new Error('message checksum mismatch');
    const headers: Record<string, string> = {};
    for (let h = at + 12; h < at + 12 + headersLength; ) {
      const nameLength = view.readUInt8(h);
      const name = view.toString('utf8', h + 1, h + 1 + nameLength);
      if (view.readUInt8(h + 1 + nameLength) !== STRING) throw new Error(`header ${name} is not a string`);
      const valueLength = view.readUInt16BE(h + 2 + nameLength);
      headers[name] = view.toString('utf8', h + 4 + nameLength, h + 4 + nameLength + valueLength);
      h += 4 + nameLength + valueLength;
    }
    out.push({ headers, payload: view.subarray(at + 12 + headersLength, at + total - 4) });
    at += total;
  }
  return out;
}
