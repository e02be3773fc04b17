/**
 * A response head given to writeHead as a flat [name, value, name, value, ...] list, the form a
 * proxy relays: Node writes it as it is, without a header object per response. (Node also takes
 * a list of [name, value] pairs; that form is left to setHeader.)
 */
import type { OutgoingHttpHeader, OutgoingHttpHeaders } from 'node:http';

export type Head = OutgoingHttpHeaders | OutgoingHttpHeader[];

export const isFlatList = (head: Head | undefined): head is string[] =>
  Array.isArray(head) && (head.length === 0 || !Array.isArray(head[0]));

/** Where the header `name` (lower case) is in a flat list, or -1. */
export function indexOfName(head: readonly string[], name: string): number {
  for (let i = 0; i < head.length; i += 2) if ((head[i] as string).toLowerCase() === name) return i;
  return -1;
}

/** Sets `name` (lower case) in a flat list, replacing every value it had. */
export function setInFlatList(head: string[], name: string, value: string): void {
  for (let i = indexOfName(head, name); i >= 0; i = indexOfName(head, name)) head.splice(i, 2);
  head.push(name, value);
}
