/** TypeBox schemas every service shares: they type the handlers, serialize answers and document them. */
import { Type } from 'typebox';

const ErrorBody = Type.Object(
  { error: Type.String({ description: 'What went wrong, for people' }) },
  { description: 'Every error answer', examples: [{ error: 'Not found: GET /no/such/path' }] },
);

/** The error body as one status of a route answers it: what that status means there, and an example text. */
export const errorAnswer = (description: string, example?: string) =>
  Type.Object(ErrorBody.properties, { description, ...(example === undefined ? {} : { examples: [{ error: example }] }) });

/**
 * A 200 answer of text in one of `types` (a page, a script, a stylesheet), documented as such:
 * only this status gets these types, the kit's errors on the same route stay JSON.
 */
export const textAnswer = (description: string, types: readonly string[]) => ({
  description,
  content: Object.fromEntries(types.map((type) => [type, { schema: Type.String() }])),
});

/** An ISO 8601 timestamp in UTC with milliseconds and `Z`, as every service writes them. */
export const IsoTimestamp = Type.String({
  description: 'ISO 8601 in UTC, with milliseconds',
  pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$',
  examples: ['2026-11-22T10:15:30.123Z'],
});
