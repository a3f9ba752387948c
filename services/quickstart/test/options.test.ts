import { describe, expect, it } from 'vitest'
import { parseQuickstartOptions } from '../src/options.js'

describe('parseQuickstartOptions', () => {
  it('reads --seconds=N or --seconds N, after a lone -- too, and runs until Ctrl-C without it', () => {
    expect(parseQuickstartOptions(['--seconds=20'])).toEqual({ seconds: 20 })
    expect(parseQuickstartOptions(['--', '--seconds', '2.5'])).toEqual({ seconds: 2.5 })
    expect(parseQuickstartOptions([])).toEqual({ seconds: undefined })
  })

  it('names the flag it cannot use', () => {
    expect(() => parseQuickstartOptions(['--secs=20'])).toThrow("Unknown option '--secs'")
    expect(() => parseQuickstartOptions(['--seconds'])).toThrow("Option '--seconds <value>' argument missing")
    expect(() => parseQuickstartOptions(['--seconds=soon'])).toThrow(
      "--seconds must be a positive number, got 'soon'",
    )
    expect(() => parseQuickstartOptions(['20'])).toThrow("Unexpected argument '20'")
  })
})
