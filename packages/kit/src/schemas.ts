import { Type } from 'typebox';

/** The error body, `{"error": "..."}`, as one status of a route answers it: what it means there, and an example. */
export const errorAnswer = (description: string, example?: string) =>
  Type.Object(
    { error: Type.String({ description: 'What went wrong, for people' }) },
    { description, ...(example !== undefined && { examples: [{ error: example }] }) },
  );
