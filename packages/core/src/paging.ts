/** `total`, `hasMore` and `nextOffset` of an offset-paged list. */
export function offsetPageFields(offset: number, page: { items: readonly unknown[]; total: number }) {
  const nextOffset = offset + page.items.length;
  return { total: page.total, hasMore: nextOffset < page.total, nextOffset };
}
