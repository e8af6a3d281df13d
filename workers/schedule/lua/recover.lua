-- ARGV: prefix, worker to skip. Returns {owner, entry...} per job put back.
local back = {}
for _, id in ipairs(redis.call('ZRANGEBYSCORE', P..'running', '-inf', now_ms())) do
  local owner = redis.call('HGET', P..'job:'..id, 'owner')
  if not owner then
    redis.call('ZREM', P..'running', id)
  elseif string.match(owner, '^(.*)/[^/]*$') ~= ARGV[2] then
    leave_running(id)
    redis.call('HSET', P..'job:'..id, 'resume', '1')
    redis.call('HINCRBY', P..'job:'..id, 'recoveries', 1)
    ready(id, true)
    local found = entry(id)
    table.insert(found, 1, owner)
    table.insert(back, found)
  end
end
return back
