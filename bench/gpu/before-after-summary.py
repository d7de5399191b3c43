"""Medians of bench/gpu/before-after.sh's rounds, per command and build,
and each build's ratio to the first one.

    python3 bench/gpu/before-after-summary.py FILE.jsonl
"""
import json,statistics as st,collections,sys
d=collections.defaultdict(list); rss=collections.defaultdict(list); builds=[]
for l in open(sys.argv[1]):
    if not l.startswith('{'): continue
    j=json.loads(l); r,b,*c=j['label'].split(' '); k=(b,' '.join(c)); d[k].append(j['median_s']); rss[k].append(j['peak_rss_mb'])
    if b not in builds: builds.append(b)
cmds=[]
for (b,c) in d:
    if c not in cmds: cmds.append(c)
for c in cmds:
    base=st.median(d[(builds[0],c)])
    print(f"{c:16s} "+"  ".join(f"{b} {st.median(d[(b,c)])*1000:.1f} ms ({st.median(d[(b,c)])/base:.3f}x, {st.median(rss[(b,c)]):.1f} MB)" for b in builds))
