import Table from 'cli-table3'

/** A column: its heading, and whether it holds numbers (right-aligned, never shortened). */
export interface Column {
  heading: string
  numeric?: boolean
}

// Piped output has no terminal width; 120 columns reads well in logs and CI output.
const DEFAULT_WIDTH = 120
const MIN_TEXT_WIDTH = 8
const MIN_KEY_WIDTH = 16

/**
 * Renders rows as a table that fits the terminal: the key column gives way first, then the other text columns;
 * numeric columns keep their width. cli-table3 cuts long values with an ellipsis.
 */
export function renderTable(
  columns: readonly Column[],
  rows: readonly string[][],
  width = terminalWidth(),
): string {
  const widths = columns.map(
    (column, i) => Math.max(column.heading.length, ...rows.map((row) => (row[i] ?? '').length)) + 2,
  )
  // Borders take one character per column plus one.
  let over = widths.reduce((sum, n) => sum + n, columns.length + 1) - width
  // The first column (the key) gives way first: it is the one that grows without bound.
  const first = widths[0] ?? 0
  const firstShrink = Math.min(over, Math.max(0, first - MIN_KEY_WIDTH))
  if (over > 0 && firstShrink > 0) {
    widths[0] = first - firstShrink
    over -= firstShrink
  }
  // Then the other text columns, widest first; numbers are never cut.
  while (over > 0) {
    let widest = -1
    columns.forEach((column, i) => {
      if (i > 0 && column.numeric !== true && (widths[i] ?? 0) > MIN_TEXT_WIDTH) {
        if (widest < 0 || (widths[i] ?? 0) > (widths[widest] ?? 0)) widest = i
      }
    })
    if (widest < 0) break
    widths[widest] = (widths[widest] ?? 0) - 1
    over--
  }
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
  // A pseudo-terminal nobody sized reports 0 columns.
  return process.stdout.isTTY === true && process.stdout.columns > 0 ? process.stdout.columns : DEFAULT_WIDTH
}
