--[[
  claimLease: takes a lease nobody holds, or renews the caller's own, in one step, so two claimants can never
  both believe they hold it.

  KEYS[1]  the lease key (a string holding the holder's token)
  ARGV[1]  the caller's token
  ARGV[2]  how long the lease lasts from now, in milliseconds

  Returns 1 when the caller holds the lease afterwards, 0 when another holder has it.
]]
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if holder then
  return 0
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
