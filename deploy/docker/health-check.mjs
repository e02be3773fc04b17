// The image health check (spec 8): GET /health (or the path given, e.g. /ready) on the service's own
// port (PORT, else the default in the service's dist/service.js, in the working directory); exit 0
// only on 200. Run by node in exec form, so the image needs no shell, curl or wget.
import { pathToFileURL } from 'node:url';

const path = process.argv[2] ?? '/health';
const port = process.env.PORT?.trim() || (await import(pathToFileURL('dist/service.js').href)).service.port;
try {
  // Below the HEALTHCHECK's 3 s timeout, so a hung server fails cleanly.
  const response = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(2_500) });
  if (response.status !== 200) {
    process.stderr.write(`health check: ${path} answered ${response.status}\n`);
    process.exit(1);
  }
} catch (error) {
  process.stderr.write(`health check: ${path} on 127.0.0.1:${port}: ${error.cause?.code ?? error.name}\n`);
  process.exit(1);
}
