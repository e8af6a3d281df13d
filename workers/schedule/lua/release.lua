-- ARGV: prefix, id, owner
if not owned(ARGV[2], ARGV[3]) then return 0 end
leave_running(ARGV[2])
redis.call('HSET', P..'job:'..ARGV[2], 'resume', '1')
ready(ARGV[2], true)
return 1
