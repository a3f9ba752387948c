import Table from 'cli-table3'

/** A column: its heading, and whether it holds numbers (right-aligned, never shortened). */
export interface Column {
  heading: string
  numeric?: boolean
}

// Piped output has no terminal width; 120 columns reads well in logs and CI output.
const DEFAULT_WIDTH = 120
const MIN_TEXT_WIDTH = 8

/**
 * Renders rows as a table that fits the terminal: numeric columns keep their width, and the text columns (keys
 * first of all) share what is left, long values cut with an ellipsis by cli-table3.
 */
export function renderTable(
  columns: readonly Column[],
  rows: readonly string[][],
  width = terminalWidth(),
): string {
  const natural = columns.map(
    (column, i) => Math.max(column.heading.length, ...rows.map((row) => (row[i] ?? '').length)) + 2,
  )
  // Borders take one character per column plus one.
  const available = width - (columns.length + 1)
  const fixed = natural.reduce((sum, n, i) => (columns[i]?.numeric === true ? sum + n : sum), 0)
  const textColumns = columns.filter((column) => column.numeric !== true).length
  const naturalText = natural.reduce((sum, n, i) => (columns[i]?.numeric === true ? sum : sum + n), 0)
  const share = textColumns === 0 ? 0 : Math.max(MIN_TEXT_WIDTH, available - fixed) / naturalText
  const widths = natural.map((n, i) =>
    columns[i]?.numeric === true || share >= 1 ? n : Math.max(MIN_TEXT_WIDTH, Math.floor(n * share)),
  )
  const table = new Table({
    head: columns.map((column) => column.heading),
    colWidths: widths,
    colAligns: columns.map((column) => (column.numeric === true ? 'right' : 'left')),
    style: { head: [], border: [], compact: true },
    wordWrap: false,
  })
  for (const row of rows) table.push([...row])
  return table.toString()
}

/** The terminal's width, or 120 when the output is not a terminal. */
export function terminalWidth(): number {
  return process.stdout.isTTY === true ? (process.stdout.columns ?? DEFAULT_WIDTH) : DEFAULT_WIDTH
}
