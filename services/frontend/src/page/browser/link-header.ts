/// <reference lib="dom" />
// The reference above: the repository's type check (tsconfig.check.json) compiles this folder with
// Node's types and no DOM, while this folder's own tsconfig builds it for the browser.

/** One link of a Link header: `<target>` and the parameters up to the next `<`. */
const linkPattern = /<([^>]*)>([^<]*)/g;
/** The rel parameter, quoted or not; its value is a space-separated list of relation types. */
const relPattern = /;\s*rel\s*=\s*(?:"([^"]*)"|([^\s;,]+))/i;

/**
 * The target of the first link with the relation type `next` in an RFC 8288 Link header, as
 * written (relative or absolute), or undefined when there is none.
 */
export function nextLinkTarget(header: string | null): string | undefined {
  if (header === null) return undefined;
  for (const [, target, parameters] of header.matchAll(linkPattern)) {
    const rel = relPattern.exec(parameters ?? '');
    const relations = (rel?.[1] ?? rel?.[2] ?? '').toLowerCase().split(/\s+/);
    if (relations.includes('next')) return target;
  }
  return undefined;
}
