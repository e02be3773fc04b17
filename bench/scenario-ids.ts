/** The scenarios of `npm run bench -- --only <id>`, in the order they run and appear in docs/performance.md. */
export const scenarioIds = ['a', 'proxy', 'b', 'c', 'size', 'flood', 'traces'] as const;
export type ScenarioId = (typeof scenarioIds)[number];
