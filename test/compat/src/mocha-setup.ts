import { basename } from 'node:path'
import {
  afterAll,
  afterEach,
  beforeAll,
  beforeEach,
  inject,
  describe as vitestDescribe,
  it as vitestIt,
} from 'vitest'
import { type Exclusion, exclusionsFor } from './exclusions.js'
import './provided.js'

/*
 * mocha's globals for the vendored tests, on vitest (a setup file, before ioredis's helpers/global.ts).
 *
 * - describe bodies run at once, as in mocha; the tree they build is handed to vitest when the outermost one
 *   ends, without the tests of EXCLUSIONS (never registered: CI forbids skipped tests) and without suites left
 *   empty (vitest fails an empty suite).
 * - A test or hook taking a parameter gets mocha's `done`: it ends when done() is called and fails on
 *   done(error). vitest 3 rejects such functions itself ("done() callback is deprecated, use promise instead").
 * - `this` inside a test, hook or describe body is a mocha-like context whose timeout() and slow() do nothing
 *   (vitest's project timeouts apply); skip() throws, since nothing may be skipped.
 * - it.skip, describe.skip, xit, xdescribe and tests without a body register nothing when EXCLUSIONS lists
 *   them, and fail the file otherwise.
 */

type Done = (error?: unknown) => void
type MochaFunction = (this: MochaContext, done: Done) => unknown
type SuiteBody = (this: MochaContext) => unknown
type HookName = 'beforeAll' | 'afterAll' | 'beforeEach' | 'afterEach'

interface MochaContext {
  timeout(ms?: number): MochaContext
  slow(ms?: number): MochaContext
  retries(count?: number): MochaContext
  skip(): never
}

const context: MochaContext = {
  timeout: () => context,
  slow: () => context,
  retries: () => context,
  skip: () => {
    throw new Error(
      'this.skip() is not supported: CI forbids skipped tests; list the test in src/exclusions.ts',
    )
  },
}

interface SuiteNode {
  readonly kind: 'suite'
  readonly title: string
  readonly only: boolean
  readonly children: Node[]
}
interface TestNode {
  readonly kind: 'test'
  readonly title: string
  readonly only: boolean
  readonly fn: MochaFunction
}
interface HookNode {
  readonly kind: 'hook'
  readonly name: HookName
  readonly fn: MochaFunction
}
type Node = SuiteNode | TestNode | HookNode

const vitestHooks: Record<HookName, (fn: () => Promise<void>) => void> = {
  beforeAll: (fn) => beforeAll(fn),
  afterAll: (fn) => afterAll(fn),
  beforeEach: (fn) => beforeEach(fn),
  afterEach: (fn) => afterEach(fn),
}

const excluded = new Map<string, Exclusion>(
  exclusionsFor(inject('compatClient')).map((exclusion) => [exclusion.test, exclusion]),
)
const matched = new Set<string>()

// The describe bodies running now, outermost first; empty at the top of a file.
const open: { title: string; node: SuiteNode }[] = []

function fullName(title: string): string {
  return [...open.map((suite) => suite.title), title].join(' > ')
}

/** True when EXCLUSIONS lists this test or suite; then nothing is registered for it. */
function isExcluded(name: string): boolean {
  if (!excluded.has(name)) return false
  matched.add(name)
  return true
}

function notRegistered(what: string, name: string): Error {
  return new Error(
    `${what} "${name}" would not run, and CI forbids skipped tests: list it in test/compat/src/exclusions.ts ` +
      'with the reason, so it is not registered at all',
  )
}

function addSuite(title: string, body: SuiteBody | undefined, only: boolean): void {
  const name = fullName(title)
  if (isExcluded(name)) return
  if (body === undefined) throw notRegistered('suite without a body', name)
  const node: SuiteNode = { kind: 'suite', title, only, children: [] }
  open.push({ title, node })
  try {
    body.call(context)
  } finally {
    open.pop()
  }
  const parent = open.at(-1)
  if (parent !== undefined) parent.node.children.push(node)
  else registerSuite(node)
}

function addTest(title: string, fn: MochaFunction | undefined, only: boolean): void {
  const name = fullName(title)
  if (isExcluded(name)) return
  if (fn === undefined) throw notRegistered('pending test', name)
  const node: TestNode = { kind: 'test', title, only, fn }
  const parent = open.at(-1)
  if (parent !== undefined) parent.node.children.push(node)
  else registerTest(node)
}

function addHook(name: HookName, fn: MochaFunction): void {
  const parent = open.at(-1)
  if (parent !== undefined) parent.node.children.push({ kind: 'hook', name, fn })
  else vitestHooks[name](promised(fn))
}

