--[[
  renewLease: extends a lease, only while the caller still holds it (compare-and-pexpire), so a holder whose
  lease ran out and passed to another can never extend its successor's.

  KEYS[1]  the lease key (a string holding the holder's token)
  ARGV[1]  the caller's token
  ARGV[2]  the new time to live, in milliseconds

  Returns 1 when extended, 0 when the lease has expired or belongs to another holder.
]]
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
