/**
 * The page and its files over HTTP, without a browser: caching (strong ETags, 304), the security
 * headers, no inline script or style, and the JSON routes left as they were.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { App } from '@sample-services/kit/server';
import { createFrontendApp } from '@sample-services/frontend/app';
import { repoRoot } from '@sample-services/testing/repo-root';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const contentHash = (body: Buffer): string => `"${createHash('sha256').update(body).digest('base64url').slice(0, 32)}"`;

describe('the users page over HTTP', () => {
  let app: App;
  let html: string;
  let assets: string[];
  beforeAll(async () => {
    // The backend is never reached by the page routes; the user list fails at once.
    app = createFrontendApp({
      logger: false,
      backend: { fetchUsers: () => Promise.reject(new Error('no backend')), start: async () => undefined, close: async () => undefined },
    });
    html = (await app.inject({ url: '/' })).body;
    assets = [...html.matchAll(/(?:href|src)="(\/assets\/[^"]+)"/g)].map((match) => match[1] ?? '');
  });
  afterAll(() => app.close());

  it('serves GET / as HTML with a strong ETag of its content, revalidated on every use', async () => {
    const res = await app.inject({ url: '/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-cache');
    expect(res.headers.etag).toBe(contentHash(res.rawPayload));
  });

  it('sends the security headers with the page: a strict CSP, nosniff, no referrer', async () => {
    const res = await app.inject({ url: '/' });
    const policy = String(res.headers['content-security-policy']).split(/;\s*/);
    expect(policy).toEqual(
      expect.arrayContaining([
        "default-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "frame-ancestors 'none'",
        "require-trusted-types-for 'script'",
      ]),
    );
    expect(policy.join(';')).not.toMatch(/unsafe|\*|data:|http/);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
  });

  it('has no inline script, style or event handler, and names only its own files', () => {
    expect(html).not.toMatch(/<style|\sstyle=|\son[a-z]+=/i);
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)].map(([, attributes, body]) => ({ attributes, body }));
    expect(scripts).toEqual([{ attributes: expect.stringMatching(/^ type="module" src="\/assets\/[\w-]+\/main\.js"$/), body: '' }]);
    expect(assets.length).toBeGreaterThanOrEqual(3); // icon, stylesheet, main.js (and the modules it imports)
    expect(html).not.toMatch(/https?:\/\//);
  });

  it.each([
    ['the ETag', 304, (etag: string) => etag],
    ['its weak form', 304, (etag: string) => `W/${etag}`],
    ['a list holding it', 304, (etag: string) => `"old", ${etag}`],
    ['*', 304, () => '*'],
    ['another ETag', 200, () => '"other"'],
  ])('answers If-None-Match with %s: %i', async (_name, status, header) => {
    const { etag } = (await app.inject({ url: '/' })).headers;
    const res = await app.inject({ url: '/', headers: { 'if-none-match': header(String(etag)) } });
    expect(res.statusCode).toBe(status);
    expect(res.headers.etag).toBe(etag);
    expect(res.body.length > 0).toBe(status === 200);
  });

  it('serves every file the page names: its type, immutable caching, a content ETag, 304, the security headers', async () => {
    const types = { js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8', svg: 'image/svg+xml; charset=utf-8' };
    for (const url of assets) {
      const res = await app.inject({ url });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-type'], url).toBe(types[url.split('.').pop() as keyof typeof types]);
      expect(res.headers['cache-control'], url).toBe('public, max-age=31536000, immutable');
      expect(res.headers.etag, url).toBe(contentHash(res.rawPayload));
      expect(res.headers['x-content-type-options'], url).toBe('nosniff');
      expect(res.headers['content-security-policy'], url).toMatch(/^default-src 'self'/);
      const again = await app.inject({ url, headers: { 'if-none-match': String(res.headers.etag) } });
      expect(again.statusCode, url).toBe(304);
    }
  });

  it("serves the browser scripts exactly as tsc compiled them to the frontend's dist", async () => {
    const main = assets.find((url) => url.endsWith('/main.js')) ?? '';
    const res = await app.inject({ url: main });
    expect(res.rawPayload.equals(readFileSync(join(repoRoot, 'services/frontend/dist/browser/main.js')))).toBe(true);
  });

  it('answers a file of another build, or no such file, with the JSON 404 of every unknown path', async () => {
    const main = assets.find((url) => url.endsWith('/main.js')) ?? '';
    for (const url of [main.replace(/\/assets\/[\w-]+\//, '/assets/older/'), main.replace('main.js', 'nope.js')]) {
      const res = await app.inject({ url });
      expect(res.statusCode, url).toBe(404);
      expect(res.json()).toEqual({ error: `Not found: GET ${url}` });
    }
  });

  it('answers HEAD / with the headers of GET and no body', async () => {
    const [head, get] = [await app.inject({ method: 'HEAD', url: '/' }), await app.inject({ url: '/' })];
    expect(head.statusCode).toBe(200);
    expect(head.body).toBe('');
    expect(head.headers.etag).toBe(get.headers.etag);
  });

  it('leaves the JSON routes as they were: none of the page headers on them', async () => {
    for (const url of ['/api/users', '/health', '/no/such/path']) {
      const res = await app.inject({ url });
      expect(res.headers['content-type'], url).toMatch(/^application\/json/);
      expect(res.headers['content-security-policy'], url).toBeUndefined();
      expect(res.headers.etag, url).toBeUndefined();
    }
    expect((await app.inject({ url: '/api/users' })).json()).toEqual({ error: 'Failed to fetch users' });
  });
});
