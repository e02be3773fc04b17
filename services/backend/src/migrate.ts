/**
 * `node dist/migrate.js`: applies the pending migrations of the users' store (DATABASE_URL or DATA_DIR,
 * as the service reads them) and exits; the service applies them at start as well (docs/operations.md, Schema migrations).
 */
import { runMigrateCommand } from '@sample-services/users/migrate-command';
import { service } from './service.js';

await runMigrateCommand(service.name);
