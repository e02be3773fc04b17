import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const repoRoot = new URL('../../../', import.meta.url);
const pathOf = (path: string): string => fileURLToPath(new URL(path, repoRoot));

/** A file of the repository as text, by its path from the root (e.g. `deploy/nginx/nginx.conf`). */
export function readRepoFile(path: string): string {
  return readFileSync(pathOf(path), 'utf8');
}

export function repoFileExists(path: string): boolean {
  return existsSync(pathOf(path));
}

/** The pages of docs/, as paths from the root (`docs/api.md`, ...). */
export function docsPages(): string[] {
  return readdirSync(pathOf('docs'))
    .filter((file) => file.endsWith('.md'))
    .map((file) => `docs/${file}`);
}

/** A service's own README, by the service's name (its folder under services/). */
export function serviceReadmeOf(service: string): string {
  return `services/${service}/README.md`;
}
