import { describe, expect, it } from 'vitest';
import { nextLinkTarget } from '@sample-services/frontend/browser/link-header';

describe("the page's reading of a Link header (RFC 8288)", () => {
  it.each([
    ['what the services send', '</api/users?limit=100&after=100>; rel="next"', '/api/users?limit=100&after=100'],
    ['rel unquoted, other case and spaces', '</p2> ;REL = Next', '/p2'],
    ['next among several relation types', '</p2>; rel="prefetch next"', '/p2'],
    ['next as the second link', '</first>; rel="first", </p2>; title="a, b"; rel="next"', '/p2'],
    ['a comma inside the target', '</p?a=1,2>; rel="next"', '/p?a=1,2'],
  ])('finds the next page: %s', (_name, header, target) => {
    expect(nextLinkTarget(header)).toBe(target);
  });

  it.each([
    ['no header', null],
    ['no next link', '</p1>; rel="prev", </p9>; rel="last"'],
    ['a relation that only contains next', '</p2>; rel="nextpage"'],
    ['next as another parameter', '</p2>; title="next"'],
  ])('finds none: %s', (_name, header) => {
    expect(nextLinkTarget(header)).toBeUndefined();
  });
});
