#!/bin/bash
# compare_cell.sh OLD NEW: one bayes-adversary cell of Xu et al.'s Fig. 2
# product-review config (Laplace ε = 25, 30 draws, seed 1) run by two xp
# binaries alternately (OLD NEW OLD NEW OLD NEW), each time with a fresh
# cache (no draws kept; the embedding's binary cache copied in), printing
# each record's wall seconds, lookups and statistics. Needs XP_DATA. Build
# OLD from an earlier commit, e.g.:
#   MECH='{name: mahalanobis, epsilon: [25], params: {lambda: 0.2}}' compares
#   another mechanism's cell (default: Laplace at ε = 25); SAMPLES sets the
#   draws per word (default 30, where fixed costs weigh more than in a full
#   config's cells: SAMPLES=300 weighs them less), REPEATS the pairs
#   (default 3).
#   git worktree add /tmp/old COMMIT && (cd /tmp/old && go build -o /tmp/xp-old ./cmd/xp)
set -euo pipefail
old=$1 new=$2
: "${XP_DATA:?set XP_DATA to the data root}"
work=$(mktemp -d)
cfg=configs/paper/xu_fig2_product_reviews.yaml
mech=${MECH:-'{name: laplace, epsilon: [25]}'}
sets=(--set analysis.samples=${SAMPLES:-30} --set 'seeds=[1]' --set "mechanisms=[$mech]")
"$new" run -q --dry-run "$cfg" "${sets[@]}" --set cache="$work/seed" > /dev/null 2>&1 # loads the vectors once
"$new" run -q "$cfg" "${sets[@]}" --set output="$work/warm" --set cache="$work/seed" > /dev/null 2>&1
for i in $(seq "${REPEATS:-3}"); do
	for v in old new; do
		bin=$new
		[ "$v" = old ] && bin=$old
		mkdir -p "$work/c-$v-$i"
		cp -r "$work/seed/embeddings" "$work/c-$v-$i/"
		OMP_WAIT_POLICY=passive "$bin" run -q "$cfg" "${sets[@]}" --set output="$work/o-$v-$i" --set cache="$work/c-$v-$i" > /dev/null 2>&1
		python3 -c "
import glob, json
r = json.load(open(glob.glob('$work/o-$v-$i/cells/*.json')[0]))
print('$v', $i, r['provenance']['wall_seconds'], r['analysis']['lookups'], json.dumps(r['analysis']['stats'])[:80])
"
	done
done
rm -rf "$work"
