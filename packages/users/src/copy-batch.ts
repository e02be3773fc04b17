import type pg from 'pg';
import type { UserBatch } from './user-store.js';

type Connection = Parameters<pg.Submittable['submit']>[0];

// Lines of JSON: COPY's CSV format writes a value as it is unless it holds the delimiter, the
// quote character, CR or LF. These two bytes and the line breaks never occur in row_to_json's
// text (it writes every control character as \uXXXX), so each line is the row's JSON untouched.
// The text format would not do: it doubles every backslash.
const CSV_OPTIONS = `(FORMAT csv, DELIMITER E'\\x02', QUOTE E'\\x01')`;

/**
 * `COPY ... TO STDOUT` of the users after `after` (at most `limit`), one JSON object a line. COPY
 * takes no parameters: both are integers checked here, so nothing else reaches the text.
 */
export function copyText(select: string, after: number, limit: number): string {
  if (!Number.isSafeInteger(after) || !Number.isSafeInteger(limit)) throw new TypeError(`bad batch bounds ${after}, ${limit}`);
  return `COPY (SELECT row_to_json(u) FROM (${select} WHERE id > ${after} ORDER BY id LIMIT ${limit}) u) TO STDOUT ${CSV_OPTIONS}`;
}

const COMMA = 0x2c;

/**
 * One COPY statement run through the pg pool as a Submittable (pg's extension point for query
 * kinds of its own). The server sends each row as one CopyData message; each is copied into one
 * growing buffer after a comma and without its line feed, so a batch is bytes ready to send,
 * never a V8 string, and no row is parsed into an object. The pool sets `callback` and releases
 * the connection when it is called (with an error, it discards the connection).
 */
export class CopyBatch implements pg.Submittable {
  callback: ((error: Error | null, batch?: UserBatch) => void) | undefined;
  private body: Buffer;
  private length = 0;
  private rows = 0;
  private lastRow = 0;
  private error: Error | undefined;
  private settled = false;

  constructor(
    private readonly text: string,
    private readonly limit: number,
  ) {
    // Room for rows of up to 127 bytes (a typical user takes about 110): most batches are one
    // allocation, not a series of doublings, which left more garbage outside V8's heap (peak RSS
    // 118-121 MB listing a million users, against 111-112 sized so).
    this.body = Buffer.allocUnsafe(limit * 128);
  }

  submit(connection: Connection): void {
    connection.query(this.text);
  }

  handleCopyData(message: { chunk: Buffer }): void {
    const line = message.chunk;
    if (this.length + line.length > this.body.length) {
      const grown = Buffer.allocUnsafe(Math.max(this.body.length * 2, this.length + line.length));
      this.body.copy(grown, 0, 0, this.length);
      this.body = grown;
    }
    this.body[this.length] = COMMA;
    this.lastRow = this.length + 1;
    this.length = this.lastRow + line.copy(this.body, this.lastRow, 0, line.length - 1); // without the line feed
    this.rows += 1;
  }

  // An error from the server comes before its ReadyForQuery; a lost connection comes alone.
  handleError(error: Error): void {
    this.error ??= error;
    this.finish();
  }

  handleReadyForQuery(): void {
    this.finish();
  }

  handleCommandComplete(): void {}
  handleRowDescription(): void {}
  handleDataRow(): void {}
  handleEmptyQuery(): void {}
  handlePortalSuspended(): void {}

  private finish(): void {
    if (this.settled) return;
    this.settled = true;
    if (this.error !== undefined) return this.callback?.(this.error);
    // The last row starts with {"id":N, (row_to_json keeps the column order).
    const lastId =
      this.rows === 0 ? undefined : Number(/^\{"id":(\d+),/.exec(this.body.toString('latin1', this.lastRow, this.lastRow + 24))?.[1]);
    this.callback?.(null, { body: this.body.subarray(0, this.length), lastId, more: this.rows === this.limit });
  }
}
