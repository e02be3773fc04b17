import { Pool } from 'undici';

export interface BackendClient {
  /** The backend's user list as JSON text; rejects with the cause on any failure. */
  fetchUsers: () => Promise<string>;
  close: () => Promise<void>;
}

const MiB = 1024 * 1024;

/**
 * Calls the backend over a pool of keep-alive connections. Each call is bounded by timeoutMs
 * from start to the last byte, so a hanging backend costs at most that long.
 */
export function createBackendClient(backendUrl: URL, timeoutMs: number): BackendClient {
  const pool = new Pool(backendUrl.origin, {
    connections: 64,
    connectTimeout: timeoutMs,
    // Idle sockets are dropped well before the backend's own 72 s keep-alive timeout, so we
    // never write to a socket the backend is closing.
    keepAliveTimeout: 30_000,
    maxResponseSize: 16 * MiB,
  });
  const path = `${backendUrl.pathname.replace(/\/$/, '')}/api/users`;

  return {
    async fetchUsers() {
      const { statusCode, body } = await pool.request({
        method: 'GET',
        path,
        headers: { accept: 'application/json' },
        signal: AbortSignal.timeout(timeoutMs),
      });
      const text = await body.text();
      if (statusCode < 200 || statusCode > 299) throw new Error(`backend answered ${statusCode}: ${text.slice(0, 200)}`);
      JSON.parse(text); // throws when the backend did not send JSON
      return text;
    },
    close: () => pool.close(),
  };
}