function skipped(kind: 'test' | 'suite') {
  return (title: string) => {
    const name = fullName(title)
    if (!isExcluded(name)) throw notRegistered(`skipped ${kind}`, name)
  }
}

const hasTests = (node: SuiteNode): boolean =>
  node.children.some((child) => child.kind === 'test' || (child.kind === 'suite' && hasTests(child)))

function registerSuite(node: SuiteNode): void {
  if (!hasTests(node)) return
  ;(node.only ? vitestDescribe.only : vitestDescribe)(node.title, () => {
    for (const child of node.children) {
      if (child.kind === 'suite') registerSuite(child)
      else if (child.kind === 'test') registerTest(child)
      else vitestHooks[child.name](promised(child.fn))
    }
  })
}

function registerTest(node: TestNode): void {
  ;(node.only ? vitestIt.only : vitestIt)(node.title, promised(node.fn))
}

const isThenable = (value: unknown): value is PromiseLike<unknown> =>
  (typeof value === 'object' || typeof value === 'function') &&
  value !== null &&
  typeof (value as { then?: unknown }).then === 'function'

/**
 * A function of no parameters for vitest that runs a mocha test or hook: awaiting what it returns, or, when it
 * takes `done`, until done() is called. As under mocha, an exception thrown while it runs from a callback (an
 * `expect` in a reply callback) fails it at once rather than at its timeout: vitest leaves uncaught exceptions
 * to other listeners when there are some. It resolves to nothing, so vitest never takes a hook's result for a
 * cleanup function.
 */
function promised(fn: MochaFunction): () => Promise<void> {
  return async () => {
    let fail: (error: unknown) => void = () => {}
    const uncaught = new Promise<never>((_, reject) => {
      fail = reject
    })
    process.on('uncaughtException', fail)
    try {
      await Promise.race([run(fn), uncaught])
    } finally {
      process.off('uncaughtException', fail)
    }
  }
}

function run(fn: MochaFunction): Promise<unknown> {
  if (fn.length === 0) {
    try {
      return Promise.resolve(fn.call(context, () => {}))
    } catch (error) {
      return Promise.reject(error)
    }
  }
  return new Promise<void>((resolve, reject) => {
    const done: Done = (error) => {
      if (error === undefined || error === null) resolve()
      else
        reject(error instanceof Error ? error : new Error(`done() invoked with non-Error: ${String(error)}`))
    }
    // mocha refuses a function that both takes done and returns a promise; a rejection fails the test here.
    const result = fn.call(context, done)
    if (isThenable(result)) Promise.resolve(result).catch(reject)
  })
}

type SuiteFunction = (title: string, body?: SuiteBody) => void
type TestFunction = (title: string, fn?: MochaFunction) => void

const describe: SuiteFunction & { only: SuiteFunction; skip: SuiteFunction } = Object.assign(
  (title: string, body?: SuiteBody) => addSuite(title, body, false),
  {
    only: (title: string, body?: SuiteBody) => addSuite(title, body, true),
    skip: skipped('suite'),
  },
)
const it: TestFunction & { only: TestFunction; skip: TestFunction } = Object.assign(
  (title: string, fn?: MochaFunction) => addTest(title, fn, false),
  {
    only: (title: string, fn?: MochaFunction) => addTest(title, fn, true),
    skip: skipped('test'),
  },
)
const hook = (name: HookName) => (fn: MochaFunction) => addHook(name, fn)

Object.assign(globalThis, {
  describe,
  context: describe,
  xdescribe: describe.skip,
  xcontext: describe.skip,
  it,
  specify: it,
  xit: it.skip,
  xspecify: it.skip,
  before: hook('beforeAll'),
  after: hook('afterAll'),
  beforeEach: hook('beforeEach'),
  afterEach: hook('afterEach'),
})

// ioredis's helpers/global.ts, run again for every file (fresh modules, one process), adds a listener to
// process and wraps console.error each time, where mocha runs it once: undo both after each file.
const unhandledRejectionListeners = process.listeners('unhandledRejection')
const consoleError = console.error
afterAll(() => {
  for (const listener of process.listeners('unhandledRejection')) {
    if (!unhandledRejectionListeners.includes(listener)) process.off('unhandledRejection', listener)
  }
  console.error = consoleError
})

// After the file is collected: every exclusion naming this file must have matched one of its tests.
beforeAll((suite) => {
  const file = basename(suite.file.filepath)
  const stale = [...excluded.values()].filter(
    (exclusion) => exclusion.file === file && !matched.has(exclusion.test),
  )
  if (stale.length > 0) {
    throw new Error(
      `test/compat/src/exclusions.ts lists tests that ${file} does not have: ${stale.map((e) => e.test).join('; ')}`,
    )
  }
})
