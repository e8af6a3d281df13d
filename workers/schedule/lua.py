"""The review schedule's Lua scripts for Redis (see :mod:`workers.schedule.redis_store`).

Every script gets the key prefix as ``ARGV[1]`` and reads the time from Redis itself
(``TIME``), so every host's leases and delays run on one clock. Keys, under the prefix:

- ``job:<id>`` hash: ``blob`` (the job, never rewritten), ``inst``, ``lane``, ``home``,
  ``faults``, ``resume``, ``recoveries``, and while it runs ``owner`` and ``host``;
- ``lane:<inst>:<lane>`` sorted set of waiting job ids by position (front: negative);
- ``turns`` sorted set of installations with waiting jobs, by when they last had a
  turn (``clock``); ``served`` hash remembers that for installations with none;
- ``running`` sorted set of running job ids by lease expiry (ms); ``rcount`` and
  ``hrun`` hashes count them per installation and per worker host;
- ``delayed`` sorted set of job ids by the time they may run again (ms);
- ``workers`` sorted set of live workers by expiry, ``wslots`` their ``host|slots``;
- ``njobs`` hash: jobs in the schedule per installation (waiting, running or delayed);
  ``active`` sorted set of installations by when their last review ended (ms): with
  ``njobs``, whether another installation is active (when the default limit applies);
- ``orphans``: turns dropped because every waiting job was over its limit;
  ``last_claim``: when a worker last asked for a job.
"""

from __future__ import annotations

from typing import Final

#: Shared by every script (and :mod:`workers.schedule.lua_sweep`).
HELPERS: Final = """
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
"""

# ARGV: prefix, id, blob, inst, lane, home, faults, resume, recoveries
ENQUEUE: Final = (
    HELPERS
    + """
redis.call('HSET', P..'job:'..ARGV[2], 'blob', ARGV[3], 'inst', ARGV[4], 'lane', ARGV[5],
  'home', ARGV[6], 'faults', ARGV[7], 'resume', ARGV[8], 'recoveries', ARGV[9])
redis.call('HINCRBY', P..'njobs', ARGV[4], 1)
ready(ARGV[2], false)
return 1
"""
)

# ARGV: prefix, id
WITHDRAW: Final = (
    HELPERS
    + """
local key = P..'job:'..ARGV[2]
local inst = redis.call('HGET', key, 'inst')
if not inst then return 0 end
if redis.call('ZREM', P..'lane:'..inst..':'..redis.call('HGET', key, 'lane'), ARGV[2]) == 0 then
  return 0
end
forget(ARGV[2])
if pending_of(inst) == 0 then redis.call('ZREM', P..'turns', inst) end
return 1
"""
)

# ARGV: prefix, owner, host, lease ms, limit, locality window, active window ms
CLAIM: Final = (
    HELPERS
    + """
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
"""
)

# ARGV: prefix, id, owner, lease ms
RENEW: Final = (
    HELPERS
    + """
if not owned(ARGV[2], ARGV[3]) then return 0 end
redis.call('ZADD', P..'running', now_ms() + tonumber(ARGV[4]), ARGV[2])
return 1
"""
)

# ARGV: prefix, id, owner. Returns 0 (not owned), 1, or 2 (give a dropped turn out).
FINISH: Final = (
    HELPERS
    + """
if not owned(ARGV[2], ARGV[3]) then return 0 end
leave_running(ARGV[2])
redis.call('ZADD', P..'active', now_ms(), forget(ARGV[2]))
return 1 + orphan_turn()
"""
)

# ARGV: prefix, id, owner, delay ms, faults. Returns as FINISH.
DEFER: Final = (
    HELPERS
    + """
if not owned(ARGV[2], ARGV[3]) then return 0 end
leave_running(ARGV[2])
redis.call('HSET', P..'job:'..ARGV[2], 'faults', ARGV[5])
redis.call('ZADD', P..'delayed', now_ms() + tonumber(ARGV[4]), ARGV[2])
return 1 + orphan_turn()
"""
)

# ARGV: prefix, id, owner
RELEASE: Final = (
    HELPERS
    + """
if not owned(ARGV[2], ARGV[3]) then return 0 end
leave_running(ARGV[2])
redis.call('HSET', P..'job:'..ARGV[2], 'resume', '1')
ready(ARGV[2], true)
return 1
"""
)
