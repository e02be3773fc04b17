/**
 * `node dist/seed.js`: adds a few sample users to the users' store (DATABASE_URL or DATA_DIR, as the
 * service reads them), none twice however often it runs (docs/operations.md, Sample users).
 */
import { runSeedCommand } from '@sample-services/users/seed-command';
import { service } from './service.js';

await runSeedCommand(service.name);
