-- Shared by every script: the key prefix, the clock, and the steps several scripts take.
-- Each script file below is sent with this one in front of it (workers/schedule/lua.py).
local P = ARGV[1]
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function live_slots(now)
  for _, w in ipairs(redis.call('ZRANGEBYSCORE', P..'workers', '-inf', now)) do
    redis.call('ZREM', P..'workers', w)
    redis.call('HDEL', P..'wslots', w)
  end
  local total = 0
  for _, w in ipairs(redis.call('ZRANGE', P..'workers', 0, -1)) do
    local v = redis.call('HGET', P..'wslots', w)
    if v then total = total + tonumber(string.match(v, '|(%d+)$')) end
  end
  return total
end
-- How many reviews each installation may run at once now (workers.schedule.types:
-- limit_applies): an explicit limit always; the default, three quarters of the live
-- threads, only while another installation has jobs or had a review end in the window.
local function caps(now, limit, window)
  if limit > 0 then return function(inst) return limit end end
  local slots = live_slots(now)
  if slots <= 0 then return function(inst) return 1073741824 end end
  local c = math.max(1, slots - math.ceil(slots / 4))
  redis.call('ZREMRANGEBYSCORE', P..'active', '-inf', now - window)
  return function(inst)
    local jobs = redis.call('HLEN', P..'njobs') - redis.call('HEXISTS', P..'njobs', inst)
    local ended = redis.call('ZCARD', P..'active')
    if redis.call('ZSCORE', P..'active', inst) then ended = ended - 1 end
    if jobs > 0 or ended > 0 then return c end
    return 1073741824
  end
end
-- The job leaves the schedule.
local function forget(id)
  local key = P..'job:'..id
  local inst = redis.call('HGET', key, 'inst')
  if inst and redis.call('HINCRBY', P..'njobs', inst, -1) <= 0 then
    redis.call('HDEL', P..'njobs', inst)
  end
  redis.call('DEL', key)
  return inst
end
local function pending_of(inst)
  return redis.call('ZCARD', P..'lane:'..inst..':command')
    + redis.call('ZCARD', P..'lane:'..inst..':auto')
end
local function ready(id, front)
  local key = P..'job:'..id
  local inst = redis.call('HGET', key, 'inst')
  local pos = redis.call('INCR', P..'pos')
  if front then pos = -pos end
  redis.call('ZADD', P..'lane:'..inst..':'..redis.call('HGET', key, 'lane'), pos, id)
  if not redis.call('ZSCORE', P..'turns', inst) then
    redis.call('ZADD', P..'turns', redis.call('HGET', P..'served', inst) or 0, inst)
  end
end
local function leave_running(id)
  local key = P..'job:'..id
  local inst = redis.call('HGET', key, 'inst')
  local host = redis.call('HGET', key, 'host')
  redis.call('ZREM', P..'running', id)
  if inst and redis.call('HINCRBY', P..'rcount', inst, -1) <= 0 then
    redis.call('HDEL', P..'rcount', inst)
  end
  if host and redis.call('HINCRBY', P..'hrun', host, -1) <= 0 then
    redis.call('HDEL', P..'hrun', host)
  end
  redis.call('HDEL', key, 'owner', 'host')
end
local function owned(id, owner)
  return redis.call('HGET', P..'job:'..id, 'owner') == owner
    and redis.call('ZSCORE', P..'running', id)
end
local function orphan_turn()
  local n = tonumber(redis.call('GET', P..'orphans') or '0')
  if n <= 0 then return 0 end
  if redis.call('ZCARD', P..'turns') == 0 then
    redis.call('DEL', P..'orphans')
    return 0
  end
  redis.call('DECR', P..'orphans')
  return 1
end
local function entry(id)
  return {id, unpack(redis.call('HMGET', P..'job:'..id,
    'blob', 'inst', 'lane', 'home', 'faults', 'resume', 'recoveries'))}
end
