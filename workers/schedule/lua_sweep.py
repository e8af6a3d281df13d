"""The review schedule's Lua scripts for the sweep (recovery, delays, lost turns) and the
worker registry; the keys and helpers are :mod:`workers.schedule.lua`'s."""

from __future__ import annotations

from typing import Final

from workers.schedule.lua import HELPERS as _HELPERS

# ARGV: prefix, worker to skip. Returns {owner, entry...} per job put back.
RECOVER: Final = (
    _HELPERS
    + """
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
"""
)

# ARGV: prefix. Returns the entries of jobs due again.
PROMOTE: Final = (
    _HELPERS
    + """
local back = {}
for _, id in ipairs(redis.call('ZRANGEBYSCORE', P..'delayed', '-inf', now_ms())) do
  redis.call('ZREM', P..'delayed', id)
  if redis.call('EXISTS', P..'job:'..id) == 1 then
    ready(id, true)
    table.insert(back, entry(id))
  end
end
return back
"""
)

# ARGV: prefix, patience ms, limit, active window ms
STALLED: Final = (
    _HELPERS
    + """
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
"""
)

# ARGV: prefix, worker, host, slots, ttl ms
HEARTBEAT: Final = (
    _HELPERS
    + """
redis.call('ZADD', P..'workers', now_ms() + tonumber(ARGV[5]), ARGV[2])
redis.call('HSET', P..'wslots', ARGV[2], ARGV[3]..'|'..ARGV[4])
return 1
"""
)

# ARGV: prefix. Returns {host, slots, running, ...} of live hosts.
HOSTS: Final = (
    _HELPERS
    + """
live_slots(now_ms())
local slots, order = {}, {}
for _, w in ipairs(redis.call('ZRANGE', P..'workers', 0, -1)) do
  local v = redis.call('HGET', P..'wslots', w)
  if v then
    local host, n = string.match(v, '^(.*)|(%d+)$')
    if not slots[host] then table.insert(order, host) slots[host] = 0 end
    slots[host] = slots[host] + tonumber(n)
  end
end
local out = {}
for _, host in ipairs(order) do
  table.insert(out, host)
  table.insert(out, slots[host])
  table.insert(out, tonumber(redis.call('HGET', P..'hrun', host) or '0'))
end
return out
"""
)

# ARGV: prefix
PENDING: Final = (
    _HELPERS
    + """
local n = 0
for _, inst in ipairs(redis.call('ZRANGE', P..'turns', 0, -1)) do n = n + pending_of(inst) end
return n
"""
)
