import { describe, expect, it } from 'vitest';
import { migrationsDir, readMigrations } from '../src/migrations.js';

describe("the stores' migrations", () => {
  it('use each number for one change: a version in both directories has one name', () => {
    const postgres = new Map(readMigrations(migrationsDir('postgres')).map((migration) => [migration.version, migration.name]));
    const shared = readMigrations(migrationsDir('sqlite')).filter((migration) => postgres.has(migration.version));
    expect(shared.map((migration) => migration.name)).toEqual(shared.map((migration) => postgres.get(migration.version)));
    expect(shared.length).toBeGreaterThan(0);
  });
});
