-- ARGV: prefix
local n = 0
for _, inst in ipairs(redis.call('ZRANGE', P..'turns', 0, -1)) do n = n + pending_of(inst) end
return n
