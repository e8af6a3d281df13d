-- ARGV: prefix, id
local key = P..'job:'..ARGV[2]
local inst = redis.call('HGET', key, 'inst')
if not inst then return 0 end
if redis.call('ZREM', P..'lane:'..inst..':'..redis.call('HGET', key, 'lane'), ARGV[2]) == 0 then
  return 0
end
forget(ARGV[2])
if pending_of(inst) == 0 then redis.call('ZREM', P..'turns', inst) end
return 1
