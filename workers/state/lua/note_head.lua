-- KEYS[1] = head record hash; ARGV = head ("" for none), record seconds.
local seq = redis.call('HINCRBY', KEYS[1], 'seq', 1)
if ARGV[1] ~= '' then
  redis.call('HSET', KEYS[1], 'head', ARGV[1], 'head_seq', seq)
end
redis.call('EXPIRE', KEYS[1], ARGV[2])
return seq
