/** `npm run serve -- <service>`: one service in the foreground, configured by its own environment. */
import { serviceEntry, serviceNames, type ServiceName } from './stacks.js';

const name = process.argv[2];
if (!serviceNames.includes(name as ServiceName)) {
  process.stderr.write(`serve: unknown service "${name ?? ''}"; choose one of ${serviceNames.join(', ')}\n`);
  process.exit(1);
}
// Runs in this process: the service's own runService handles its signals and exit code.
await import(serviceEntry(name as ServiceName));
