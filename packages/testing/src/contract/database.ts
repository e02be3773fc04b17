import { documentedFetch } from './documented.js';
import { describe, expect, it } from 'vitest';
import { invisibleTextContract } from './invisible-text.js';
import { paginationContract } from './pagination.js';
import { fetchUserList, uniqueEmail, type ListedUser } from './users.js';

const EMAIL_LOCAL_MESSAGE = "email must have only letters, digits and !#$%&'*+/=?^_`{|}~- before the @, in parts joined by single dots";
const EMAIL_DOMAIN_MESSAGE =
  'email must have a domain after the @ of names joined by single dots, each of letters, digits and inner hyphens';

export interface DatabaseExpectations {
  /** The database the service should report; `connected` unless a test took it away. */
  database?: 'connected' | 'disconnected';
}

async function post(baseUrl: string, body: unknown, contentType = 'application/json'): Promise<Response> {
  return documentedFetch(`${baseUrl}/api/users`, {
    method: 'POST',
    headers: { 'content-type': contentType },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

async function expectError(res: Response, status: number, error: string): Promise<void> {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(await res.json()).toEqual({ error });
}

const required = 'Name and email are required';

/**
 * Variant B (spec 4.2, 7, 8) against any base URL. It never assumes an empty database: each
 * run creates users with fresh emails and looks for them in the list.
 */
export function databaseContract(baseUrl: () => string, expected: DatabaseExpectations = {}): void {
  paginationContract(baseUrl, async (count) => {
    const { users } = await fetchUserList(baseUrl());
    for (let i = users.length; i < count; i += 1)
      expect((await post(baseUrl(), { name: `Page ${i}`, email: uniqueEmail('page') })).status).toBe(201);
  });
  invisibleTextContract(baseUrl);
  it('GET / greets with the original message and the current time', async () => {
    const res = await documentedFetch(`${baseUrl()}/`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { message: string; timestamp: string };
    expect(Object.keys(body)).toEqual(['message', 'timestamp']);
    expect(body.message).toBe('Hello from Flask Docker App!');
    expect(Math.abs(Date.parse(body.timestamp) - Date.now())).toBeLessThan(60_000);
  });

  it('GET /health reports healthy and the database connectivity', async () => {
    const res = await documentedFetch(`${baseUrl()}/health`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'healthy', database: expected.database ?? 'connected' });
  });

  it('POST creates a user (trimmed), answers 201 with the stored record, and the list holds the same bytes', async () => {
    const email = uniqueEmail('create');
    const res = await post(baseUrl(), { name: '  Ada Lovelace ', email: ` ${email}\t`, ignored: true });
    expect(res.status).toBe(201);
    const text = await res.text();
    const created = JSON.parse(text) as ListedUser;
    expect(created).toMatchObject({ name: 'Ada Lovelace', email });
    expect(Math.abs(Date.parse(created.created_at) - Date.now())).toBeLessThan(60_000);
    const list = await fetchUserList(baseUrl());
    expect(list.text).toContain(text);
    expect(list.users.filter((u) => u.email === email)).toEqual([created]);
  });

  it('accepts a name of exactly 100 characters and an email of exactly 120, counting characters not bytes', async () => {
    const email = uniqueEmail('long');
    const longEmail = `${'é'.repeat(120 - email.length)}${email}`;
    const res = await post(baseUrl(), { name: '李'.repeat(100), email: longEmail });
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({ name: '李'.repeat(100), email: longEmail });
  });

  describe('POST with missing or empty fields answers 400 with the original message', () => {
    it.each([
      ['no body at all', undefined, undefined],
      ['an empty JSON body', '', 'application/json'],
      ['an empty object', {}, undefined],
      ['a JSON array', [{ name: 'A', email: 'a@b.c' }], undefined],
      ['a JSON string', '"name"', undefined],
      ['JSON null', 'null', undefined],
      ['no name', { email: 'a@b.c' }, undefined],
      ['no email', { name: 'A' }, undefined],
      ['an empty name', { name: '', email: 'a@b.c' }, undefined],
      ['a whitespace-only email', { name: 'A', email: '  \n' }, undefined],
      ['a null email', { name: 'A', email: null }, undefined],
    ])('%s', async (_case, body, contentType) => {
      const res =
        body === undefined ? await documentedFetch(`${baseUrl()}/api/users`, { method: 'POST' }) : await post(baseUrl(), body, contentType);
      await expectError(res, 400, required);
    });
  });

  describe('POST with bad values answers 400 with a specific message', () => {
    it.each([
      [{ name: 7, email: 'a@b.c' }, 'name must be a string'],
      [{ name: 'A', email: { address: 'a@b.c' } }, 'email must be a string'],
      [{ name: 'x'.repeat(101), email: 'a@b.c' }, 'name must be at most 100 characters'],
      [{ name: 'A', email: `${'x'.repeat(117)}@b.c` }, 'email must be at most 120 characters'],
      [{ name: 'A', email: 'not-an-email' }, 'email must be of the form local@domain'],
      [{ name: 'A', email: 'a@.io' }, EMAIL_DOMAIN_MESSAGE],
      [{ name: 'A', email: '-@-' }, EMAIL_DOMAIN_MESSAGE],
      [{ name: 'A', email: 'a..b@x.io' }, EMAIL_LOCAL_MESSAGE],
      [{ name: 'A', email: 'a<b@x.io' }, EMAIL_LOCAL_MESSAGE],
      [{ name: 'A', email: '(c)a@x.io' }, EMAIL_LOCAL_MESSAGE],
      [{ name: 'A\u0000', email: 'a@b.c' }, 'name must not contain NUL characters'],
      [{ name: 'A', email: 'a\u0000b@c.d' }, 'email must not contain NUL characters'],
    ])('%j', async (body, error) => {
      await expectError(await post(baseUrl(), body), 400, error);
    });

    it('malformed JSON', async () => {
      await expectError(await post(baseUrl(), '{"name": "A",'), 400, 'Request body is not valid JSON');
    });

    it.each([
      ['{"name":"A","email":"a@b.c","__proto__":{"admin":true}}', '__proto__'],
      ['{"name":"A","email":"a@b.c","x":[{"\\u005f_proto__":{}}]}', '__proto__'],
      ['{"name":"A","email":"a@b.c","constructor":{"prototype":{"admin":true}}}', 'constructor.prototype'],
    ])('valid JSON with a key that reaches a prototype: %s', async (body, key) => {
      await expectError(await post(baseUrl(), body), 400, `Request body must not contain the key ${key}`);
    });
  });

  it('POST with a non-JSON content type answers 415', async () => {
    await expectError(
      await post(baseUrl(), 'name=A&email=a@b.c', 'application/x-www-form-urlencoded'),
      415,
      'Unsupported content type: send application/json',
    );
  });

  it('a duplicate email answers 409 and stores nothing, also when it differs only by surrounding spaces', async () => {
    const email = uniqueEmail('dup');
    expect((await post(baseUrl(), { name: 'First', email })).status).toBe(201);
    await expectError(await post(baseUrl(), { name: 'Second', email }), 409, 'A user with this email already exists');
    await expectError(await post(baseUrl(), { name: 'Third', email: ` ${email} ` }), 409, 'A user with this email already exists');
    const { users } = await fetchUserList(baseUrl());
    expect(users.filter((u) => u.email === email).map((u) => u.name)).toEqual(['First']);
  });

  it('an email that differs only in case or Unicode normalization answers 409, and emails are kept as given', async () => {
    const alice = uniqueEmail('alice');
    expect((await post(baseUrl(), { name: 'Alice', email: alice })).status).toBe(201);
    await expectError(await post(baseUrl(), { name: 'Upper', email: alice.toUpperCase() }), 409, 'A user with this email already exists');
    // josé with é as one code point (NFC), then as e and a combining acute accent (NFD).
    const jose = uniqueEmail('jos\u00e9');
    expect((await post(baseUrl(), { name: 'José', email: jose })).status).toBe(201);
    const decomposed = jose.normalize('NFD');
    expect(decomposed).not.toBe(jose);
    await expectError(await post(baseUrl(), { name: 'Decomposed', email: decomposed }), 409, 'A user with this email already exists');
    const { users } = await fetchUserList(baseUrl());
    expect(users.filter((u) => [alice, jose].includes(u.email.normalize('NFC').toLowerCase())).map((u) => [u.name, u.email])).toEqual([
      ['Alice', alice],
      ['José', jose],
    ]);
  });

  it('50 simultaneous creates of one email give exactly one 201 and 49 409s', async () => {
    const email = uniqueEmail('race');
    const responses = await Promise.all(Array.from({ length: 50 }, (_, i) => post(baseUrl(), { name: `Racer ${i}`, email })));
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(49);
    await Promise.all(responses.map((r) => r.body?.cancel()));
    const { users } = await fetchUserList(baseUrl());
    expect(users.filter((u) => u.email === email)).toHaveLength(1);
  });

  it('PUT /api/users answers 405 JSON with Allow', async () => {
    const res = await documentedFetch(`${baseUrl()}/api/users`, { method: 'PUT' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD, OPTIONS, POST');
    expect(await res.json()).toEqual({ error: 'Method PUT is not allowed on /api/users' });
  });

  it('a browser from another origin may POST JSON: the preflight grants the method and content-type', async () => {
    const res = await documentedFetch(`${baseUrl()}/api/users`, {
      method: 'OPTIONS',
      headers: { origin: 'https://example.org', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-methods')?.split(', ')).toContain('POST');
    expect(res.headers.get('access-control-allow-headers')).toBe('content-type');
  });
}
