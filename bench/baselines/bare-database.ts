/**
 * The baseline of the database routes: bare node:http and the same driver running the same
 * queries as packages/users (PostgreSQL through a pg pool of the same size with named
 * statements when DATABASE_URL is set, otherwise better-sqlite3 on DATA_DIR/app.db with
 * prepared statements), answering with JSON.stringify. No validation beyond what the query
 * needs, no error mapping: the least work these routes can do. The table must exist.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { emailKey } from '@sample-services/users-api/email-key';
import { sendJson, serve } from './bare-http.js';

interface Driver {
  list: () => Promise<unknown[]>;
  insert: (name: string, email: string) => Promise<unknown>;
  ping: () => Promise<unknown>;
}

const pgColumns = `id, name, email, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at`;

function postgres(url: string): Driver {
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  const list = { name: 'users-list', text: `SELECT ${pgColumns} FROM users ORDER BY id` };
  const insert = `INSERT INTO users (name, email) VALUES ($1, $2) ON CONFLICT (email) DO NOTHING RETURNING ${pgColumns}`;
  return {
    list: async () => (await pool.query(list)).rows,
    insert: async (name, email) => (await pool.query({ name: 'users-insert', text: insert, values: [name, email] })).rows[0],
    ping: async () => (await pool.query('SELECT 1 AS ok')).rows[0],
  };
}

function sqlite(file: string): Driver {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('busy_timeout = 2000');
  // FULL, as the service: each commit synced before its 201. The bench also runs it with NORMAL (no
  // sync at commit, what the service had before) to show what that durability costs.
  db.pragma(`synchronous = ${process.env.SQLITE_SYNCHRONOUS === 'NORMAL' ? 'NORMAL' : 'FULL'}`);
  const list = db.prepare('SELECT id, name, email, created_at FROM users ORDER BY id');
  // The key its e-mail is unique by, which the schema requires of every writer (migration 0003).
  const insert = db.prepare(
    'INSERT INTO users (name, email, email_key) VALUES (?, ?, ?) ON CONFLICT DO NOTHING RETURNING id, name, email, created_at',
  );
  const ping = db.prepare('SELECT 1 AS ok');
  return {
    list: async () => list.all(),
    insert: async (name, email) => insert.get(name, email, emailKey(email)),
    ping: async () => ping.get(),
  };
}

const driver = process.env.DATABASE_URL ? postgres(process.env.DATABASE_URL) : sqlite(join(process.env.DATA_DIR ?? './data', 'app.db'));

function send(response: ServerResponse, status: number, value: unknown): void {
  sendJson(response, status, JSON.stringify(value));
}

async function readJson(request: IncomingMessage): Promise<{ name: string; email: string }> {
  let text = '';
  for await (const chunk of request) text += String(chunk);
  return JSON.parse(text) as { name: string; email: string };
}

async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
  if (request.url === '/api/users' && request.method === 'POST') {
    const { name, email } = await readJson(request);
    return send(response, 201, await driver.insert(name, email));
  }
  if (request.url === '/api/users') return send(response, 200, await driver.list());
  if (request.url === '/health')
    return send(response, 200, { status: 'healthy', database: (await driver.ping()) ? 'connected' : 'disconnected' });
  send(response, 404, { error: 'Not found' });
}

serve('Bare database server', (request, response) => {
  handle(request, response).catch((error: unknown) => send(response, 500, { error: String(error) }));
});
