/** Response schemas of the user routes; one schema for POST and list keeps their bytes identical. */
export const userSchema = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
    email: { type: 'string' },
    created_at: { type: 'string' },
  },
  required: ['id', 'name', 'email', 'created_at'],
} as const;

export const usersSchema = { type: 'array', items: userSchema } as const;
