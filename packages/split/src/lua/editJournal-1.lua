--[=[
editJournal: records the steps of a split counter's move journal after the move itself (journal.ts).

KEYS[1]  the move journal (a string of entries ';<field>=<value>,<applied at>[,<finished at>[,<cleared at>]]')
ARGV[1]  'finish' (the drain deleted the shard: append ',<now>' to each named entry not yet finished),
         'mark' (the gate forgot the move: append the time of clearing, and of finishing if missing) or
         'drop' (delete each named entry)
ARGV[2]  now, in Unix milliseconds
ARGV[3..] the entries' fields

Returns  the number of entries changed. The journal is deleted when its last entry goes.

A reader on a standalone Redis sees an entry and the shard's gate in one snapshot, so once an entry is finished
it needs no gate to know the shard no longer holds the value (counter.ts reads gates only while one is not).
]=]
local journal = redis.call('GET', KEYS[1])
if not journal then return 0 end
local wanted = {}
for i = 3, #ARGV do wanted[ARGV[i]] = true end
local out = {}
local changed = 0
for field, rest in string.gmatch(journal, ';([^=;]+)=([^;]*)') do
  if not wanted[field] then
    out[#out + 1] = ';' .. field .. '=' .. rest
  elseif ARGV[1] == 'drop' then
    changed = changed + 1
  else
    local _, commas = string.gsub(rest, ',', ',')
    if ARGV[1] == 'finish' and commas == 1 then
      rest = rest .. ',' .. ARGV[2]
      changed = changed + 1
    elseif ARGV[1] == 'mark' and commas < 3 then
      if commas == 1 then rest = rest .. ',' .. ARGV[2] end
      rest = rest .. ',' .. ARGV[2]
      changed = changed + 1
    end
    out[#out + 1] = ';' .. field .. '=' .. rest
  end
end
if #out == 0 then
  redis.call('DEL', KEYS[1])
else
  redis.call('SET', KEYS[1], table.concat(out))
end
return changed
