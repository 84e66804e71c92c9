#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Makes the small sample files of every importable format (golden tests assert their exact statistics):
#   - one synthetic trace stored three ways: layoutlab binary, Twitter CSV and CacheLib CSV (a test checks
#     that all three give identical sweeps), plus the Twitter CSV zstd-compressed;
#   - an oracleGeneral file exported from a trace with 16-byte keys;
#   - hand-written MONITOR, memcached watch/metadump and RDB memory-CSV samples with the formats' corner
#     cases (escapes, KEEPTTL, MSET, URI-encoded keys, unpadded microseconds, quoted CSV).
set -euo pipefail
layoutlab=${1:?usage: regenerate.sh PATH/TO/layoutlab [OUTPUT_DIR]}
out=${2:-$(dirname "$0")}
mkdir -p "$out"

"$layoutlab" gen -o "$out/mixed.lltrace" --keys 400 --ops 1600 --key-size uniform:8:40 \
  --value-size lognormal:4:1:1:5000 --ttl-fraction 0.25 --get-fraction 0.7 --delete-fraction 0.05 \
  --popularity zipf:0.9 --seed 11 2>/dev/null
"$layoutlab" export "$out/mixed.lltrace" --to twitter -o "$out/mixed.twitter.csv"
"$layoutlab" export "$out/mixed.lltrace" --to cachelib -o "$out/mixed.cachelib.csv"
zstd -q -f -19 "$out/mixed.twitter.csv" -o "$out/mixed.twitter.csv.zst"
"$layoutlab" gen -o "$out/fixed-key.lltrace" --keys 200 --ops 600 --key-size 16 --value-size uniform:1:3000 \
  --get-fraction 0.8 --seed 12 2>/dev/null
"$layoutlab" export "$out/fixed-key.lltrace" --to oracle -o "$out/fixed-key.oracleGeneral.bin"
rm "$out/fixed-key.lltrace"

cat > "$out/monitor.txt" <<'MONITOR'
OK
1700000000.000100 [0 127.0.0.1:50000] "SET" "user:1" "alice"
1700000000.000200 [0 127.0.0.1:50000] "set" "user:\xe2\x82\xac1" "a\"b\\c\r\n"
1700000000.000300 [0 127.0.0.1:50000] "SET" "session:9" "token-token-token" "EX" "3600"
1700000000.000400 [0 127.0.0.1:50000] "SET" "session:9" "token-2" "KEEPTTL"
1700000000.000500 [0 127.0.0.1:50000] "SETEX" "cache:a" "60" "0123456789012345678901234567890123456789012345678"
1700000000.000600 [0 127.0.0.1:50000] "MSET" "k1" "1" "k2" "22" "k3" "12345678901"
1700000000.000700 [0 127.0.0.1:50000] "GET" "user:1"
1700000000.000800 [0 127.0.0.1:50000] "MGET" "k1" "k2" "missing"
1700000000.000900 [0 127.0.0.1:50000] "INCR" "counter"
1700000000.001000 [0 127.0.0.1:50000] "APPEND" "user:1" "-smith"
1700000000.001100 [0 lua] "EXPIRE" "user:1" "100"
1700000000.001200 [0 127.0.0.1:50000] "PERSIST" "user:1"
1700000000.001300 [0 unix:/tmp/redis.sock] "DEL" "k1" "k2"
1700000000.001400 [0 127.0.0.1:50000] "HSET" "myhash" "field1" "value1"
1700000000.001500 [0 127.0.0.1:50000] "GETDEL" "k3"
1700000000.001600 [0 127.0.0.1:50000] "SET" "big" "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" "PX" "1500"
MONITOR

cat > "$out/mc-watch.log" <<'WATCH'
ts=1700000000.51234 gid=1 type=item_get key=foo status=not_found clsid=0 cfd=23 size=0
ts=1700000000.51240 gid=2 type=item_store key=foo status=stored cmd=set ttl=3600 clsid=1 cfd=23 size=5
ts=1700000001.2 gid=4 type=item_get key=foo status=found clsid=1 cfd=24 size=5
ts=1700000001.1 gid=3 type=item_store key=n%2Cbar status=stored cmd=add ttl=0 clsid=2 cfd=24 size=40
ts=1700000001.3 gid=5 type=item_store key=baz status=not_stored cmd=add ttl=0 clsid=1 cfd=24 size=3
ts=1700000001.4 gid=6 type=item_get key=n%2Cbar status=found clsid=2 cfd=25 size=40
ts=1700000002.900001 gid=7 type=eviction key=foo fetch=no ttl=-1 la=0 clsid=1 size=5
ts=1700000003.1 gid=8 type=deleted key=n%2Cbar cmd=delete clsid=2 size=40
ts=1700000003.2 gid=9 type=conn_close transport=tcp reason=normal cfd=23
WATCH

cat > "$out/mc-metadump.txt" <<'METADUMP'
key=key exp=-1 la=1745299782 cas=2 fetch=no cls=1 size=63 flags=0
key=session%3Aabc exp=1700003600 la=1700000000 cas=7 fetch=yes cls=5 size=240 flags=0
key=n%2Cfoo1539 exp=-1 la=1699998000 cas=12346 fetch=no cls=3 size=152 flags=0
key=flagged exp=-1 la=1699998000 cas=12347 fetch=no cls=1 size=95 flags=1
END
METADUMP

cat > "$out/rdb-tools.memory.csv" <<'RRT'
database,type,key,size_in_bytes,encoding,num_elements,len_largest_element,expiry
0,string,compressible,216,string,137,137,
0,hash,hash,144,ziplist,11,8,
0,string,expires_ms_precision,128,string,27,27,2022-12-25T10:11:12.573000
0,string,key,with,commas,72,string,7,7,
0,list,list,229,quicklist,24,8,
1,string,int_value,56,string,8,8,
RRT

cat > "$out/hdt-rdb.memory.csv" <<'HDT'
database,key,type,size,size_readable,element_count,encoding,expiration
0,"quoted,key",string,40,40B,1,raw,
0,plain,string,25,25B,1,raw,2030-01-01T00:00:00Z
0,myset,set,60,60B,3,intset,
HDT
