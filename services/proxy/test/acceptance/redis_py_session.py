"""A Python service's use of Redis through redis-py: strings, hashes, lists, sets, sorted sets, pipelines,
transactions and pub/sub. Prints every result as one JSON document, so that a run against Redis directly and
a run through the proxy can be compared exactly. Usage: redis_py_session.py PORT PREFIX"""
import json
import sys
import time

import redis

port, prefix = int(sys.argv[1]), sys.argv[2]
r = redis.Redis(port=port, decode_responses=True)
k = lambda name: f"{prefix}:{name}"
out = {}

out["ping"] = r.ping()
out["set"] = r.set(k("s"), "hello")
out["get"] = r.get(k("s"))
out["set_nx"] = r.set(k("s"), "other", nx=True)
out["incr"] = [r.incr(k("n")), r.incrby(k("n"), 10), r.decr(k("n"))]
out["mset_mget"] = [r.mset({k("a"): "1", k("b"): "2"}), r.mget([k("a"), k("b"), k("missing")])]
out["binary"] = redis.Redis(port=port).get(k("s")).hex()
out["hash"] = [r.hset(k("h"), mapping={"f1": "v1", "f2": "v2"}), r.hgetall(k("h")), r.hget(k("h"), "f2"), r.hincrby(k("h"), "n", 2)]
out["list"] = [r.rpush(k("l"), "a", "b", "c"), r.lrange(k("l"), 0, -1), r.lpop(k("l")), r.llen(k("l"))]
out["set_type"] = [r.sadd(k("set"), "x", "y", "z"), sorted(r.smembers(k("set"))), r.sismember(k("set"), "y"), r.scard(k("set"))]
out["zset"] = [r.zadd(k("z"), {"one": 1, "two": 2, "three": 3}), r.zrange(k("z"), 0, -1, withscores=True), r.zscore(k("z"), "two"), r.zrevrank(k("z"), "one")]
out["expire"] = [r.expire(k("s"), 100), r.ttl(k("s")) > 90, r.persist(k("s"))]
try:
    r.lpush(k("s"), "x")
except redis.ResponseError as error:
    out["wrongtype"] = str(error)

pipe = r.pipeline(transaction=False)
for i in range(100):
    pipe.set(k(f"p{i}"), i)
    pipe.get(k(f"p{i}"))
out["pipeline"] = pipe.execute()

tx = r.pipeline(transaction=True)
tx.incr(k("tx")).incr(k("tx")).get(k("tx"))
out["transaction"] = tx.execute()

def watched_increment(pipe):
    value = int(pipe.get(k("w")) or 0)
    pipe.multi()
    pipe.set(k("w"), value + 1)

out["watch"] = [r.transaction(watched_increment, k("w")), r.get(k("w"))]

p = r.pubsub()
p.subscribe(k("channel"))
subscribed = p.get_message(timeout=2)
out["subscribed"] = [subscribed["type"], subscribed["channel"] == k("channel")]
out["publish"] = r.publish(k("channel"), "message one")
message = None
deadline = time.time() + 5
while message is None and time.time() < deadline:
    message = p.get_message(timeout=1)
out["message"] = [message["type"], message["data"]] if message else None
p.close()

out["delete"] = r.delete(k("a"), k("b"), k("missing"))
print(json.dumps(out, sort_keys=True))
