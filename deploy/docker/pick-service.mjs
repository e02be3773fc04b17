// Image build step: looks the SERVICE build argument up in the compiled manifest (@svc/manifest)
// and prints {"name", "port"} for the image (the health probe reads it). An unknown name stops
// the build with one line listing the manifest's names, before anything service-specific runs.
import process from 'node:process';
import { serviceNames, services } from '@svc/manifest';

const name = process.argv[2] ?? '';
if (!serviceNames.includes(name)) {
  process.stderr.write(`unknown SERVICE=${name}; one of ${serviceNames.join(', ')}\n`);
  process.exit(1);
}
process.stdout.write(`${JSON.stringify({ name, port: services[name].port })}\n`);
