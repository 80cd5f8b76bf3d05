import { FastResponse } from 'srvx';
import type { BinaryBody, BinaryMedia } from './route.js';

/**
 * Headers of every stored body served as it is: never sniffed into another type, and never a
 * page — opened on its own it runs nothing and loads nothing (a sandboxed document with no
 * sources), so a body that a browser could take for markup stays inert.
 */
export const BINARY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'content-security-policy': "default-src 'none'; sandbox",
  'cross-origin-resource-policy': 'same-origin',
} as const;

/** True when `If-None-Match` names the tag (its weak form too, as RFC 9110 compares them) or is `*`. */
export function matchesEtag(ifNoneMatch: string | null, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch.split(',').some((tag) => {
    const t = tag.trim();
    return t === '*' || t.replace(/^W\//, '') === `"${etag}"`;
  });
}

/**
 * A `binary` route's answer: the bytes with their type, length and strong `ETag`, cached only by
 * the caller (`private`: another user of a shared cache must never get them); 304 without the
 * bytes when `If-None-Match` already names them. The type must be one the route declares: a
 * handler that answers another is a bug, not something to serve.
 */
export function binaryResponse(body: BinaryBody, media: BinaryMedia, requestHeaders: Headers): Response {
  if (!media.types.includes(body.contentType)) throw new Error(`A binary route answered ${body.contentType}, which it does not declare`);
  const headers = {
    etag: `"${body.etag}"`,
    'cache-control': `private, max-age=${media.maxAgeSeconds}`,
    vary: 'Authorization',
    ...BINARY_HEADERS,
  };
  if (matchesEtag(requestHeaders.get('if-none-match'), body.etag)) return new FastResponse(null, { status: 304, headers });
  // A view of its own buffer's bytes, as a body is sent (the type alone says ArrayBufferLike).
  return new FastResponse(body.bytes as Uint8Array<ArrayBuffer>, {
    status: 200,
    headers: {
      ...headers,
      'content-type': body.contentType,
      'content-length': String(body.bytes.byteLength),
      'content-disposition': `inline; filename="${media.fileName(body).replace(/[^\w.-]/g, '_')}"`,
    },
  });
}
