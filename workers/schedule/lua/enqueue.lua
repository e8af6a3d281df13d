-- ARGV: prefix, id, blob, inst, lane, home, faults, resume, recoveries
redis.call('HSET', P..'job:'..ARGV[2], 'blob', ARGV[3], 'inst', ARGV[4], 'lane', ARGV[5],
  'home', ARGV[6], 'faults', ARGV[7], 'resume', ARGV[8], 'recoveries', ARGV[9])
redis.call('HINCRBY', P..'njobs', ARGV[4], 1)
ready(ARGV[2], false)
return 1
