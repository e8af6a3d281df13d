-- ARGV: prefix. Returns the entries of jobs due again.
local back = {}
for _, id in ipairs(redis.call('ZRANGEBYSCORE', P..'delayed', '-inf', now_ms())) do
  redis.call('ZREM', P..'delayed', id)
  if redis.call('EXISTS', P..'job:'..id) == 1 then
    ready(id, true)
    table.insert(back, entry(id))
  end
end
return back
