import { describe, expect, it } from 'vitest'
import { ProtocolError } from '../src/errors.js'
import { encodeRequest, type Request, RequestParser } from '../src/resp/request-parser.js'

function parseAll(chunks: Buffer[]): Request[] {
  const parser = new RequestParser()
  const requests: Request[] = []
  for (const chunk of chunks) parser.feed(chunk, (request) => requests.push(request))
  return requests
}

function bytewise(bytes: Buffer): Buffer[] {
  return [...bytes].map((byte) => Buffer.from([byte]))
}

const texts = (request: Request) => [request.name, ...request.args.map((arg) => arg.toString('latin1'))]

describe('RequestParser', () => {
  const pipeline = Buffer.concat([
    encodeRequest(['SET', 'k', 'v']),
    Buffer.from('PING\r\n'),
    encodeRequest(['GET', 'k']),
    Buffer.from('set "a b" \'c\\\'d\' "\\x41\\n"\n'),
  ])

  it('parses a pipeline of multibulk and inline requests in order, whole or one byte at a time', () => {
    // Names in the command table's lower case, whatever case they were sent in.
    const expected = [['set', 'k', 'v'], ['ping'], ['get', 'k'], ['set', 'a b', "c'd", 'A\n']]
    expect(parseAll([pipeline]).map(texts)).toEqual(expected)
    expect(parseAll(bytewise(pipeline)).map(texts)).toEqual(expected)
  })

  it('keeps the exact bytes of each multibulk request to forward', () => {
    const requests = parseAll(bytewise(pipeline))
    expect(requests[0]?.raw.equals(encodeRequest(['SET', 'k', 'v']))).toBe(true)
    // Inline requests are forwarded in multibulk form.
    expect(requests[1]?.raw.toString()).toBe('*1\r\n$4\r\nPING\r\n')
  })

  it('is binary-safe: CR, LF and NUL inside keys and values', () => {
    const key = Buffer.from([0, 13, 10, 255, 36, 42])
    const value = Buffer.from('\r\n$3\r\n*1\r\n')
    const [request] = parseAll([encodeRequest(['SET', key, value])])
    expect(request?.args[0]?.equals(key)).toBe(true)
    expect(request?.args[1]?.equals(value)).toBe(true)
  })

  it('gathers a large bulk string cut into many chunks', () => {
    const value = Buffer.alloc(3 * 1024 * 1024, 7)
    const bytes = encodeRequest(['SET', 'big', value])
    const chunks: Buffer[] = []
    for (let i = 0; i < bytes.length; i += 65_536) chunks.push(bytes.subarray(i, i + 65_536))
    const [request] = parseAll(chunks)
    expect(request?.args[1]?.equals(value)).toBe(true)
  })

  it('skips empty multibulks and empty inline lines, as Redis does', () => {
    expect(parseAll([Buffer.from('*0\r\n\r\n  \r\nPING\r\n')]).map(texts)).toEqual([['ping']])
  })

  it('reads every spelling of a name, and names longer than any command, in lower case', () => {
    const names = ['GET', 'get', 'Get', 'gEt', 'X'.repeat(40), 'HGETALL', 'hgetall']
    const requests = parseAll(names.map((name) => encodeRequest([name, 'k'])))
    expect(requests.map((request) => request.name)).toEqual(names.map((name) => name.toLowerCase()))
  })

  it('keeps the original bytes of a request whose name was sent in upper case', () => {
    const bytes = encodeRequest(['SET', 'k', 'v'])
    expect(parseAll([bytes])[0]?.raw.equals(bytes)).toBe(true)
  })

  it('reads lengths cut anywhere, with leading zeros, and of twelve digits', () => {
    const value = Buffer.alloc(1234, 5)
    const bytes = encodeRequest(['SET', 'k', value])
    expect(parseAll(bytewise(bytes))[0]?.args[1]?.equals(value)).toBe(true)
    const padded = parseAll([Buffer.from('*002\r\n$0003\r\nGET\r\n$01\r\nk\r\n')])
    expect(padded.map(texts)).toEqual([['get', 'k']])
    expect(() => parseAll([Buffer.from('*1\r\n$000000000003\r\nGET\r\n')])).not.toThrow()
    expect(() => parseAll([Buffer.from('*1\r\n$0000000000003\r\nGET\r\n')])).toThrow(
      new ProtocolError('invalid bulk length'),
    )
  })

  it.each([
    ['*x\r\n', 'invalid multibulk length'],
    ['*1\r\n:3\r\n', "expected '$', got ':'"],
    ['*1\r\n$-4\r\n', 'invalid bulk length'],
    ['*1\r\n$3x\r\nGET\r\n', 'invalid bulk length'],
    ['*\r\n', 'invalid multibulk length'],
    ['*1\r\n$999999999999\r\n', 'invalid bulk length'],
    ['SET "a b\r\n', 'unbalanced quotes in request'],
    ['SET "a"b\r\n', 'unbalanced quotes in request'],
  ])('refuses %j with "%s"', (input, message) => {
    expect(() => parseAll([Buffer.from(input)])).toThrow(new ProtocolError(message))
  })

  it('refuses an inline request longer than 64 KB without a newline', () => {
    expect(() => parseAll([Buffer.alloc(70_000, 97)])).toThrow(new ProtocolError('too big inline request'))
  })
})
