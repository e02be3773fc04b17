import { documentedFetch } from './documented.js';
import { expect, it } from 'vitest';

/** Frontend of variant C (spec 4.3) against any base URL, with its backend reachable by the test. */
export function frontendContract(baseUrl: () => string, backendUrl: () => string): void {
  it('GET /health reports healthy and the service name', async () => {
    const res = await documentedFetch(`${baseUrl()}/health`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('{"status":"healthy","service":"frontend"}');
  });

  it("GET /api/users answers 200 with the backend's body as it came", async () => {
    const [fromFrontend, fromBackend] = await Promise.all([
      documentedFetch(`${baseUrl()}/api/users`),
      documentedFetch(`${backendUrl()}/api/users`),
    ]);
    expect(fromFrontend.status).toBe(200);
    expect(fromFrontend.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await fromFrontend.text()).toBe(await fromBackend.text());
  });

  it('keeps answering from its pool of backend connections under parallel requests', async () => {
    const responses = await Promise.all(Array.from({ length: 20 }, () => documentedFetch(`${baseUrl()}/api/users`)));
    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(200));
    await Promise.all(responses.map((r) => r.text()));
  });
}
