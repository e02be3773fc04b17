import type pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { BYTES_PER_USER, type UserBatch } from './user-store.js';

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
const LINE_FEED = 0x0a;

/**
 * The rows of one COPY, as they come, in one growing buffer: `,row,row`. Each row's line feed
 * becomes the comma before the next row, so a batch is bytes ready to send, never a V8 string,
 * and no row is parsed into an object.
 */
class BatchBody {
  private body: Buffer;
  /** Bytes written: a leading comma, then the rows with their line feeds turned into commas. */
  private length = 1;
  /** Where the row being read starts, and where the last complete one started. */
  private rowStart = 1;
  private lastRow = 0;
  private rows = 0;

  constructor(limit: number) {
    // Sized for the rows asked for, so that most batches are one allocation, not a series of doublings.
    this.body = Buffer.allocUnsafe(1 + limit * BYTES_PER_USER);
    this.body[0] = COMMA;
  }

  append(chunk: Buffer): void {
    if (this.length + chunk.length > this.body.length) {
      const grown = Buffer.allocUnsafe(Math.max(this.body.length * 2, this.length + chunk.length));
      this.body.copy(grown, 0, 0, this.length);
      this.body = grown;
    }
    const from = this.length;
    this.length += chunk.copy(this.body, from);
    // Searched in the chunk's copy only: past it the buffer holds whatever its memory held.
    const copied = this.body.subarray(from, this.length);
    for (let at = copied.indexOf(LINE_FEED); at !== -1; at = copied.indexOf(LINE_FEED, at + 1)) {
      copied[at] = COMMA;
      this.lastRow = this.rowStart;
      this.rowStart = from + at + 1;
      this.rows += 1;
    }
  }

  batch(limit: number): UserBatch {
    if (this.rows === 0) return { body: this.body.subarray(0, 0), lastId: undefined, more: false };
    // The last row starts with {"id":N, (row_to_json keeps the column order).
    const lastId = Number(/^\{"id":(\d+),/.exec(this.body.toString('latin1', this.lastRow, this.lastRow + 24))?.[1]);
    // Without the comma that the last row's line feed became.
    return { body: this.body.subarray(0, this.length - 1), lastId, more: this.rows === limit };
  }
}

/**
 * Runs one COPY on the client (pg-copy-streams) and gathers its rows into one batch. Rejects when
 * the server reports an error, the connection is lost, or the COPY takes longer than timeoutMs;
 * after a rejection the client is in an unknown state, and the caller must not reuse it.
 */
export function copyBatch(client: pg.ClientBase, text: string, limit: number, timeoutMs: number): Promise<UserBatch> {
  return new Promise<UserBatch>((resolve, reject) => {
    const body = new BatchBody(limit);
    const stream = client.query(copyTo(text));
    let settled = false;
    const settle = (error: Error | undefined): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error === undefined) resolve(body.batch(limit));
      else reject(error);
    };
    const timer = setTimeout(() => settle(new Error(`the query did not answer within ${timeoutMs} ms`)), timeoutMs);
    // Still read after a timeout, so that the connection's socket drains while the caller closes it.
    stream.on('data', (chunk: Buffer) => {
      if (!settled) body.append(chunk);
    });
    stream.on('end', () => settle(undefined));
    // Kept for the stream's whole life: an error after the timeout must not go unhandled.
    stream.on('error', (error: Error) => settle(error));
  });
}
