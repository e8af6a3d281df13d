-- ARGV: prefix, id, owner. Returns 0 (not owned), 1, or 2 (give a dropped turn out).
if not owned(ARGV[2], ARGV[3]) then return 0 end
leave_running(ARGV[2])
redis.call('ZADD', P..'active', now_ms(), forget(ARGV[2]))
return 1 + orphan_turn()
