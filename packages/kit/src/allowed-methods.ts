import type { FastifyInstance } from 'fastify';
import FindMyWay, { type HTTPMethod } from 'find-my-way';

/**
 * The methods a path takes, learned from each route as it is added (onRoute), for the not-found
 * handler's 405 with Allow: Fastify's router answers a known path's wrong method as an unknown path.
 * None for a path only a wildcard route takes: a catch-all (the CORS preflight's) makes no path known,
 * but its method is one more that the paths it covers take.
 */
export function learnAllowedMethods(app: FastifyInstance): (path: string) => string[] {
  const routes = FindMyWay();
  const wildcards = FindMyWay();
  const methods = new Set<HTTPMethod>();
  app.addHook('onRoute', (route) => {
    const router = route.url.includes('*') ? wildcards : routes;
    for (const method of [route.method].flat()) {
      // Fastify has checked the method; find-my-way's type lists fewer (QUERY) than it takes.
      const known = method as HTTPMethod;
      methods.add(known);
      // The same method and path again differs by its constraints only, which the Allow header ignores.
      if (!router.hasRoute(known, route.url)) router.on(known, route.url, () => undefined);
    }
  });
  return (path) => {
    const taken = [...methods].filter((method) => routes.find(method, path) !== null);
    if (taken.length === 0) return [];
    return [...methods].filter((method) => taken.includes(method) || wildcards.find(method, path) !== null).sort();
  };
}
