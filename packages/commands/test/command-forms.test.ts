import { describe, expect, it } from 'vitest'
import {
  allCommands,
  COMMAND_FORMS,
  CommandForm,
  type CommandSpec,
  commandForm,
  formNames,
  knownForms,
  lookupCommand,
  splitKindOf,
} from '../src/index.js'

function formOf(line: string): number {
  const [name, ...args] = line.split(' ')
  const spec = lookupCommand(name as string) as CommandSpec
  return commandForm(spec, args)
}

describe('the command forms column', () => {
  it('names only commands the table knows', () => {
    for (const name of COMMAND_FORMS.keys()) expect(lookupCommand(name), name).toBeDefined()
  })

  it('gives every command a form, and a form of its own only to the calls a split key answers over its shards', () => {
    for (const spec of allCommands()) expect(formOf(`${spec.name} k v`), spec.name).toBeGreaterThan(0)
    expect(formOf('incr k')).toBe(CommandForm.counterWrite)
    expect(formOf('decrby k 5')).toBe(CommandForm.counterWrite)
    expect(formOf('get k')).toBe(CommandForm.get)
    expect(formOf('set k v')).toBe(CommandForm.set)
    expect(formOf('SET k v ex 10')).toBe(CommandForm.set)
    expect(formOf('set k v PX 10')).toBe(CommandForm.set)
    expect(formOf('sadd k a b')).toBe(CommandForm.setSplit)
    expect(formOf('smembers k')).toBe(CommandForm.setSplit)
    expect(formOf('zadd k 1 a 2 b')).toBe(CommandForm.zsetSplit)
    expect(formOf('zrange k 0 -1')).toBe(CommandForm.zsetSplit)
    expect(formOf('zrevrange k 0 -1 withscores')).toBe(CommandForm.zsetSplit)
  })

  it('counts the options a split cannot answer as foreign forms', () => {
    expect(formOf('set k v NX')).toBe(CommandForm.stringOther)
    expect(formOf('set k v GET')).toBe(CommandForm.stringOther)
    expect(formOf('set k v KEEPTTL')).toBe(CommandForm.stringOther)
    expect(formOf('set k v EXAT 99')).toBe(CommandForm.stringOther)
    expect(formOf('getrange k 0 1')).toBe(CommandForm.stringOther)
    expect(formOf('append k v')).toBe(CommandForm.stringOther)
    expect(formOf('incrbyfloat k 1.5')).toBe(CommandForm.stringOther)
    expect(formOf('sdiff k j')).toBe(CommandForm.setOther)
    expect(formOf('spop k')).toBe(CommandForm.setOther)
    expect(formOf('zadd k NX 1 a')).toBe(CommandForm.zsetOther)
    expect(formOf('zadd k incr 1 a')).toBe(CommandForm.zsetOther)
    expect(formOf('zrange k 0 10 BYSCORE')).toBe(CommandForm.zsetOther)
    expect(formOf('zrange k 0 -1 REV')).toBe(CommandForm.zsetOther)
    expect(formOf('zdiff 2 k j')).toBe(CommandForm.zsetOther)
    expect(formOf('del k')).toBe(CommandForm.other)
    expect(formOf('expire k 10')).toBe(CommandForm.other)
    expect(formOf('hset k f v')).toBe(CommandForm.other)
    expect(formOf('eval s 1 k')).toBe(CommandForm.other)
  })

  it('accepts arguments as Buffers, as the proxy hands them over', () => {
    const spec = lookupCommand('set') as CommandSpec
    expect(commandForm(spec, [Buffer.from('k'), Buffer.from('v'), Buffer.from('px'), Buffer.from('5')])).toBe(
      CommandForm.set,
    )
    expect(commandForm(spec, [Buffer.from('k'), Buffer.from('v'), Buffer.from('xx')])).toBe(
      CommandForm.stringOther,
    )
  })
})

describe('splitKindOf', () => {
  it('finds the one split kind a set of forms belongs to', () => {
    expect(splitKindOf(CommandForm.counterWrite)).toBe('counter')
    expect(splitKindOf(CommandForm.counterWrite | CommandForm.get)).toBe('counter')
  })

  it('finds none for sets, sorted sets and read-mostly copies, which the data plane does not serve split', () => {
    expect(splitKindOf(CommandForm.get | CommandForm.set)).toBeUndefined()
    expect(splitKindOf(CommandForm.get)).toBeUndefined()
    expect(splitKindOf(CommandForm.setSplit)).toBeUndefined()
    expect(splitKindOf(CommandForm.zsetSplit)).toBeUndefined()
  })

  it('finds none for forms of two kinds, a foreign form, or nothing seen', () => {
    // The counter reset now and then by SET: INCR after a split SET would answer WRONGTYPE.
    expect(splitKindOf(CommandForm.counterWrite | CommandForm.set)).toBeUndefined()
    expect(splitKindOf(CommandForm.setSplit | CommandForm.setOther)).toBeUndefined()
    expect(splitKindOf(CommandForm.setSplit | CommandForm.zsetSplit)).toBeUndefined()
    expect(splitKindOf(CommandForm.counterWrite | CommandForm.other)).toBeUndefined()
    expect(splitKindOf(CommandForm.stringOther)).toBeUndefined()
    expect(splitKindOf(0)).toBeUndefined()
  })

  it('reads bits it does not know (from a newer agent) as a foreign form', () => {
    expect(knownForms(CommandForm.counterWrite | 1024)).toBe(CommandForm.counterWrite | CommandForm.other)
    expect(splitKindOf(knownForms(CommandForm.counterWrite | 1024))).toBeUndefined()
    expect(formNames(CommandForm.counterWrite | CommandForm.get | 4096)).toEqual([
      'counter-write',
      'get',
      'other',
    ])
  })
})
