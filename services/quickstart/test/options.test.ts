import { describe, expect, it } from 'vitest'
import { parseQuickstartOptions } from '../src/options.js'

describe('parseQuickstartOptions', () => {
  it('reads --seconds=N or --seconds N, after a lone -- too, and runs until Ctrl-C without it', () => {
    expect(parseQuickstartOptions(['--seconds=20'])).toMatchObject({ seconds: 20, sentinel: false })
    expect(parseQuickstartOptions(['--', '--seconds', '2.5'])).toMatchObject({ seconds: 2.5 })
    expect(parseQuickstartOptions([])).toMatchObject({ seconds: undefined })
  })

  it('reads --sentinel, with the failover at +8 s unless --failover-after says otherwise', () => {
    expect(parseQuickstartOptions(['--', '--sentinel'])).toEqual({
      seconds: undefined,
      sentinel: true,
      failoverAfterSeconds: 8,
      cluster: false,
    })
    expect(parseQuickstartOptions(['--sentinel', '--failover-after=15'])).toMatchObject({
      sentinel: true,
      failoverAfterSeconds: 15,
    })
  })

  it('names the flag it cannot use', () => {
    expect(() => parseQuickstartOptions(['--secs=20'])).toThrow("Unknown option '--secs'")
    expect(() => parseQuickstartOptions(['--seconds'])).toThrow("Option '--seconds <value>' argument missing")
    expect(() => parseQuickstartOptions(['--seconds=soon'])).toThrow(
      "--seconds must be a positive number, got 'soon'",
    )
    expect(() => parseQuickstartOptions(['20'])).toThrow("Unexpected argument '20'")
    expect(() => parseQuickstartOptions(['--failover-after=5'])).toThrow('--failover-after needs --sentinel')
    expect(() => parseQuickstartOptions(['--sentinel', '--failover-after=-1'])).toThrow(
      "--failover-after must be a positive number, got '-1'",
    )
  })

  it('reads --cluster, which excludes --sentinel', () => {
    expect(parseQuickstartOptions(['--cluster', '--seconds=5'])).toMatchObject({
      seconds: 5,
      cluster: true,
      sentinel: false,
    })
    expect(() => parseQuickstartOptions(['--cluster', '--sentinel'])).toThrow(
      '--sentinel and --cluster exclude each other',
    )
  })
})
