import { documentedFetch } from './documented.js';
import { expect, it } from 'vitest';
import { paginationContract } from './pagination.js';

export interface FrontendExpectations {
  /** Adds users beside the backend until its list holds `count`; pagination through the frontend is checked when given. */
  ensureUsers?: (count: number) => Promise<void>;
}

/** Frontend of variant C (spec 4.3) against any base URL, with its backend reachable by the test. */
export function frontendContract(baseUrl: () => string, backendUrl: () => string, expected: FrontendExpectations = {}): void {
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

  it("answers a bad limit or after with the backend's own 400", async () => {
    for (const query of ['limit=0', 'after=x']) {
      const [fromFrontend, fromBackend] = await Promise.all([
        documentedFetch(`${baseUrl()}/api/users?${query}`),
        documentedFetch(`${backendUrl()}/api/users?${query}`),
      ]);
      expect(fromFrontend.status).toBe(400);
      expect(await fromFrontend.text()).toBe(await fromBackend.text());
    }
  });

  if (expected.ensureUsers === undefined) return;
  const { ensureUsers } = expected;
  it("GET /api/users?limit=1 answers the backend's page and its Link as they came", async () => {
    await ensureUsers(2);
    const [fromFrontend, fromBackend] = await Promise.all([
      documentedFetch(`${baseUrl()}/api/users?limit=1`),
      documentedFetch(`${backendUrl()}/api/users?limit=1`),
    ]);
    expect(fromFrontend.status).toBe(200);
    expect(fromFrontend.headers.get('link')).toBe(fromBackend.headers.get('link'));
    expect(await fromFrontend.text()).toBe(await fromBackend.text());
  });
  paginationContract(baseUrl, ensureUsers);
}
