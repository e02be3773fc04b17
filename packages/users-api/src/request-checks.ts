/**
 * How the user routes check their requests against their schemas, and the one place that turns a
 * failed check into the answer clients read: the original's text for a missing field (spec 4.2),
 * and a sentence naming the field or query parameter for anything else.
 */
import { HttpError } from '@sample-services/kit/errors';
import { Ajv, type ErrorObject } from 'ajv';
import type { FastifySchemaCompiler, FastifySchemaValidationError } from 'fastify';
import { ListQuery } from './schemas.js';
import { EMAIL_DOMAIN_PATTERN, EMAIL_FORM_PATTERN, EMAIL_LOCAL_PATTERN, INVISIBLE_CHARACTERS, NUL, UNICODE_TEXT } from './text-patterns.js';

/** The original's exact text for a missing or empty field. */
export const REQUIRED_MESSAGE = 'Name and email are required';

export const EMAIL_INVISIBLE_MESSAGE =
  'email must not contain invisible characters such as zero-width spaces, soft hyphens or bidi controls';
export const EMAIL_FORM_MESSAGE = 'email must be of the form local@domain';
export const EMAIL_LOCAL_MESSAGE =
  "email must have only letters, digits and !#$%&'*+/=?^_`{|}~- before the @, in parts joined by single dots";
export const EMAIL_DOMAIN_MESSAGE =
  'email must have a domain after the @ of names joined by single dots, each of letters, digits and inner hyphens';

/**
 * Fastify's own Ajv coerces types (`{"name": 42}` would pass as "42", `?limit=1e2` as 100) and
 * drops what `additionalProperties: false` forbids instead of refusing it: the schemas here mean
 * what they say. `verbose` hands a failed value to the messages below; it costs nothing on success.
 * `validateSchema: false`: the schemas are this package's constants, which its tests check against
 * JSON Schema's meta-schema; checking them at every start would compile that meta-schema each time.
 */
const options = { removeAdditional: false, useDefaults: false, allErrors: false, verbose: true, validateSchema: false } as const;
const strict = new Ajv({ ...options, coerceTypes: false });
// In a `u` regex a valid surrogate pair is one code point, so only lone halves match.
strict.addFormat(UNICODE_TEXT, (text: string) => !/\p{Cs}/u.test(text));
/** A query string's values are text: an integer parameter is made a number once its digits passed. */
const numbering = new Ajv({ ...options, coerceTypes: true });

/** Decimal digits only: no sign, exponent, fraction or space, and at most 10 (a 32-bit id's width). */
const decimalDigits = { type: 'string', pattern: '^\\d{1,10}$' };

/** The query schema with each integer parameter read from its digits first, then held to the documented integer. */
function fromDigits(schema: { properties?: Record<string, { type?: unknown }> }): object {
  const properties = Object.entries(schema.properties ?? {}).map(([name, property]) => [
    name,
    property.type === 'integer' ? { allOf: [decimalDigits, property] } : property,
  ]);
  return { ...schema, properties: Object.fromEntries(properties) as object };
}

/** The schema a part of a request is checked against: a query's integer parameters read from digits first. */
export function checkedSchema(schema: object, httpPart: string | undefined): object {
  return httpPart === 'querystring' ? fromDigits(schema) : schema;
}

const compile: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) =>
  (httpPart === 'querystring' ? numbering : strict).compile(checkedSchema(schema as object, httpPart));

const hasNul = new RegExp(`[${NUL}]`, 'u');
const hasInvisible = new RegExp(`[${INVISIBLE_CHARACTERS}]`, 'u');
const emailParts: [RegExp, string][] = [
  [new RegExp(EMAIL_FORM_PATTERN, 'u'), EMAIL_FORM_MESSAGE],
  [new RegExp(EMAIL_LOCAL_PATTERN, 'u'), EMAIL_LOCAL_MESSAGE],
  [new RegExp(EMAIL_DOMAIN_PATTERN, 'u'), EMAIL_DOMAIN_MESSAGE],
];

/** Which part of its pattern a name or email broke: an email's invisible characters first (once trimmed: U+FEFF is both), then NUL. */
function patternMessage(field: string, value: string): string {
  if (field === 'email' && hasInvisible.test(value.trim())) return EMAIL_INVISIBLE_MESSAGE;
  if (hasNul.test(value)) return `${field} must not contain NUL characters`;
  const broken = field === 'email' ? emailParts.find(([part]) => !part.test(value)) : undefined;
  return broken?.[1] ?? EMAIL_FORM_MESSAGE;
}

/**
 * A body's first failure: the body's own type, or the `allOf` of NewUserBody (rule 1 of spec 4.2),
 * are "required"; a field's, a sentence naming it, from the schema's own keyword (so that a field
 * added to the schema is named in its errors as name and email are).
 */
function bodyMessage(error: ErrorObject): string {
  const field = error.instancePath.slice(1);
  if (field === '' || error.schemaPath.startsWith('#/allOf/')) return REQUIRED_MESSAGE;
  if (error.keyword === 'type')
    return `${field} must be ${/^[aeiou]/.test(String(error.params.type)) ? 'an' : 'a'} ${String(error.params.type)}`;
  if (error.keyword === 'maxLength') return `${field} must be at most ${String(error.params.limit)} characters`;
  if (error.keyword === 'format') return `${field} must be valid Unicode text`;
  if (error.keyword === 'pattern' && (field === 'name' || field === 'email')) return patternMessage(field, String(error.data));
  return `${field} ${error.message ?? 'is not valid'}`;
}

const listParameters = ListQuery.properties;

/** ListQuery's first failure: another parameter than limit and after, or one of them not its digits in range. */
function queryMessage(error: ErrorObject): string {
  if (error.keyword === 'additionalProperties') {
    return `Unknown query parameter ${String(error.params.additionalProperty)}: expected only ${Object.keys(listParameters).join(' and ')}`;
  }
  const name = error.instancePath.slice(1) as keyof typeof listParameters;
  const { minimum, maximum } = listParameters[name] as { minimum?: number; maximum?: number };
  return `Invalid query parameter ${name}: expected an integer from ${String(minimum)} to ${String(maximum)}`;
}

/** A failed check as the 400 the kit answers with its message (Ajv stops at the first failure). */
function answerFor(errors: FastifySchemaValidationError[], part: string): Error {
  const error = errors[0] as ErrorObject;
  return new HttpError(400, part === 'querystring' ? queryMessage(error) : bodyMessage(error));
}

/** Route options of the routes that take ListQuery or NewUserBody: checked strictly, refused with the texts above. */
export const userRequestChecks = { validatorCompiler: compile, schemaErrorFormatter: answerFor };
