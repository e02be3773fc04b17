/**
 * The page's icon (icon.svg). Served by the page itself: without one, browsers ask for
 * /favicon.ico and log its 404 as an error on the console.
 */
export const icon = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">
<circle cx="16" cy="11" r="6" fill="#1d4ed8"/>
<path d="M4 29c0-6.6 5.4-11 12-11s12 4.4 12 11z" fill="#1d4ed8"/>
</svg>
`;
