import { PlatformError } from './errors.js';
import type { ListPosition } from './storage/types.js';

/** A cursor is the position of the last row of a page: base64url of `createdAt|id`. */
export function encodeCursor(position: ListPosition): string {
  return Buffer.from(`${position.createdAt.toISOString()}|${position.id}`).toString('base64url');
}

export function decodeCursor(cursor: string): ListPosition {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const bar = text.indexOf('|');
  const createdAt = new Date(text.slice(0, bar));
  const id = text.slice(bar + 1);
  if (bar < 0 || Number.isNaN(createdAt.getTime()) || id.length === 0) {
    throw PlatformError.invalid('cursor: not a cursor returned by this list', [{ path: ['cursor'], code: 'invalid_cursor', message: 'not a cursor returned by this list' }]);
  }
  return { createdAt, id };
}
