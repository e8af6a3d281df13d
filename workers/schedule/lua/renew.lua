-- ARGV: prefix, id, owner, lease ms
if not owned(ARGV[2], ARGV[3]) then return 0 end
redis.call('ZADD', P..'running', now_ms() + tonumber(ARGV[4]), ARGV[2])
return 1
