/** JSON schemas shared by the services' routes (response schemas also speed up serialization). */
export const errorSchema = {
  type: 'object',
  properties: { error: { type: 'string' } },
  required: ['error'],
} as const;
