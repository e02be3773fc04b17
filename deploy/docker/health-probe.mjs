// The image health check (spec 8): GET /health (or the path given, e.g. /ready) on the service's
// probe socket, PROBE_SOCKET, which the image sets (never queued behind a flood's connections), else
// on its own port; exit 0 only on 200. Node itself does the request: the image needs no curl or wget.
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import process from 'node:process';

// The port as the service chooses it: PORT when set and not blank, else its manifest port,
// which the build wrote next to this file (deploy/docker/pick-service.mjs).
const service = JSON.parse(readFileSync(new URL('./service.json', import.meta.url), 'utf8'));
const port = Number(process.env.PORT?.trim() || service.port);
const TIMEOUT_MS = 2_500; // below the 3 s HEALTHCHECK timeout, so a hung server fails cleanly
// '@name' is an abstract socket (the kit's PROBE_SOCKET), written with a leading NUL.
const socket = process.env.PROBE_SOCKET?.trim().replace(/^@/, '\0') || undefined;
const path = process.argv[2] ?? '/health';

const to = socket === undefined ? { host: '127.0.0.1', port } : { socketPath: socket };
const req = request({ ...to, path, timeout: TIMEOUT_MS }, (res) => {
  res.resume();
  process.exit(res.statusCode === 200 ? 0 : 1);
});
req.on('timeout', () => req.destroy(new Error(`no answer within ${TIMEOUT_MS} ms`)));
req.on('error', (error) => {
  process.stderr.write(`health probe: ${error.message}\n`);
  process.exit(1);
});
req.end();
