/**
 * A strict parser of the Prometheus text exposition format (0.0.4), for tests that scrape
 * /metrics: it throws, naming the line, on anything Prometheus would refuse or misread (a bad
 * name, label or value, an unterminated or badly escaped label value, a sample before its TYPE,
 * a family split in two, a series twice, a histogram whose buckets are not cumulative or whose
 * +Inf bucket is not its count). No npm parser is installed, and prom-client only writes.
 */

export type MetricType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';

export interface Sample {
  /** The sample's own name, e.g. `http_request_duration_seconds_bucket`. */
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface MetricFamily {
  name: string;
  type: MetricType;
  help: string | undefined;
  samples: Sample[];
}

const metricName = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const labelName = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const types = new Set<string>(['counter', 'gauge', 'histogram', 'summary', 'untyped']);
const suffixes: Record<MetricType, string[]> = {
  counter: [''],
  gauge: [''],
  untyped: [''],
  histogram: ['_bucket', '_sum', '_count'],
  summary: ['', '_sum', '_count'],
};

/** A float as Prometheus reads one (Go's ParseFloat: NaN and Inf in any case; prom-client writes `Nan`). */
function parseValue(text: string, where: string): number {
  const lower = text.toLowerCase();
  if (lower === 'nan') return Number.NaN;
  if (lower === '+inf' || lower === 'inf') return Number.POSITIVE_INFINITY;
  if (lower === '-inf') return Number.NEGATIVE_INFINITY;
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) throw new Error(`${where}: "${text}" is not a number`);
  return Number(text);
}

/** `{a="1",b="x\"y"}` from position `start` (at `{`): the labels and the position after `}`. */
function parseLabels(line: string, start: number, where: string): { labels: Record<string, string>; end: number } {
  const labels: Record<string, string> = {};
  let i = start + 1;
  while (line[i] !== '}') {
    const equals = line.indexOf('=', i);
    if (equals < 0) throw new Error(`${where}: label without "="`);
    const name = line.slice(i, equals).trim();
    if (!labelName.test(name)) throw new Error(`${where}: bad label name "${name}"`);
    if (name in labels) throw new Error(`${where}: label ${name} twice`);
    if (line[equals + 1] !== '"') throw new Error(`${where}: the value of label ${name} is not quoted`);
    let value = '';
    let j = equals + 2;
    for (; j < line.length && line[j] !== '"'; j++) {
      if (line[j] !== '\\') value += line[j];
      else {
        const escaped = line[++j];
        if (escaped === 'n') value += '\n';
        else if (escaped === '\\' || escaped === '"') value += escaped;
        else throw new Error(`${where}: bad escape "\\${escaped ?? ''}" in label ${name}`);
      }
    }
    if (j >= line.length) throw new Error(`${where}: the value of label ${name} is not terminated`);
    labels[name] = value;
    i = j + 1;
    if (line[i] === ',') i++;
    else if (line[i] !== '}') throw new Error(`${where}: expected "," or "}" after label ${name}`);
  }
  return { labels, end: i + 1 };
}

function checkHistogram(family: MetricFamily): void {
  const series = new Map<string, { buckets: [number, number][]; count?: number; sum?: number }>();
  for (const sample of family.samples) {
    const { le, ...rest } = sample.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    const entry = series.get(key) ?? { buckets: [] };
    series.set(key, entry);
    if (sample.name.endsWith('_bucket')) {
      if (le === undefined) throw new Error(`${family.name}: a bucket without le`);
      entry.buckets.push([parseValue(le, `${family.name} le`), sample.value]);
    } else if (sample.name.endsWith('_count')) entry.count = sample.value;
    else entry.sum = sample.value;
  }
  for (const [key, { buckets, count, sum }] of series) {
    const where = `${family.name}${key}`;
    if (count === undefined || sum === undefined) throw new Error(`${where}: _count or _sum is missing`);
    for (let i = 1; i < buckets.length; i++) {
      const [bound, value] = buckets[i] as [number, number];
      const [previousBound, previous] = buckets[i - 1] as [number, number];
      if (bound <= previousBound || value < previous) throw new Error(`${where}: buckets not in order or not cumulative`);
    }
    const last = buckets.at(-1);
    if (last?.[0] !== Number.POSITIVE_INFINITY || last[1] !== count) throw new Error(`${where}: the +Inf bucket is not _count`);
  }
}

/** The families of a scrape by name; throws on the first thing Prometheus would not accept. */
export function parsePrometheusText(text: string): Map<string, MetricFamily> {
  const families = new Map<string, MetricFamily>();
  const seriesSeen = new Set<string>();
  let current: MetricFamily | undefined;
  const family = (name: string, where: string): MetricFamily => {
    let found = families.get(name);
    if (found === undefined) families.set(name, (found = { name, type: 'untyped', help: undefined, samples: [] }));
    else if (found !== current) throw new Error(`${where}: family ${name} appears in two places`);
    current = found;
    return found;
  };
  if (text !== '' && !text.endsWith('\n')) throw new Error('the text does not end with a line feed');
  text.split('\n').forEach((line, index) => {
    const where = `line ${index + 1}`;
    if (line.trim() === '') return;
    const meta = /^#\s*(HELP|TYPE)\s+(\S+)\s*(.*)$/.exec(line);
    if (meta !== null) {
      const [, keyword, name = '', rest = ''] = meta;
      if (!metricName.test(name)) throw new Error(`${where}: bad metric name "${name}"`);
      const described = family(name, where);
      if (keyword === 'HELP') {
        if (described.help !== undefined) throw new Error(`${where}: second HELP for ${name}`);
        described.help = rest;
      } else {
        if (!types.has(rest)) throw new Error(`${where}: unknown type "${rest}"`);
        if (described.samples.length > 0 || described.type !== 'untyped') throw new Error(`${where}: TYPE of ${name} after its samples`);
        described.type = rest as MetricType;
      }
      return;
    }
    if (line.startsWith('#')) return; // a comment
    const nameEnd = line.search(/[{\s]/);
    const name = nameEnd < 0 ? line : line.slice(0, nameEnd);
    if (!metricName.test(name)) throw new Error(`${where}: bad metric name "${name}"`);
    let labels: Record<string, string> = {};
    let rest = line.slice(name.length);
    if (rest.startsWith('{')) {
      const parsed = parseLabels(line, name.length, where);
      labels = parsed.labels;
      rest = line.slice(parsed.end);
    }
    const fields = rest.trim().split(/\s+/);
    if (!/^\s/.test(rest) || fields.length < 1 || fields.length > 2) throw new Error(`${where}: expected a value and at most a timestamp`);
    const value = parseValue(fields[0] ?? '', where);
    const owner =
      current !== undefined && suffixes[current.type].some((suffix) => name === current?.name + suffix) ? current : family(name, where);
    if (!suffixes[owner.type].some((suffix) => name === owner.name + suffix)) throw new Error(`${where}: ${name} in family ${owner.name}`);
    const series = `${name}${JSON.stringify(Object.entries(labels).sort())}`;
    if (seriesSeen.has(series)) throw new Error(`${where}: series ${series} twice`);
    seriesSeen.add(series);
    owner.samples.push({ name, labels, value });
  });
  for (const found of families.values()) if (found.type === 'histogram') checkHistogram(found);
  return families;
}

/** The value of the first sample with this name and at least these labels; undefined when none. */
export function sampleValue(families: Map<string, MetricFamily>, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const family of families.values()) {
    for (const sample of family.samples) {
      if (sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value)) return sample.value;
    }
  }
  return undefined;
}
