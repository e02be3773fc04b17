import type { NewUser } from './user.js';

/** Column limits (spec 2.1 and 8), counted in Unicode characters as PostgreSQL counts them. */
export const NAME_MAX_LENGTH = 100;
export const EMAIL_MAX_LENGTH = 120;

/** The original's exact text for a missing or empty field. */
export const REQUIRED_MESSAGE = 'Name and email are required';

export type ParseResult = { ok: true; user: NewUser } | { ok: false; error: string };

// One `@`, something without spaces on each side. Deliverability is the mail server's business.
const emailForm = /^[^\s@]+@[^\s@]+$/;

// Then the address people expect: WHATWG HTML's "valid e-mail address", with letters and digits of
// any script as internationalized addresses allow (RFC 6531), and no empty part between dots
// (`a..b@x.io`, which WHATWG lets through). The local part: dot-separated atoms of letters,
// digits and !#$%&'*+/=?^_`{|}~- ; the domain: dot-separated labels of letters and digits with
// inner hyphens, at most 63 characters each.
const localAtom = /^[\p{L}\p{M}\p{N}!#$%&'*+/=?^_`{|}~-]+$/u;
const domainLabel = /^[\p{L}\p{M}\p{N}](?:[\p{L}\p{M}\p{N}-]{0,61}[\p{L}\p{M}\p{N}])?$/u;

export const EMAIL_FORM_MESSAGE = 'email must be of the form local@domain';
export const EMAIL_LOCAL_MESSAGE =
  "email must have only letters, digits and !#$%&'*+/=?^_`{|}~- before the @, in parts joined by single dots";
export const EMAIL_DOMAIN_MESSAGE =
  'email must have a domain after the @ of names joined by single dots, each of letters, digits and inner hyphens';

/** What is wrong with the form of an email, or undefined when nothing is. */
function emailProblem(email: string): string | undefined {
  if (!emailForm.test(email)) return EMAIL_FORM_MESSAGE;
  const [local = '', domain = ''] = email.split('@');
  if (!local.split('.').every((atom) => localAtom.test(atom))) return EMAIL_LOCAL_MESSAGE;
  if (!domain.split('.').every((label) => domainLabel.test(label))) return EMAIL_DOMAIN_MESSAGE;
  return undefined;
}

// In a `u` regex a valid surrogate pair is one code point, so only lone halves match.
const loneSurrogate = /\p{Cs}/u;

function isBlank(value: unknown): boolean {
  return value === undefined || value === null || (typeof value === 'string' && value.trim() === '');
}

function checkText(field: string, value: string, maxLength: number): string | undefined {
  if (value.includes('\0')) return `${field} must not contain NUL characters`;
  if (loneSurrogate.test(value)) return `${field} must be valid Unicode text`;
  if ([...value].length > maxLength) return `${field} must be at most ${maxLength} characters`;
  return undefined;
}

/**
 * Checks the body of a create request. Names and emails are stored trimmed of surrounding
 * whitespace (so ` a@b.c ` and `a@b.c` are one email) and otherwise exactly as sent; the
 * lengths apply to the trimmed values. Other properties of the body are ignored.
 */
export function parseNewUser(body: unknown): ParseResult {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return { ok: false, error: REQUIRED_MESSAGE };
  const { name, email } = body as Record<string, unknown>;
  if (isBlank(name) || isBlank(email)) return { ok: false, error: REQUIRED_MESSAGE };
  if (typeof name !== 'string') return { ok: false, error: 'name must be a string' };
  if (typeof email !== 'string') return { ok: false, error: 'email must be a string' };
  const user = { name: name.trim(), email: email.trim() };
  const error =
    checkText('name', user.name, NAME_MAX_LENGTH) ?? checkText('email', user.email, EMAIL_MAX_LENGTH) ?? emailProblem(user.email);
  return error === undefined ? { ok: true, user } : { ok: false, error };
}
