import type { NewUser } from './user-store.js';

/** Column limits (spec 2.1 and 8), counted in Unicode characters as PostgreSQL counts them. */
export const NAME_MAX_LENGTH = 100;
export const EMAIL_MAX_LENGTH = 120;

/** The original's exact text for a missing or empty field. */
export const REQUIRED_MESSAGE = 'Name and email are required';

export type ParseResult = { ok: true; user: NewUser } | { ok: false; error: string };

/**
 * What String.prototype.trim removes (ECMAScript's WhiteSpace and LineTerminator, which are also
 * what JavaScript's `\s` matches), spelt out for the documented patterns: `\s` means another set to
 * other regex engines (Python's adds \x1c-\x1f and leaves out U+FEFF), and a generator of requests
 * must strip exactly what the server strips.
 */
export const TRIMMED_CHARACTERS = '\\u0009-\\u000d\\u0020\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff';

// The address people expect: RFC 5322's dot-atoms on both sides of one `@`, with any non-ASCII
// character as internationalized addresses allow (RFC 6531), spelt as classes of excluded
// characters so that every regex engine reads them alike (`\p{M}` is approximated by some).
// Never in an email: controls (C0, DEL, C1), whitespace and `@`. The local part: dot-separated
// atoms, without RFC 5322's specials; the domain: dot-separated labels of ASCII letters and
// digits or non-ASCII characters, with inner hyphens, at most 63 characters each.
const notInEmail = `\\u0000-\\u0020\\u007f-\\u009f${TRIMMED_CHARACTERS}@`;
const localAtom = `[^${notInEmail}"(),.:;<>\\[\\\\\\]]+`;
const asciiNotInLabel = '\\u0021-\\u002c\\u002e\\u002f\\u003a-\\u003f\\u005b-\\u0060\\u007b-\\u007e';
const labelEnd = `[^${notInEmail}${asciiNotInLabel}-]`;
const labelInner = `[^${notInEmail}${asciiNotInLabel}]`;
const domainLabel = `${labelEnd}(?:${labelInner}{0,61}${labelEnd})?`;

/** The documented form of an email as sent: local@domain, with whitespace around it that is trimmed. */
export const EMAIL_PATTERN = `^[${TRIMMED_CHARACTERS}]*${localAtom}(?:\\.${localAtom})*@${domainLabel}(?:\\.${domainLabel})*[${TRIMMED_CHARACTERS}]*$`;
/** The documented form of a name as sent: something besides whitespace, no NUL. */
export const NAME_PATTERN = `^[^\\u0000]*[^\\u0000${TRIMMED_CHARACTERS}][^\\u0000]*$`;

// The same rules, one step at a time, for a message that says which step failed (EMAIL_PATTERN
// is what they add up to: one `@` with no whitespace on a trimmed value, then atoms and labels).
const emailForm = /^[^\s@]+@[^\s@]+$/;
const isLocalAtom = new RegExp(`^${localAtom}$`, 'u');
const isDomainLabel = new RegExp(`^${domainLabel}$`, 'u');

export const EMAIL_FORM_MESSAGE = 'email must be of the form local@domain';
export const EMAIL_LOCAL_MESSAGE =
  "email must have only letters, digits and !#$%&'*+/=?^_`{|}~- before the @, in parts joined by single dots";
export const EMAIL_DOMAIN_MESSAGE =
  'email must have a domain after the @ of names joined by single dots, each of letters, digits and inner hyphens';

/** What is wrong with the form of an email, or undefined when nothing is. */
function emailProblem(email: string): string | undefined {
  if (!emailForm.test(email)) return EMAIL_FORM_MESSAGE;
  const [local = '', domain = ''] = email.split('@');
  if (!local.split('.').every((atom) => isLocalAtom.test(atom))) return EMAIL_LOCAL_MESSAGE;
  if (!domain.split('.').every((label) => isDomainLabel.test(label))) return EMAIL_DOMAIN_MESSAGE;
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
 * Checks the body of a create request as NewUserBody documents it. Names and emails are stored
 * trimmed of surrounding whitespace (so ` a@b.c ` and `a@b.c` are one email) and otherwise
 * exactly as sent; the lengths apply to the values as sent, as a schema's maxLength does.
 * Other properties of the body are ignored.
 */
export function parseNewUser(body: unknown): ParseResult {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return { ok: false, error: REQUIRED_MESSAGE };
  const { name, email } = body as Record<string, unknown>;
  if (isBlank(name) || isBlank(email)) return { ok: false, error: REQUIRED_MESSAGE };
  if (typeof name !== 'string') return { ok: false, error: 'name must be a string' };
  if (typeof email !== 'string') return { ok: false, error: 'email must be a string' };
  const user = { name: name.trim(), email: email.trim() };
  const error = checkText('name', name, NAME_MAX_LENGTH) ?? checkText('email', email, EMAIL_MAX_LENGTH) ?? emailProblem(user.email);
  return error === undefined ? { ok: true, user } : { ok: false, error };
}
