/**
 * Issue 45: characters that show nothing (zero-width, soft hyphen, bidi controls) are refused in an
 * email, and a name of nothing else is blank; a name may still hold them beside visible characters.
 * Checked on the service's answers and on the document it serves, which a request generator reads.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { documentedFetch } from './documented.js';
import { uniqueEmail } from './users.js';

const required = 'Name and email are required';
const invisibleInEmail = 'email must not contain invisible characters such as zero-width spaces, soft hyphens or bidi controls';

/** Each refused body and its answer. */
const refused: [string, { name: string; email: string }, string][] = [
  ['a name of a zero-width space', { name: '\u200b', email: 'a@b.c' }, required],
  ['a name of whitespace and a zero-width space', { name: ' \u200b\n', email: 'a@b.c' }, required],
  ['an email with a soft hyphen', { name: 'A', email: 'al\u00adice@example.com' }, invisibleInEmail],
  ['an email with a zero-width space in the domain', { name: 'A', email: 'alice@exam\u200bple.com' }, invisibleInEmail],
  ['an email with a right-to-left override', { name: 'A', email: '\u202ealice@example.com' }, invisibleInEmail],
];

/** A name with a zero-width joiner inside an emoji, which is kept as sent. */
const joinedName = 'Ada \u{1f469}\u200d\u{1f4bb}';

async function post(baseUrl: string, body: unknown): Promise<Response> {
  return documentedFetch(`${baseUrl}/api/users`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

/** The create request's body schema in the document the service serves. */
async function servedBodySchema(baseUrl: string): Promise<object> {
  const res = await fetch(`${baseUrl}/openapi.json`);
  expect(res.status).toBe(200);
  const document = (await res.json()) as {
    paths: Record<string, Record<string, { requestBody?: { content?: Record<string, { schema?: object }> } }>>;
  };
  const schema = document.paths['/api/users']?.post?.requestBody?.content?.['application/json']?.schema;
  expect(schema).toBeDefined();
  return schema ?? {};
}

export function invisibleTextContract(baseUrl: () => string): void {
  describe('invisible characters', () => {
    it.each(refused)('POST with %s answers 400 with its message', async (_case, body, error) => {
      const res = await post(baseUrl(), body);
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ error });
    });

    it('a name may hold them beside visible characters: a zero-width joiner in an emoji is stored as sent', async () => {
      const res = await post(baseUrl(), { name: joinedName, email: uniqueEmail('joiner') });
      expect(res.status).toBe(201);
      expect(await res.json()).toMatchObject({ name: joinedName });
    });

    it('the served document says the same, read by another validator than the service', async () => {
      // Formats are the service's own (unicode-text); the patterns are what a generator reads.
      const validate = new Ajv2020({ strict: false, validateFormats: false }).compile(await servedBodySchema(baseUrl()));
      for (const [name, body] of refused) expect(validate(body), name).toBe(false);
      expect(validate({ name: joinedName, email: 'a@b.c' })).toBe(true);
    });
  });
}
