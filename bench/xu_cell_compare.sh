#!/bin/bash
# interleaved: old (338505b, float32 path) and new (int8 path), one bayes-adversary cell each, 3 repeats
cd /work/main
for i in 1 2 3; do
  for v in old new; do
    bin=bin/xp; [ $v = old ] && bin=/tmp/xp-old
    rm -rf /tmp/cmp-$v-$i /tmp/cmpc-$v-$i; mkdir -p /tmp/cmpc-$v-$i; cp -r /tmp/est-cache/embeddings /tmp/cmpc-$v-$i/
    XP_DATA=/work/shared/data OMP_WAIT_POLICY=passive $bin run -q configs/paper/xu_fig2_product_reviews.yaml --set analysis.samples=30 --set 'seeds=[1]' --set 'mechanisms=[{name: laplace, epsilon: [25]}]' --set output=/tmp/cmp-$v-$i --set cache=/tmp/cmpc-$v-$i > /dev/null 2>&1
    python3 -c "
import json,glob
r=json.load(open(glob.glob('/tmp/cmp-$v-$i/cells/*.json')[0]))
print('$v', $i, r['provenance']['wall_seconds'], r['analysis']['lookups'], json.dumps(r['analysis']['stats'])[:80])
"
  done
done
