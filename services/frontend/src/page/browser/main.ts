/// <reference lib="dom" />
import { PageTrail } from './pages.js';
import { fetchUsersPage, LoadError, type User } from './users-api.js';
import { filterRows, showUsers } from './users-table.js';

/** Users per page: the browser never holds more than this many, however many there are. */
const pageSize = 100;

function element<T extends HTMLElement>(id: string, type: new () => T): T {
  const found = document.getElementById(id);
  if (!(found instanceof type)) throw new Error(`the page has no ${type.name} #${id}`);
  return found;
}

const ui = {
  heading: element('heading', HTMLHeadingElement),
  status: element('status', HTMLParagraphElement),
  problem: element('problem', HTMLDivElement),
  problemText: element('problem-text', HTMLParagraphElement),
  retry: element('retry', HTMLButtonElement),
  list: element('list', HTMLElement),
  filter: element('filter', HTMLInputElement),
  table: element('users', HTMLTableElement),
  caption: element('caption', HTMLTableCaptionElement),
  rows: element('rows', HTMLTableSectionElement),
  noMatch: element('no-match', HTMLParagraphElement),
  pager: element('pager', HTMLElement),
  previous: element('previous', HTMLButtonElement),
  next: element('next', HTMLButtonElement),
};

const trail = new PageTrail(`/api/users?limit=${pageSize}`);
const count = new Intl.NumberFormat();
let loading: AbortController | undefined;
let usersOnPage = 0;

type State = 'list' | 'empty' | 'problem';

/**
 * Shows the parts of the page for `state`. Focus never stays on something hidden: it lands on
 * what the new state offers (the table, Retry) or on the heading.
 */
function enter(state: State): void {
  const focused = document.activeElement;
  document.body.dataset.state = state;
  ui.problem.hidden = state !== 'problem';
  ui.list.hidden = state !== 'list';
  if (focused instanceof HTMLElement && focused !== document.body && focused.closest('[hidden]') !== null) {
    (state === 'list' ? ui.table : state === 'problem' ? ui.retry : ui.heading).focus();
  }
}

/** Hides the rows the filter does not match and says how many are shown. */
function applyFilter(): void {
  const query = ui.filter.value.trim();
  const shown = filterRows(ui.rows, query);
  const page = `Page ${count.format(trail.number)}: ${count.format(usersOnPage)} users`;
  ui.status.textContent = query === '' ? `${page}.` : `${page}, ${count.format(shown)} matching “${query}”.`;
  ui.noMatch.hidden = !(shown === 0 && usersOnPage > 0);
  ui.noMatch.textContent = `No user on this page matches “${query}”.`;
}

/**
 * Enables the page buttons the trail allows, first moving focus off a button about to be
 * disabled; hides them when all the users fit on one page.
 */
function updatePager(): void {
  const focused = document.activeElement;
  if (focused === ui.next && !trail.hasNext) (trail.hasPrevious ? ui.previous : ui.table).focus();
  if (focused === ui.previous && !trail.hasPrevious) (trail.hasNext ? ui.next : ui.table).focus();
  ui.previous.disabled = !trail.hasPrevious;
  ui.next.disabled = !trail.hasNext;
  ui.pager.hidden = !trail.hasPrevious && !trail.hasNext;
}

function show(users: User[]): void {
  if (users.length === 0 && trail.number === 1) {
    ui.status.textContent = 'There are no users yet.';
    enter('empty');
    return;
  }
  usersOnPage = users.length;
  showUsers(ui.rows, users);
  ui.caption.textContent = `Users, page ${count.format(trail.number)}`;
  enter('list');
  applyFilter();
  updatePager();
}

/** Loads the trail's current page; a newer load cancels an older one still under way. */
async function load(): Promise<void> {
  loading?.abort();
  const controller = new AbortController();
  loading = controller;
  ui.table.setAttribute('aria-busy', 'true');
  ui.status.textContent = 'Loading users…';
  try {
    const page = await fetchUsersPage(trail.current, controller.signal);
    if (controller.signal.aborted) return;
    trail.learnNext(page.next);
    show(page.users);
  } catch (error) {
    if (controller.signal.aborted) return;
    if (!(error instanceof LoadError)) throw error;
    ui.status.textContent = '';
    ui.problemText.textContent = error.message;
    enter('problem');
  } finally {
    if (loading === controller) ui.table.removeAttribute('aria-busy');
  }
}

ui.filter.addEventListener('input', applyFilter);
ui.retry.addEventListener('click', () => void load());
ui.next.addEventListener('click', () => {
  if (!trail.hasNext) return;
  trail.forward();
  void load();
});
ui.previous.addEventListener('click', () => {
  if (!trail.hasPrevious) return;
  trail.back();
  void load();
});
void load();
