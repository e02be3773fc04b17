// The image health check (spec 8): GET /health on the service's own port; exit 0 only on 200.
// Node itself does the request, so the runtime image needs no curl or wget.
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import process from 'node:process';

// The port as the service chooses it: PORT when set and not blank, else its manifest port,
// which the build wrote next to this file (deploy/docker/pick-service.mjs).
const service = JSON.parse(readFileSync(new URL('./service.json', import.meta.url), 'utf8'));
const port = Number(process.env.PORT?.trim() || service.port);
const TIMEOUT_MS = 2_500; // below the 3 s HEALTHCHECK timeout, so a hung server fails cleanly

const req = request({ host: '127.0.0.1', port, path: '/health', timeout: TIMEOUT_MS }, (res) => {
  res.resume();
  process.exit(res.statusCode === 200 ? 0 : 1);
});
req.on('timeout', () => req.destroy(new Error(`no answer within ${TIMEOUT_MS} ms`)));
req.on('error', (error) => {
  process.stderr.write(`health probe: ${error.message}\n`);
  process.exit(1);
});
req.end();
