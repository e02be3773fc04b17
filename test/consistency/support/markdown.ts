/** A Markdown pipe table: its header cells and the cells of each body row, trimmed. */
export interface Table {
  header: string[];
  rows: string[][];
}

/** The cells of one `| a | b |` line; `\|` is a pipe inside a cell. */
function cells(line: string): string[] {
  return line
    .trim()
    .replace(/^\||\|$/g, '')
    .split(/(?<!\\)\|/)
    .map((cell) => cell.trim().replaceAll('\\|', '|'));
}

/** Every table of a Markdown text, in order (the line after the header is the delimiter row). */
export function tablesOf(markdown: string): Table[] {
  const tables: Table[] = [];
  let block: string[] = [];
  for (const line of [...markdown.split('\n'), '']) {
    if (line.trimStart().startsWith('|')) {
      block.push(line);
      continue;
    }
    const [header, , ...rows] = block;
    if (header !== undefined) tables.push({ header: cells(header), rows: rows.map(cells) });
    block = [];
  }
  return tables;
}

/** The one table whose header is exactly `header`; fails when there is none or more than one. */
export function tableWithHeader(markdown: string, header: readonly string[]): Table {
  const found = tablesOf(markdown).filter((t) => t.header.join('|') === header.join('|'));
  if (found.length !== 1) throw new Error(`expected one table with the header ${header.join(' | ')}, found ${found.length}`);
  return found[0] as Table;
}
