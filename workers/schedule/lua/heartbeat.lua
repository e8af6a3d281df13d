-- ARGV: prefix, worker, host, slots, ttl ms
redis.call('ZADD', P..'workers', now_ms() + tonumber(ARGV[5]), ARGV[2])
redis.call('HSET', P..'wslots', ARGV[2], ARGV[3]..'|'..ARGV[4])
return 1
