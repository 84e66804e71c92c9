#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Makes samples/keyspace.rdb: the keyspace of a small web application, as a Redis or Valkey server saves it.
#   - cache:*      2,000 cached fragments, 20 B to 2 KB (most a few hundred), a third with TTLs
#   - user:*       1,000 profiles as JSON strings, 150-400 B
#   - rate:*       2,000 rate-limit counters (integers), expiring
#   - session:*    1,500 sessions as hashes of 4-9 fields, expiring
#   - queue:*      100 job queues as lists of 1-300 entries
#   - board:*      50 leaderboards as sorted sets of 10-400 members
#   - tags:*       500 tag sets, of words or of integer ids
# Usage: datasets/samples/keyspace-rdb.sh SERVER_BINARY OUT.rdb
# A server writes its own AUX fields (version, ctime, used-mem) into the file, so running this again makes
# another file with the same keys; the bundled one was made with Valkey 9.1.0 built from its release
# archive (RDB 80). The file is read by `import`'s rdb format and its golden import-stats-rdb.
set -euo pipefail
server=$1
out=$2
dir=$(mktemp -d)
"$server" --port 0 --unixsocket "$dir/s.sock" --dir "$dir" --save "" --appendonly no --daemonize no \
  >/dev/null 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 100); do [[ -S $dir/s.sock ]] && break; sleep 0.1; done
# One command a line, its arguments separated by tabs (values hold spaces and quotes), then as RESP.
LC_ALL=C awk 'BEGIN {
  srand(2026);
  words = "red green blue fast slow new old beta sale home work sport music food travel news";
  nw = split(words, w, " ");
  for (i = 0; i < 2000; i++) {
    len = int(20 * exp(rand() * rand() * 4.6)); v = "";
    while (length(v) < len) v = v "<li id=\"" int(rand() * 100000) "\">" w[1 + int(rand() * nw)] "</li>";
    printf "SET\tcache:%d\t%s%s\n", i * 37, substr(v, 1, len), (i % 3 == 0 ? "\tEX\t86400" : "");
  }
  bio = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud exercitation ullamco laboris nisi ut aliquip ex ea commodo consequat duis aute irure dolor in reprehenderit";
  for (i = 0; i < 1000; i++)
    printf "SET\tuser:%d\t{\"id\":%d,\"name\":\"user%d\",\"email\":\"u%d@example.com\",\"plan\":\"%s\",\"bio\":\"%s\"}\n",
      i, i, i, i * 7, w[1 + i % nw], substr(bio, 1, 60 + int(rand() * 240));
  for (i = 0; i < 2000; i++)
    printf "SET\trate:10.0.%d.%d:%d\t%d\tEX\t3600\n", int(i / 250), i % 250, 29000000 + i % 60, 1 + int(rand() * rand() * 500);
  for (i = 0; i < 1500; i++) {
    key = sprintf("session:%08x", (i * 2654435761) % 4294967296);
    line = sprintf("HSET\t%s\tuser_id\t%d\tcsrf\t%08x%08x\tcreated_at\t%d", key, int(rand() * 1000),
      int(rand() * 4294967295), int(rand() * 4294967295), 1764800000 + i);
    n = 1 + int(rand() * 6);
    for (j = 0; j < n; j++) line = line sprintf("\tk%d\t%s", j, w[1 + int(rand() * nw)]);
    print line;
    printf "EXPIRE\t%s\t86400\n", key;
  }
  for (i = 0; i < 100; i++) {
    line = "RPUSH\tqueue:" w[1 + i % nw] ":" i; n = 1 + int(rand() * rand() * 300);
    for (j = 0; j < n; j++) line = line sprintf("\t{\"job\":%d,\"try\":%d}", i * 1000 + j, int(rand() * 3));
    print line;
  }
  for (i = 0; i < 50; i++) {
    line = "ZADD\tboard:" i; n = 10 + int(rand() * rand() * 390);
    for (j = 0; j < n; j++) line = line sprintf("\t%d\tplayer%d", int(rand() * 100000), int(rand() * 5000));
    print line;
  }
  for (i = 0; i < 500; i++) {
    line = "SADD\ttags:" i; n = 1 + int(rand() * 20);
    for (j = 0; j < n; j++) line = line "\t" (i % 2 ? w[1 + int(rand() * nw)] : int(rand() * 10000));
    print line;
  }
}' | LC_ALL=C awk -F'\t' '{
  printf "*%d\r\n", NF;
  for (f = 1; f <= NF; f++) printf "$%d\r\n%s\r\n", length($f), $f;
}' | redis-cli -s "$dir/s.sock" --pipe >/dev/null
redis-cli -s "$dir/s.sock" SAVE >/dev/null
cp "$dir/dump.rdb" "$out"
