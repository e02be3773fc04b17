import { request } from 'node:http';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { createPostgresStore } from '@sample-services/users/postgres-store';
import { createSqliteStore } from '@sample-services/users/sqlite-store';

/**
 * Adds `count` users (`User N`, `userN@example.com`, N from `from`) in one statement, straight
 * into the database: a million take seconds, not the hours a million POSTs would.
 */
export async function addUsersToSqlite(dataDir: string, count: number, from = 1): Promise<void> {
  await createSqliteStore(dataDir).close(); // the table exactly as the service creates it
  const db = new Database(join(dataDir, 'app.db'));
  try {
    db.prepare(
      // The key the service would write (email_key, migration 0003 requires it): these e-mails are their own.
      `WITH RECURSIVE n(i) AS (SELECT CAST(? AS INTEGER) UNION ALL SELECT i + 1 FROM n WHERE i < ?)
       INSERT INTO users (name, email, email_key) SELECT 'User ' || i, email, email FROM (SELECT i, 'user' || i || '@example.com' AS email FROM n)`,
    ).run(from, from + count - 1);
  } finally {
    db.close();
  }
}

/** The same for PostgreSQL. */
export async function addUsersToPostgres(url: string, count: number, from = 1): Promise<void> {
  const store = createPostgresStore(url);
  await store.init();
  await store.close();
  const client = new pg.Client(url);
  await client.connect();
  try {
    await client.query(
      `INSERT INTO users (name, email) SELECT 'User ' || i, 'user' || i || '@example.com' FROM generate_series($1::int, $2::int) i`,
      [from, from + count - 1],
    );
  } finally {
    await client.end();
  }
}

export interface CountedList {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** Users in the body, counted as `{"id":` occurrences while it streams by. */
  users: number;
  bytes: number;
  /** The body began with `[` and ended with `]`, and the response ended normally. */
  complete: boolean;
  /** Why the response did not end normally, if it did not. */
  error?: Error;
}

/**
 * GETs a list and counts its users as it arrives, holding no more than a chunk: a list of a
 * million users is counted without a 100 MB string in the test. `onFirstChunk` runs once the
 * first bytes are in, reading paused until it settles (to break something mid-stream).
 */
export function countListedUsers(url: string, onFirstChunk?: () => Promise<void>): Promise<CountedList> {
  return new Promise((resolve, reject) => {
    request(url, (res) => {
      let users = 0;
      let bytes = 0;
      let tail = '';
      let first = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (bytes === 0) {
          first = chunk[0] ?? '';
          if (onFirstChunk !== undefined) {
            res.pause();
            onFirstChunk().then(() => res.resume(), reject);
          }
        }
        bytes += Buffer.byteLength(chunk);
        const text = tail + chunk;
        users += text.split('{"id":').length - 1;
        tail = text.slice(-5); // shorter than the marker: never counted twice
      });
      const result = (error?: Error): CountedList => ({
        status: res.statusCode ?? 0,
        headers: res.headers,
        users,
        bytes,
        complete: error === undefined && first === '[' && tail.endsWith(']'),
        ...(error === undefined ? {} : { error }),
      });
      res.on('end', () => resolve(result()));
      res.on('error', (error) => resolve(result(error)));
    })
      .on('error', reject)
      .end();
  });
}
