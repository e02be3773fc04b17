// Where `npm start` (start.ts) and `npm run serve` (serve.js) put a service whose default port
// cannot be had. Plain JavaScript: serve.js runs on plain node, with no loader.
import { createServer } from 'node:net';

// A privileged port moves up by this much, so that HTTP's well-known port lands on its customary
// stand-in; a taken one tries the ports just above it.
const PRIVILEGED_SHIFT = 8000;
const PRIVILEGED_BELOW = 1024;
const NEARBY_TRIES = 50;

/**
 * Why `port` cannot be bound on `host`, in the words of a one-line message: privileged or taken.
 * Undefined when it can, or when the reason is another (a HOST the machine lacks): the service's to report.
 */
export function portProblem(port, host) {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', (error) =>
      resolve(error.code === 'EACCES' ? 'needs more privileges' : error.code === 'EADDRINUSE' ? 'is already in use' : undefined),
    );
    probe.listen(port, host, () => probe.close(() => resolve(undefined)));
  });
}

/**
 * A port near `port` that can be bound on `host` now and is not `reserved` (other services' ports),
 * or 0 when none nearby is: the service then takes one the system chooses and announces it.
 */
export async function nearbyFreePort(port, host, reserved = new Set()) {
  let candidate = port < PRIVILEGED_BELOW ? port + PRIVILEGED_SHIFT : port + 1;
  for (let tries = 0; tries < NEARBY_TRIES && candidate <= 65535; tries++, candidate++)
    if (!reserved.has(candidate) && (await portProblem(candidate, host)) === undefined) return candidate;
  return 0;
}
