// `npm run serve -- <service>`: one compiled service in the foreground, configured by its own
// environment. Plain JavaScript run by plain node (no loader, no compiler process), and the
// service runs in this very process, so its signal handling and exit codes are the service's own.
import { createServer } from 'node:net';
import { serviceNames, services } from '@svc/manifest';

const name = process.argv[2];
if (!serviceNames.includes(name)) {
  process.stderr.write(`serve: unknown service "${name ?? ''}"; choose one of ${serviceNames.join(', ')}\n`);
  process.exit(1);
}

/** Why the port cannot be bound on `host`, or undefined when it can or the reason is the service's to report. */
function portProblem(port, host) {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', (error) =>
      resolve(error.code === 'EACCES' ? 'needs more privileges' : error.code === 'EADDRINUSE' ? 'is already in use' : undefined),
    );
    probe.listen(port, host, () => probe.close(() => resolve(undefined)));
  });
}

// As in npm start (scripts/start.ts): a privileged port moves up so that HTTP's well-known port
// lands on its customary stand-in; a taken one tries the ports just above it.
const PRIVILEGED_SHIFT = 8000;
const PRIVILEGED_BELOW = 1024;
const FALLBACK_TRIES = 50;

// Only the spec's default gives way to a port that can be had, so a first run works for any user;
// a PORT set explicitly is the service's to take or to refuse in its own one line.
if (!process.env.PORT?.trim()) {
  const port = services[name].port;
  const host = process.env.HOST?.trim() || '0.0.0.0';
  const problem = await portProblem(port, host);
  if (problem !== undefined) {
    let instead = 0; // none nearby: the system chooses, and the service announces it
    let candidate = port < PRIVILEGED_BELOW ? port + PRIVILEGED_SHIFT : port + 1;
    for (let tries = 0; tries < FALLBACK_TRIES && candidate <= 65535 && instead === 0; tries++, candidate++)
      if ((await portProblem(candidate, host)) === undefined) instead = candidate;
    process.env.PORT = String(instead);
    const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
    const where = instead === 0 ? 'a port the system chooses (see its start-up line)' : `http://${shown}:${instead}/`;
    process.stderr.write(`serve: port ${port} ${problem}; ${name} serves on ${where} instead (set PORT to choose one)\n`);
  }
}
await import(new URL(`../services/${name}/dist/main.js`, import.meta.url).href);
