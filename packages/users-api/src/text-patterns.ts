/**
 * The forms of a user's name and email as regex sources, for NewUserBody's patterns, and the
 * pieces they are made of, which name the part of an email that broke its pattern.
 */

/**
 * What String.prototype.trim removes (ECMAScript's WhiteSpace and LineTerminator, which are also
 * what JavaScript's `\s` matches), spelt out for the documented patterns: `\s` means another set to
 * other regex engines (Python's adds \x1c-\x1f and leaves out U+FEFF), and a generator of requests
 * must strip exactly what the server strips.
 */
export const TRIMMED_CHARACTERS = '\\u0009-\\u000d\\u0020\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff';

/**
 * What shows nothing of itself: Unicode's format characters (Cf: soft hyphen, zero-width spaces and
 * joiners, bidi controls, tags, and a few marks drawn only on their neighbour) and its
 * Default_Ignorable_Code_Point (adding the combining grapheme joiner, variation selectors, Hangul
 * fillers and code points reserved as such). In an email they make addresses that read alike;
 * alone in a name, a name that reads as nothing. The tests hold this list to Node's own tables.
 * Characters beyond the BMP are written as themselves: no escape of them reads alike in every
 * engine (`\u{...}` is ECMAScript's; two surrogate escapes are two characters to others).
 */
export const INVISIBLE_CHARACTERS =
  '\\u00ad\\u034f\\u0600-\\u0605\\u061c\\u06dd\\u070f\\u0890\\u0891\\u08e2\\u115f\\u1160\\u17b4\\u17b5\\u180b-\\u180f' +
  '\\u200b-\\u200f\\u202a-\\u202e\\u2060-\\u206f\\u3164\\ufe00-\\ufe0f\\ufeff\\uffa0\\ufff0-\\ufffb' +
  '\u{110bd}\u{110cd}\u{13430}-\u{1343f}\u{1bca0}-\u{1bca3}\u{1d173}-\u{1d17a}\u{e0000}-\u{e0fff}';

/** NUL, which PostgreSQL's text cannot hold. */
export const NUL = '\\u0000';

/**
 * A format, not a pattern: text without lone UTF-16 surrogates, which no UTF-8 column can store.
 * Other regex engines read a surrogate range in a pattern each their own way (or not at all).
 */
export const UNICODE_TEXT = 'unicode-text';

/** Blank: nothing visible, only what trim removes and invisible characters. */
export const BLANK_PATTERN = `^[${TRIMMED_CHARACTERS}${INVISIBLE_CHARACTERS}]*$`;

/** A name as sent: something visible, no NUL. */
export const NAME_PATTERN = `^[^${NUL}]*[^${NUL}${TRIMMED_CHARACTERS}${INVISIBLE_CHARACTERS}][^${NUL}]*$`;

// The address people expect: RFC 5322's dot-atoms on both sides of one `@`, with any non-ASCII
// character as internationalized addresses allow (RFC 6531), spelt as classes of excluded
// characters so that every regex engine reads them alike (`\p{M}` is approximated by some).
// Never in an email: controls (C0, DEL, C1), whitespace, invisible characters and `@`. The local
// part: dot-separated atoms, without RFC 5322's specials; the domain: dot-separated labels of ASCII
// letters and digits or non-ASCII characters, with inner hyphens, at most 63 characters each.
const notInEmail = `\\u0000-\\u0020\\u007f-\\u009f${TRIMMED_CHARACTERS}${INVISIBLE_CHARACTERS}@`;
const localAtom = `[^${notInEmail}"(),.:;<>\\[\\\\\\]]+`;
const asciiNotInLabel = '\\u0021-\\u002c\\u002e\\u002f\\u003a-\\u003f\\u005b-\\u0060\\u007b-\\u007e';
const labelEnd = `[^${notInEmail}${asciiNotInLabel}-]`;
const labelInner = `[^${notInEmail}${asciiNotInLabel}]`;
const domainLabel = `${labelEnd}(?:${labelInner}{0,61}${labelEnd})?`;
const around = `[${TRIMMED_CHARACTERS}]*`;

/** The pieces of EMAIL_PATTERN, each on the whole value as sent: one `@` between two runs without whitespace, */
export const EMAIL_FORM_PATTERN = `^${around}[^${TRIMMED_CHARACTERS}@]+@[^${TRIMMED_CHARACTERS}@]+${around}$`;
/** then dot-separated atoms before the `@`, */
export const EMAIL_LOCAL_PATTERN = `^${around}${localAtom}(?:\\.${localAtom})*@`;
/** and dot-separated labels after it. */
export const EMAIL_DOMAIN_PATTERN = `@${domainLabel}(?:\\.${domainLabel})*${around}$`;

/** An email as sent: local@domain, with whitespace around it that is trimmed. */
export const EMAIL_PATTERN = `^${around}${localAtom}(?:\\.${localAtom})*@${domainLabel}(?:\\.${domainLabel})*${around}$`;
