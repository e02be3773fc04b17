// `npm run serve -- <service>`: one compiled service in the foreground, configured by its own
// environment. Plain JavaScript run by plain node (no loader, no compiler process), and the
// service runs in this very process, so its signal handling and exit codes are the service's own.
import { serviceNames, services } from '@sample-services/manifest';
import { nearbyFreePort, portProblem } from './port-choice.js';

const name = process.argv[2];
if (!serviceNames.includes(name)) {
  process.stderr.write(`serve: unknown service "${name ?? ''}"; choose one of ${serviceNames.join(', ')}\n`);
  process.exit(1);
}

// Only the spec's default gives way to a port that can be had, so a first run works for any user;
// a PORT set explicitly is the service's to take or to refuse in its own one line.
if (!process.env.PORT?.trim()) {
  const port = services[name].port;
  const host = process.env.HOST?.trim() || '0.0.0.0';
  const problem = await portProblem(port, host);
  if (problem !== undefined) {
    const instead = await nearbyFreePort(port, host); // 0: the system chooses, and the service announces it
    process.env.PORT = String(instead);
    const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
    const where = instead === 0 ? 'a port the system chooses (see its start-up line)' : `http://${shown}:${instead}/`;
    process.stderr.write(`serve: port ${port} ${problem}; ${name} serves on ${where} instead (set PORT to choose one)\n`);
  }
}
// As the image runs it (scripts/listening-process.ts, serviceCommand): the OpenTelemetry preload first, which loads
// nothing unless an OTLP endpoint is set, and before the service's modules, which its instrumentations patch.
process.env.OTEL_SERVICE_NAME ??= name;
await import('@sample-services/telemetry');
await import(new URL(`../services/${name}/dist/main.js`, import.meta.url).href);
