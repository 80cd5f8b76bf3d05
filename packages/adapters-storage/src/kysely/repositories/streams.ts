import type { StorageAdapter, StreamRepository, StreamRow } from '@agent-platform/core';
import type { Selectable } from 'kysely';
import type { Database } from '../database.js';
import { atomically, lockUser, type RepositoryContext } from './context.js';

type Row = Selectable<Database['streams']>;

const toRow = (r: Row): StreamRow => ({
  id: r.id,
  chatId: r.chat_id,
  userId: r.user_id,
  createdAt: new Date(Number(r.created_at)),
  state: r.state,
  length: r.last_seq,
  leaseUntil: r.lease_until === null ? null : Number(r.lease_until),
});
const live = (r: Row | undefined, now: number): Row | undefined => (r && (r.expires_at === null || Number(r.expires_at) > now) ? r : undefined);

/**
 * Chat streams (see `StreamRepository`). Appends are one writer's: the writer token is checked
 * in the same UPDATE that takes the next sequence number, so a writer that lost the stream
 * writes nothing, and ids have no gaps. Ending a stream whose writer's lease ran out is the same
 * kind of guarded UPDATE (state and lease checked where the row is changed), so of the readers
 * and sweeps of every instance that find it, one ends it and the others change nothing.
 */
export function streamRepository({ db, dialect }: RepositoryContext): Pick<StorageAdapter, 'streams'> {
  const streams: StreamRepository = {
    create(stream, { maxOpen, expiresAt, now }) {
      return atomically(db, async (tx) => {
        // Creates of one user wait for one another, so two instances cannot both take the last place.
        await lockUser(tx, dialect, stream.userId);
        const { open } = await tx
          .selectFrom('streams')
          .select((e) => e.fn.countAll<number | string>().as('open'))
          .where('user_id', '=', stream.userId)
          .where('state', '!=', 'ended')
          .where((e) => e.or([e('expires_at', 'is', null), e('expires_at', '>', now)]))
          .executeTakeFirstOrThrow();
        if (Number(open) >= maxOpen) return false;
        await tx
          .insertInto('streams')
          .values({ id: stream.id, user_id: stream.userId, chat_id: stream.chatId, created_at: stream.createdAt.getTime(), state: 'unwritten', writer: null, expires_at: expiresAt, last_seq: 0 })
          .execute();
        return true;
      });
    },
    async get(userId, chatId, id, now) {
      const r = await db.selectFrom('streams').selectAll().where('id', '=', id).where('user_id', '=', userId).where('chat_id', '=', chatId).executeTakeFirst();
      const found = live(r, now);
      return found && toRow(found);
    },
    async claim(userId, chatId, id, writer, now, leaseUntil) {
      const result = await db
        .updateTable('streams')
        .set({ state: 'writing', writer, expires_at: null, lease_until: leaseUntil })
        .where('id', '=', id)
        .where('user_id', '=', userId)
        .where('chat_id', '=', chatId)
        .where('state', '!=', 'writing')
        .where((e) => e.or([e('expires_at', 'is', null), e('expires_at', '>', now)]))
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) === 1) return 'claimed';
      return (await streams.get(userId, chatId, id, now)) ? 'conflict' : 'not_found';
    },
    append(id, writer, event, leaseUntil) {
      return atomically(db, async (tx) => {
        const row = await tx
          .updateTable('streams')
          .set((e) => ({ last_seq: e('last_seq', '+', 1), lease_until: leaseUntil }))
          .where('id', '=', id)
          .where('writer', '=', writer)
          .where('state', '=', 'writing')
          .returning('last_seq')
          .executeTakeFirst();
        if (!row) return undefined;
        await tx
          .insertInto('stream_events')
          .values({ stream_id: id, seq: row.last_seq, event: JSON.stringify(event) })
          .execute();
        return row.last_seq;
      });
    },
    async heartbeat(id, writer, leaseUntil) {
      const result = await db.updateTable('streams').set({ lease_until: leaseUntil }).where('id', '=', id).where('writer', '=', writer).where('state', '=', 'writing').executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
    async end(id, writer, expiresAt) {
      await db.updateTable('streams').set({ state: 'ended', writer: null, expires_at: expiresAt, lease_until: null }).where('id', '=', id).where('writer', '=', writer).execute();
    },
    endLapsed({ now, expiresAt, event, id }) {
      return atomically(db, async (tx) => {
        let lapsed = tx
          .updateTable('streams')
          .set((e) => ({ state: 'ended', writer: null, expires_at: expiresAt, lease_until: null, last_seq: e('last_seq', '+', 1) }))
          .where('state', '=', 'writing')
          .where('lease_until', '<=', now);
        if (id !== undefined) lapsed = lapsed.where('id', '=', id);
        const ended = await lapsed.returning(['id', 'last_seq']).execute();
        if (ended.length > 0) {
          const json = JSON.stringify(event);
          await tx
            .insertInto('stream_events')
            .values(ended.map((r) => ({ stream_id: r.id, seq: r.last_seq, event: json })))
            .execute();
        }
        return ended.map((r) => r.id);
      });
    },
    async read(id, afterId, limit, now, touchExpiresAt) {
      const r = live(await db.selectFrom('streams').selectAll().where('id', '=', id).executeTakeFirst(), now);
      if (!r) return undefined;
      const rows = await db.selectFrom('stream_events').select(['seq', 'event']).where('stream_id', '=', id).where('seq', '>', afterId).orderBy('seq').limit(limit).execute();
      if (r.state === 'ended') await db.updateTable('streams').set({ expires_at: touchExpiresAt }).where('id', '=', id).where('state', '=', 'ended').execute();
      return { row: toRow(r), events: rows.map((e) => ({ id: e.seq, event: JSON.parse(e.event) as unknown })) };
    },
    async sweep(now) {
      await atomically(db, async (tx) => {
        const expired = tx.selectFrom('streams').select('id').where('expires_at', '<=', now);
        await tx.deleteFrom('stream_events').where('stream_id', 'in', expired).execute();
        await tx.deleteFrom('streams').where('expires_at', '<=', now).execute();
      });
    },
  };
  return { streams };
}
