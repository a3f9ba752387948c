import { describe, expect, it } from 'vitest'
import { fit, MAX_COLUMNS, renderSummary, renderView, type ViewState } from '../src/dashboard.js'

const empty: ViewState = {
  elapsedSeconds: 3,
  header: ['Dashboard: http://127.0.0.1:8080/'],
  entries: [],
  events: [],
  startedAt: 0,
  footer: '',
}

describe('the quickstart view', () => {
  it('prints no Events heading and no table heading before there is something under them', () => {
    expect(renderView(empty)).toBe('Dashboard: http://127.0.0.1:8080/\n\nRegistry: no hot key yet')
    expect(renderSummary(empty)).toBe('[+3s] Registry: no hot key yet')
    const withEvent = renderView({
      ...empty,
      events: [{ at: 6400, text: 'demo:post:42 promoted (auto): local_cache' }],
    })
    expect(withEvent.split('\n').slice(-2)).toEqual([
      'Events',
      '  [+6.4s] demo:post:42 promoted (auto): local_cache',
    ])
  })

  it('wraps long lines at spaces within 120 columns, and cuts a word longer than a line', () => {
    const words = Array.from({ length: 60 }, (_, i) => `word${i}`).join(' ')
    const wrapped = fit([words])
    expect(wrapped.length).toBeGreaterThan(1)
    expect(wrapped.every((line) => line.length <= MAX_COLUMNS)).toBe(true)
    expect(wrapped.slice(1).every((line) => line.startsWith('    '))).toBe(true)
    expect(wrapped.map((line) => line.trim()).join(' ')).toBe(words)
    const cut = fit(['x'.repeat(300)])
    expect(cut.every((line) => line.length <= MAX_COLUMNS)).toBe(true)
    expect(cut.join('').replace(/ /g, '')).toBe('x'.repeat(300))
  })
})
