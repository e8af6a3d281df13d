-- ARGV: prefix, patience ms, limit, active window ms
local now = now_ms()
local last = redis.call('GET', P..'last_claim')
if not last then
  redis.call('SET', P..'last_claim', now)  -- the first sweep: patience starts now
  return 0
end
if now - tonumber(last) < tonumber(ARGV[2]) then return 0 end
local cap = caps(now, tonumber(ARGV[3]), tonumber(ARGV[4]))
local free = live_slots(now) - redis.call('ZCARD', P..'running')
local waiting = 0
for _, inst in ipairs(redis.call('ZRANGE', P..'turns', 0, -1)) do
  local room = cap(inst) - tonumber(redis.call('HGET', P..'rcount', inst) or '0')
  if room > 0 then waiting = waiting + math.min(room, pending_of(inst)) end
end
if waiting <= 0 or free <= 0 then return 0 end
redis.call('SET', P..'last_claim', now)
return math.min(waiting, free)
