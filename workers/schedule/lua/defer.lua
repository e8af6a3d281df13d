-- ARGV: prefix, id, owner, delay ms, faults. Returns as FINISH.
if not owned(ARGV[2], ARGV[3]) then return 0 end
leave_running(ARGV[2])
redis.call('HSET', P..'job:'..ARGV[2], 'faults', ARGV[5])
redis.call('ZADD', P..'delayed', now_ms() + tonumber(ARGV[4]), ARGV[2])
return 1 + orphan_turn()
