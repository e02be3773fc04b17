/**
 * Headers as a flat [name, value, name, value, ...] list, the form undici takes and a proxy relays:
 * Node writes it as it is, without a header object per message.
 */

/** Where the header `name` (lower case) is in a flat list, or -1. */
export function indexOfName(head: readonly string[], name: string): number {
  for (let i = 0; i < head.length; i += 2) if ((head[i] as string).toLowerCase() === name) return i;
  return -1;
}
