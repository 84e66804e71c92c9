#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Makes samples/webapp.monitor: a MONITOR capture of a small web application's commands, every key type the
# simulator replays, as a real server executed them:
#   - cache:*      SET with and without EX, GET, DEL of cached fragments
#   - rate:*       INCR and EXPIRE of rate-limit counters
#   - session:*    HSET of 4-9 fields, HINCRBY of a view count, HGET, HDEL of a field, EXPIRE
#   - tags:*       SADD of words or integer ids, SISMEMBER, SREM
#   - board:*      ZADD of players, ZINCRBY, ZSCORE, ZRANGE (skipped: a whole read), ZREM
#   - queue:*      RPUSH and LPOP
# Usage: datasets/samples/webapp-monitor.sh SERVER_BINARY OUT.monitor
# The capture holds the server's own clock and client ports, so running this again makes another file of
# the same commands; the bundled one was captured from Debian 12's redis-server 7.0.15 (golden
# import-sim-webapp-monitor replays it).
set -euo pipefail
server=$1
out=$2
dir=$(mktemp -d)
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$server" --port "$port" --bind 127.0.0.1 --dir "$dir" --save "" --appendonly no --daemonize no >/dev/null 2>&1 &
pid=$!
trap 'kill "$monitor" "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 100); do redis-cli -p "$port" PING >/dev/null 2>&1 && break; sleep 0.1; done
redis-cli -p "$port" MONITOR >"$dir/capture" &
monitor=$!
sleep 0.5
# One command a line, its arguments separated by tabs, then as RESP.
LC_ALL=C awk 'BEGIN {
  srand(2027);
  words = "red green blue fast slow new old beta sale home work sport music food travel news";
  nw = split(words, w, " ");
  for (step = 0; step < 6000; step++) {
    r = rand();
    if (r < 0.25) {
      k = int(rand() * 800);
      if (rand() < 0.6) printf "GET\tcache:%d\n", k;
      else if (rand() < 0.9) {
        len = int(20 * exp(rand() * rand() * 4)); v = "";
        while (length(v) < len) v = v w[1 + int(rand() * nw)] "-";
        printf "SET\tcache:%d\t%s%s\n", k, substr(v, 1, len), (rand() < 0.4 ? "\tEX\t86400" : "");
      } else printf "DEL\tcache:%d\n", k;
    } else if (r < 0.40) {
      k = sprintf("rate:10.0.%d.%d", int(rand() * 4), int(rand() * 100));
      printf "INCR\t%s\n", k; printf "EXPIRE\t%s\t3600\n", k;
    } else if (r < 0.65) {
      k = sprintf("session:%08x", (int(rand() * 700) * 2654435761) % 4294967296);
      q = rand();
      if (q < 0.3) {
        line = sprintf("HSET\t%s\tuser_id\t%d\tcsrf\t%08x%08x\tcreated_at\t%d", k, int(rand() * 1000),
          int(rand() * 4294967295), int(rand() * 4294967295), 1764800000 + step);
        n = 1 + int(rand() * 6);
        for (j = 0; j < n; j++) line = line sprintf("\tk%d\t%s", j, w[1 + int(rand() * nw)]);
        print line; printf "EXPIRE\t%s\t86400\n", k;
      } else if (q < 0.6) printf "HINCRBY\t%s\tviews\t1\n", k;
      else if (q < 0.9) printf "HGET\t%s\tuser_id\n", k;
      else printf "HDEL\t%s\tk%d\n", k, int(rand() * 6);
    } else if (r < 0.80) {
      i = int(rand() * 300); k = "tags:" i; q = rand();
      member = (i % 2 ? w[1 + int(rand() * nw)] "-" int(rand() * 40) : int(rand() * 100000));
      if (q < 0.6) {
        line = "SADD\t" k; n = 1 + int(rand() * 8);
        for (j = 0; j < n; j++) line = line "\t" (i % 2 ? w[1 + int(rand() * nw)] "-" int(rand() * 40) : int(rand() * 100000));
        print line;
      } else if (q < 0.85) printf "SISMEMBER\t%s\t%s\n", k, member;
      else printf "SREM\t%s\t%s\n", k, member;
    } else if (r < 0.96) {
      k = "board:" int(rand() * 30); q = rand(); p = "player" int(rand() * 3000);
      if (q < 0.5) printf "ZADD\t%s\t%d\t%s\n", k, int(rand() * 100000), p;
      else if (q < 0.75) printf "ZINCRBY\t%s\t%s\t%s\n", k, (rand() < 0.5 ? "10" : "2.5"), p;
      else if (q < 0.85) printf "ZSCORE\t%s\t%s\n", k, p;
      else if (q < 0.95) printf "ZRANGE\t%s\t0\t9\tREV\tWITHSCORES\n", k;
      else printf "ZREM\t%s\t%s\n", k, p;
    } else {
      k = "queue:" w[1 + int(rand() * nw)];
      if (rand() < 0.6) printf "RPUSH\t%s\t{\"job\":%d}\n", k, step; else printf "LPOP\t%s\n", k;
    }
  }
}' | LC_ALL=C awk -F'\t' '{
  printf "*%d\r\n", NF;
  for (f = 1; f <= NF; f++) printf "$%d\r\n%s\r\n", length($f), $f;
}' | redis-cli -p "$port" --pipe >/dev/null
redis-cli -p "$port" ECHO capture-end >/dev/null
for _ in $(seq 100); do grep -q '"capture-end"' "$dir/capture" && break; sleep 0.1; done
grep -v '"capture-end"' "$dir/capture" >"$out"
