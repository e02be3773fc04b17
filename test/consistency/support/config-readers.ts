import type { Env } from '@sample-services/kit/config';
import type { ServiceName } from '@sample-services/manifest';

/** Every variable `reader` reads, called with an empty environment. */
export function variablesReadBy(reader: (env: Env) => unknown): string[] {
  const read = new Set<string>();
  const record = (key: string | symbol): void => {
    if (typeof key === 'string') read.add(key);
  };
  // Every variable is unset; looking one up (`env.X` or `'X' in env`) is what counts.
  const recording = new Proxy<Env>(
    {},
    {
      get: (_, key) => {
        record(key);
        return undefined;
      },
      has: (_, key) => {
        record(key);
        return false;
      },
    },
  );
  // The readers read all their variables unconditionally, so one call with nothing set sees them all.
  reader(recording);
  return [...read];
}

/** Every variable a service's config reader reads (compiled code, npm run build: @sample-services/<name>/config). */
export async function variablesOfService(service: ServiceName): Promise<string[]> {
  const { readConfig } = (await import(`@sample-services/${service}/config`)) as { readConfig: (env: Env) => unknown };
  return variablesReadBy(readConfig);
}
