// `npm run serve -- <service>`: one compiled service in the foreground, configured by its own
// environment. Plain JavaScript run by plain node (no loader, no compiler process), and the
// service runs in this very process, so its signal handling and exit codes are the service's own.
import { serviceNames } from '@svc/manifest';

const name = process.argv[2];
if (!serviceNames.includes(name)) {
  process.stderr.write(`serve: unknown service "${name ?? ''}"; choose one of ${serviceNames.join(', ')}\n`);
  process.exit(1);
}
await import(new URL(`../services/${name}/dist/main.js`, import.meta.url).href);
