/// <reference lib="dom" />
import type { User } from './users-api.js';

/** Dates in the reader's own locale and time zone (the browser's defaults). */
const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

function cell(text: string): HTMLTableCellElement {
  const td = document.createElement('td');
  td.textContent = text; // text from the database is never parsed as HTML
  return td;
}

function createdCell(iso: string): HTMLTableCellElement {
  const td = document.createElement('td');
  const time = document.createElement('time');
  time.dateTime = iso;
  const date = new Date(iso);
  time.textContent = Number.isNaN(date.getTime()) ? iso : dateFormat.format(date);
  td.append(time);
  return td;
}

/** Replaces the rows of `body` with one row per user: name, email, created. */
export function showUsers(body: HTMLTableSectionElement, users: readonly User[]): void {
  const rows = users.map((user) => {
    const row = document.createElement('tr');
    row.append(cell(user.name), cell(user.email), createdCell(user.created_at));
    return row;
  });
  body.replaceChildren(...rows);
}

/**
 * Hides the rows none of whose cells contains `query` (ignoring case and surrounding spaces),
 * shows the others, and returns how many are shown.
 */
export function filterRows(body: HTMLTableSectionElement, query: string): number {
  const wanted = query.trim().toLocaleLowerCase();
  let shown = 0;
  for (const row of Array.from(body.rows)) {
    const matches = wanted === '' || Array.from(row.cells).some((c) => (c.textContent ?? '').toLocaleLowerCase().includes(wanted));
    row.hidden = !matches;
    if (matches) shown += 1;
  }
  return shown;
}
