/**
 * The HTML of the users page. Nothing in it comes from a request or the database: the users are
 * added by the script (main.js) as text. No inline script or style, so the page works under a CSP
 * without 'unsafe-inline'.
 */

export interface DocumentAssets {
  /** The path the assets are served under, ending in `/`, e.g. `/assets/<build>/`. */
  base: string;
  /** The script modules main.js imports, preloaded so that they load beside it, not after it. */
  modules: readonly string[];
}

export function pageDocument({ base, modules }: DocumentAssets): string {
  const preloads = modules.map((name) => `<link rel="modulepreload" href="${base}${name}">`);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Users</title>
<meta name="description" content="The users of the two-tier stack, from its frontend's /api/users">
<link rel="icon" href="${base}icon.svg" type="image/svg+xml">
<link rel="stylesheet" href="${base}page.css">
${preloads.join('\n')}
<script type="module" src="${base}main.js"></script>
</head>
<body>
<main>
<h1 id="heading" tabindex="-1">Users</h1>
<p id="status" class="status" role="status">Loading users…</p>
<noscript><p class="status">This page needs JavaScript. The same users as JSON: <a href="/api/users?limit=100">/api/users</a>.</p></noscript>
<div id="problem" class="problem" role="alert" hidden>
<p id="problem-text"></p>
<button id="retry" type="button">Retry</button>
</div>
<section id="list" hidden>
<p class="filter"><label for="filter">Filter this page</label>
<input id="filter" type="search" autocomplete="off" spellcheck="false" aria-controls="users"></p>
<table id="users" tabindex="-1">
<caption id="caption">Users</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Email</th><th scope="col">Created</th></tr></thead>
<tbody id="rows"></tbody>
</table>
<p id="no-match" class="status" hidden></p>
<nav id="pager" class="pager" aria-label="Pages of users" hidden>
<button id="previous" type="button" disabled>Previous page</button>
<button id="next" type="button" disabled>Next page</button>
</nav>
</section>
</main>
</body>
</html>
`;
}
