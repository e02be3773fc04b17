/**
 * The page's stylesheet (page.css), kept in a module so that it is part of the compiled service:
 * the image holds only each workspace's dist. Colours keep text at 4.5:1 or more on its
 * background, in the light and the dark scheme.
 */
export const stylesheet = `:root {
  color-scheme: light dark;
  --text: #1b1f24;
  --muted: #4b5563;
  --background: #ffffff;
  --stripe: #f2f4f7;
  --line: #d0d5dd;
  --accent: #1d4ed8;
  --on-accent: #ffffff;
  --problem-text: #7a1b12;
  --problem-background: #fdecea;
  --problem-line: #b42318;
}
@media (prefers-color-scheme: dark) {
  :root {
    --text: #e8eaed;
    --muted: #b6bcc6;
    --background: #15181d;
    --stripe: #1f242b;
    --line: #3b424d;
    --accent: #8ab4f8;
    --on-accent: #0b1a33;
    --problem-text: #ffd7d2;
    --problem-background: #3a1512;
    --problem-line: #f97066;
  }
}
* { box-sizing: border-box; }
/* Elements styled with a display of their own stay hidden while the script hides them. */
[hidden] { display: none !important; }
body {
  margin: 0;
  font: 1rem/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  color: var(--text);
  background: var(--background);
}
main { max-width: 60rem; margin: 0 auto; padding: 1.5rem 1rem 3rem; }
h1 { margin: 0 0 0.5rem; font-size: 1.75rem; }
h1:focus { outline: none; }
.status { color: var(--muted); margin: 0 0 1rem; }
body[data-state="empty"] .status { color: var(--text); font-size: 1.25rem; padding: 2rem 0; }
.problem {
  color: var(--problem-text);
  background: var(--problem-background);
  border: 1px solid var(--problem-line);
  border-radius: 0.5rem;
  padding: 1rem;
  margin: 0 0 1rem;
}
.problem p { margin: 0 0 0.75rem; font-weight: 600; }
.filter { margin: 0 0 1rem; display: flex; gap: 0.5rem; align-items: center; flex-wrap: wrap; }
input, button { font: inherit; }
input {
  color: var(--text);
  background: var(--background);
  border: 1px solid var(--muted);
  border-radius: 0.375rem;
  padding: 0.375rem 0.5rem;
  min-width: 16rem;
}
button {
  color: var(--on-accent);
  background: var(--accent);
  border: 1px solid var(--accent);
  border-radius: 0.375rem;
  padding: 0.375rem 0.875rem;
  cursor: pointer;
}
button:disabled { opacity: 0.45; cursor: not-allowed; }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
table { width: 100%; border-collapse: collapse; }
table:focus { outline: none; }
table:focus-visible { outline: 3px solid var(--accent); }
table[aria-busy="true"] tbody { opacity: 0.6; }
caption { text-align: left; font-weight: 600; padding: 0 0 0.5rem; }
th, td { text-align: left; padding: 0.5rem 0.75rem; border-bottom: 1px solid var(--line); overflow-wrap: anywhere; }
thead th { border-bottom: 2px solid var(--muted); }
tbody tr:nth-child(even) { background: var(--stripe); }
td:last-child { white-space: nowrap; }
.pager { display: flex; gap: 0.75rem; margin: 1rem 0 0; }
`;
