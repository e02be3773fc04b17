/** The Link to the page after one that ended at `lastId` (RFC 8288). */
export function nextPageLink(limit: number, lastId: number): string {
  return `</api/users?limit=${limit}&after=${lastId}>; rel="next"`;
}
