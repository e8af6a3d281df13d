-- ARGV: prefix. Returns {host, slots, running, ...} of live hosts.
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
