"""Reads one key through redis-py at a steady rate, as a plain Python service would (no Heatsink code).
Usage: hot_key_reader.py PORT KEY READS_PER_SECOND SECONDS. Prints the number of reads and how many
returned something other than EXPECTED (the key's value), as JSON."""
import json
import sys
import time

import redis

port, key, rate, seconds, expected = int(sys.argv[1]), sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
client = redis.Redis(port=port, decode_responses=True)
reads = wrong = 0
start = time.monotonic()
# Paced in 10 ms slices: at each slice, catch up to rate x elapsed.
while True:
    elapsed = time.monotonic() - start
    if elapsed >= seconds:
        break
    due = int(rate * elapsed)
    while reads < due:
        if client.get(key) != expected:
            wrong += 1
        reads += 1
    time.sleep(0.002)
print(json.dumps({"reads": reads, "wrong": wrong, "seconds": time.monotonic() - start}))
