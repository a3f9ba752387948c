--[[
editJournal: marks or deletes entries of a split counter's move journal (journal.ts collects it in two steps).

KEYS[1]  the move journal (a string of entries ';<field>=<value>,<applied at>[,<cleared at>]')
ARGV[1]  'mark' (append ',<now>' to each named entry not yet marked) or 'drop' (delete each named entry)
ARGV[2]  now, in Unix milliseconds
ARGV[3..] the entries' fields

Returns  the number of entries changed. The journal is deleted when its last entry goes.
]]
local journal = redis.call('GET', KEYS[1])
if not journal then return 0 end
local wanted = {}
for i = 3, #ARGV do wanted[ARGV[i]] = true end
local out = {}
local changed = 0
for field, rest in string.gmatch(journal, ';([^=;]+)=([^;]*)') do
  if not wanted[field] then
    out[#out + 1] = ';' .. field .. '=' .. rest
  elseif ARGV[1] == 'mark' then
    local _, commas = string.gsub(rest, ',', ',')
    if commas == 1 then
      rest = rest .. ',' .. ARGV[2]
      changed = changed + 1
    end
    out[#out + 1] = ';' .. field .. '=' .. rest
  else
    changed = changed + 1
  end
end
if #out == 0 then
  redis.call('DEL', KEYS[1])
else
  redis.call('SET', KEYS[1], table.concat(out))
end
return changed
