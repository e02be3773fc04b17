/**
 * Request count and duration by method, route template and status code, kept as plain numbers
 * and written in the Prometheus text format when scraped. Not prom-client's Counter and Histogram:
 * their observe() validates the labels, builds a label string and a few objects on every call, while
 * here a request finds its cell through two Map lookups and adds to it, with no allocation once
 * the cell exists. Routes are templates (`/api/users/:id`), fixed when routes are added, so the
 * number of series is bounded by routes x methods x status codes.
 */

/** Upper bounds in seconds: from 1 ms, since most answers here take well under 5 ms. */
const bounds = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const boundLabels = bounds.map(String);

/** The status label of a response that never finished: the client went away or it was cut. */
export const ABORTED = 0;

class Cell {
  count = 0;
  sum = 0;
  /** Observations per bucket (not cumulative); the last one is above every bound. */
  readonly buckets = new Float64Array(bounds.length + 1);

  add(seconds: number): void {
    let i = 0;
    while (i < bounds.length && seconds > (bounds[i] as number)) i++;
    this.buckets[i] = (this.buckets[i] as number) + 1;
    this.count++;
    this.sum += seconds;
  }
}

/** One route template's cells, by method and status; made when the route is added. */
export class RouteCells {
  readonly byMethod = new Map<string, Map<number, Cell>>();
  constructor(readonly route: string) {}

  cell(method: string, status: number): Cell {
    let byStatus = this.byMethod.get(method);
    if (byStatus === undefined) this.byMethod.set(method, (byStatus = new Map()));
    let cell = byStatus.get(status);
    if (cell === undefined) byStatus.set(status, (cell = new Cell()));
    return cell;
  }
}

const escape = (value: string): string => value.replace(/[\\"\n]/g, (c) => (c === '\n' ? '\\n' : `\\${c}`));

export class RequestMetrics {
  /** Requests whose response has not closed yet. */
  inFlight = 0;
  /** Requests no route took (404, 405, malformed URL): one label value, whatever their path. */
  readonly unmatched = new RouteCells('unmatched');
  private readonly routes = new Map<string, RouteCells>([['unmatched', this.unmatched]]);

  /** The cells of a route template, made on first use (when the route is added). */
  forRoute(url: string): RouteCells {
    let cells = this.routes.get(url);
    if (cells === undefined) this.routes.set(url, (cells = new RouteCells(url)));
    return cells;
  }

  record(route: RouteCells, method: string, status: number, seconds: number): void {
    route.cell(method, status).add(seconds);
  }

  /** The two metric families in the Prometheus text format (version 0.0.4). */
  render(): string {
    const counts: string[] = [
      '# HELP http_requests_total Requests answered, by method, route template and status code ("aborted": never finished)',
      '# TYPE http_requests_total counter',
    ];
    const durations: string[] = [
      '# HELP http_request_duration_seconds Time from the request head to the end of the response, by method, route template and status code',
      '# TYPE http_request_duration_seconds histogram',
    ];
    for (const cells of this.routes.values()) {
      for (const [method, byStatus] of cells.byMethod) {
        for (const [status, cell] of byStatus) {
          const labels = `method="${escape(method)}",route="${escape(cells.route)}",status_code="${status === ABORTED ? 'aborted' : status}"`;
          counts.push(`http_requests_total{${labels}} ${cell.count}`);
          let cumulative = 0;
          for (let i = 0; i < bounds.length; i++) {
            cumulative += cell.buckets[i] as number;
            durations.push(`http_request_duration_seconds_bucket{${labels},le="${boundLabels[i]}"} ${cumulative}`);
          }
          durations.push(`http_request_duration_seconds_bucket{${labels},le="+Inf"} ${cell.count}`);
          durations.push(`http_request_duration_seconds_sum{${labels}} ${cell.sum}`);
          durations.push(`http_request_duration_seconds_count{${labels}} ${cell.count}`);
        }
      }
    }
    return `${counts.join('\n')}\n\n${durations.join('\n')}\n`;
  }
}
