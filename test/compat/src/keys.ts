/*
 * Every key the 12 vendored files (ioredis/test/functional/*.ts) read or write, as the server sees it (with
 * the `keyPrefix: "foo:"` of some tests applied), found by reading the files. compat-agent-local-cache
 * registers each one `local_cache` before every test (local-cache-setup.ts).
 *
 * Checked against a run of the suite on plain ioredis that logged the keys of every command sent: the same
 * set, plus what is left out here on purpose: the binary keys of send_command.ts's buffer tests (0xff bytes,
 * e.g. "foo:\xff", "\xffbar", not UTF-8 text) and SORT's BY/GET patterns ("foo:weight_*->value"). Channels
 * ("subscribe", "anychannel") are not keys.
 */

const keys = [
  // send_command.ts, pipeline.ts, transaction.ts, select.ts, string_numbers.ts, transformer.ts, autopipelining.ts
  'foo',
  '你好',
  // transformer.ts: mset/mget
  'a',
  'b',
  // keys of scripts made with defineCommand: pipeline.ts, scripting.ts, autopipelining.ts
  'bar',
  'baz',
  'c',
  'k1',
  'k2',
  'k3',
  'k4',
  'k5',
  'k6',
  'test',
  'preload',
  'init',
  'waitforready',
  // autopipelining.ts, scan_stream.ts
  'foo1',
  'foo2',
  'foo3',
  'foo4',
  'foo10',
  'loo1',
  'loo2',
  'loo3',
  // scan_stream.ts: the set of sscanStream (and of the mock cluster) and the hash of hscanStream
  'set',
  'object',
  // hgetall.ts, watch-exec.ts
  'test_key',
  'watchkey',
  // under `keyPrefix: "foo:"`: send_command.ts, pipeline.ts, transformer.ts, scripting.ts
  'foo:foo',
  'foo:bar',
  'foo:app1',
  'foo:app2',
  'foo:app3',
  'foo:zset1',
  'foo:zset2',
  'foo:out',
  'foo:object_1',
  'foo:object_2',
  'foo:object_3',
  'foo:weight_1',
  'foo:weight_2',
  'foo:weight_3',
  'foo:src',
  'foo:dest',
  'foo:a',
  'foo:b',
  'foo:mykey',
  'foo:k1',
  'foo:k2',
]

// autopipelining.ts "should handle large pipelines without RangeError": `key${i}` for i in 0..599
const numbered = Array.from({ length: 600 }, (_, index) => `key${index}`)

/**
 * The databases whose registry the keys go into. An agent belongs to a deployment, host, port and database,
 * and reads the registry from that database; these are the ones the tests open clients on (`db: 1` in
 * autopipelining.ts, `db: 2` in select.ts). A client that SELECTs another database later reads past Heatsink.
 */
export const TEST_DATABASES: readonly number[] = [0, 1, 2]

/** The keys compat-agent-local-cache registers. */
export const TEST_KEYS: readonly string[] = [...keys, ...numbered]
