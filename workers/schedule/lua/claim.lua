-- ARGV: prefix, owner, host, lease ms, limit, locality window, active window ms
local now = now_ms()
redis.call('SET', P..'last_claim', now)
local cap = caps(now, tonumber(ARGV[5]), tonumber(ARGV[7]))
for _, inst in ipairs(redis.call('ZRANGE', P..'turns', 0, -1)) do
  if tonumber(redis.call('HGET', P..'rcount', inst) or '0') < cap(inst) then
    for _, lane in ipairs({'command', 'auto'}) do
      local lk = P..'lane:'..inst..':'..lane
      local ids = redis.call('ZRANGE', lk, 0, tonumber(ARGV[6]) - 1)
      if #ids > 0 then
        local pick = ids[1]
        for _, id in ipairs(ids) do
          if redis.call('HGET', P..'job:'..id, 'home') == ARGV[3] then
            pick = id
            break
          end
        end
        redis.call('ZREM', lk, pick)
        local clock = redis.call('INCR', P..'clock')
        redis.call('HSET', P..'served', inst, clock)
        if pending_of(inst) > 0 then
          redis.call('ZADD', P..'turns', clock, inst)
        else
          redis.call('ZREM', P..'turns', inst)
        end
        redis.call('HSET', P..'job:'..pick, 'owner', ARGV[2], 'host', ARGV[3])
        redis.call('ZADD', P..'running', now + tonumber(ARGV[4]), pick)
        redis.call('HINCRBY', P..'rcount', inst, 1)
        redis.call('HINCRBY', P..'hrun', ARGV[3], 1)
        return entry(pick)
      end
    end
  end
end
if redis.call('ZCARD', P..'turns') > 0 then redis.call('INCR', P..'orphans') end
return false
