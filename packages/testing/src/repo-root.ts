import { fileURLToPath } from 'node:url';

/** The repository's root directory, where the compiled services are (`services/<name>/dist`). */
export const repoRoot = fileURLToPath(new URL('../../..', import.meta.url));
