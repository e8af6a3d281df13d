-- KEYS[1] = the log (sorted set of "<id>:<tokens>" by ms); ARGV: requests, tokens limit,
-- window+slack ms, this request's tokens, id. Returns 0 (granted), -1 (never) or ms to wait.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local rpm, tpm = tonumber(ARGV[1]), tonumber(ARGV[2])
local span, need = tonumber(ARGV[3]), tonumber(ARGV[4])
if tpm > 0 and need > tpm then return -1 end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - span)
local log = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
local n = #log / 2
local wait = 0
if rpm > 0 and n >= rpm then wait = tonumber(log[(n - rpm) * 2 + 2]) + span - now end
if tpm > 0 then
  local used = 0
  for i = 1, #log, 2 do used = used + tonumber(string.match(log[i], ':(%d+)$')) end
  if used + need > tpm then
    for i = 1, #log, 2 do
      used = used - tonumber(string.match(log[i], ':(%d+)$'))
      if used + need <= tpm then
        wait = math.max(wait, tonumber(log[i + 1]) + span - now)
        break
      end
    end
  end
end
if wait > 0 then return wait end
redis.call('ZADD', KEYS[1], now, ARGV[5] .. ':' .. need)
redis.call('PEXPIRE', KEYS[1], span * 2)
return 0
