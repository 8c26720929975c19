#!/bin/bash
set -uo pipefail
# estimate_check.sh: out-of-sample checks of the dry run's estimate. Each check runs
# a calibration sweep (recording rates in a fresh cache), asks the dry run
# for another sweep's time, runs that sweep and prints the estimate beside
# the measured time (docs/performance.md). Needs XP_DATA and bin/xp.
# CHECKS="table7quick lrecquick" runs only the checks named.
cd "$(dirname "$0")/.."
: "${XP_DATA:?set XP_DATA to the data root}"
export OMP_WAIT_POLICY=passive
check() { # name config calibration-sets -- target-sets
  local name=$1 cfg=$2; shift 2
  check2 $name $cfg $cfg "$@"
}
check2() { # name calibration-config target-config calibration-sets -- target-sets
  local name=$1 calcfg=$2 cfg=$3; shift 3
  [ -z "${CHECKS:-}" ] || [[ " $CHECKS " == *" $name "* ]] || return 0
  local cal=() tgt=() side=cal
  for a in "$@"; do if [ "$a" = "--" ]; then side=tgt; continue; fi; [ $side = cal ] && cal+=("$a") || tgt+=("$a"); done
  local cache=/tmp/ec-$name-cache out=/tmp/ec-$name
  rm -rf $cache $out $out-cal; mkdir -p $cache; [ -d runs/cache/embeddings ] && ln -s "$PWD/runs/cache/embeddings" $cache/embeddings
  bin/xp run -q $calcfg "${cal[@]}" --set output=$out-cal --set cache=$cache > /tmp/ec-$name-cal.log 2>&1
  est=$(bin/xp run --dry-run $cfg "${tgt[@]}" --set output=$out --set cache=$cache 2>&1 | grep -E "estimated time|no time estimate")
  t0=$(date +%s.%N)
  bin/xp run -q $cfg "${tgt[@]}" --set output=$out --set cache=$cache > /tmp/ec-$name.log 2>&1
  t1=$(date +%s.%N)
  cells=$(python3 -c "
import json,glob
rs=[json.load(open(f)) for f in glob.glob('$out/cells/*.json')]
print(len(rs), round(sum(r['provenance']['wall_seconds'] for r in rs),1))")
  echo "$name | $est | cells, sum of cell seconds: $cells | wall $(python3 -c "print(round($t1-$t0,1))") s"
}
check pd300 configs/paper/feyisetan_fig2_histograms.yaml --set embedding.path=embeddings/fasttext-sg-xpcorpus-300d.vec.gz --set analysis.words=50 --set analysis.draws=500 --set 'mechanisms.0.epsilon=[5]' -- --set embedding.path=embeddings/fasttext-sg-xpcorpus-300d.vec.gz --set analysis.words=200 --set analysis.draws=500 --set 'mechanisms.0.epsilon=[1,10,40]'
check table7 configs/paper/custext_table7_query.yaml --set 'mechanisms.0.epsilon=[1,2]' --set 'mechanisms.0.grid.k=[5,20]' -- --set 'mechanisms.0.epsilon=[3,8,16]' --set 'mechanisms.0.grid.k=[10,50,100]'
check table7eps configs/paper/custext_table7_query.yaml --set 'mechanisms.0.epsilon=[1,2]' -- --set 'mechanisms.0.epsilon=[3,8,16]'
check table7quick configs/paper/custext_table7_query.yaml --set 'mechanisms.0.grid.k=[5,50]' --
check table4quick configs/paper/custext_table4_mapping.yaml --set 'mechanisms.0.grid.k=[20]' --set 'mechanisms.0.grid.mapping=[aggressive,balanced]' --
check table6quick configs/paper/custext_table6_survival.yaml --set 'mechanisms.0.epsilon=[10]' --
check lrecquick configs/paper/lrec2024_deniability.yaml --set 'seeds=[1]' --
check fig2quick configs/paper/feyisetan_fig2_histograms.yaml --set analysis.words=50 --set analysis.draws=200 --
check fig34quick configs/paper/feyisetan_fig3_4_averages.yaml --set analysis.words=50 --set analysis.draws=200 --
check fig1quick configs/paper/feyisetan_fig1_neighbours.yaml --set analysis.words=2000 --
check table3quick configs/paper/custext_table3_mappings.yaml --set dataset.train_limit=5000 --set train.epochs=1 --set 'seeds=[1]' --
check table1seed1 configs/paper/custext_table1_sst2.yaml --set dataset.train_limit=5000 --set train.epochs=1 --set 'seeds=[1]' -- --set 'seeds=[1]'
check fig3cell configs/paper/xu_fig3_rank.yaml --set analysis.samples=30 --set 'seeds=[1]' --set 'mechanisms.0.epsilon=[5,25,100]' -- --set 'seeds=[1]' --set 'mechanisms.0.epsilon=[10]' --set 'mechanisms.0.grid.rank=[2]'
check table8happy configs/paper/custext_table8_tradeoff.yaml --set 'analysis.list=[happy]' --set 'mechanisms.0.epsilon=[3]' --set 'mechanisms.1.epsilon=[3]' --
check fig5enronquick configs/paper/feyisetan_fig5_enron.yaml --set train.epochs=1 --
check table8quick configs/paper/custext_table8_tradeoff.yaml --set 'mechanisms.0.epsilon=[3]' --set 'mechanisms.1.epsilon=[3]' --
check table56quick configs/paper/custext_table5_6_strategies.yaml --set dataset.train_limit=5000 --set train.epochs=1 --
check quickstart configs/sst2_quickstart.yaml --set 'seeds=[1]' -- --set 'seeds=[2,3]'
check twitterutilseed1 configs/paper/xu_fig2_twitter_utility.yaml --set 'seeds=[1]' --set train.epochs=1 -- --set 'seeds=[1]'
# Algorithm 2's Vickrey cells priced at Laplace's speed (no Vickrey run in the cache: the "borrowed" line)
check2 algo2cell configs/paper/xu_fig2_product_reviews.yaml configs/paper/xu_algorithm2_budget.yaml --set analysis.samples=20 --set 'seeds=[1]' --set 'mechanisms=[{name: laplace, epsilon: [10, 25]}]' -- --set 'mechanisms.0.grid.t=[0]' --set 'mechanisms.0.epsilon=[8]'
# One full-size Twitter analysis cell (5,000 words × 1,000 draws) from reduced product-review cells
check2 twittercell configs/paper/xu_fig2_product_reviews.yaml configs/paper/xu_fig2_twitter.yaml --set analysis.samples=20 --set 'seeds=[1]' --set 'mechanisms=[{name: laplace, epsilon: [10, 25]}]' -- --set 'seeds=[1]' --set 'stages=[]' --set 'mechanisms=[{name: laplace, epsilon: [25]}]'
# One full-size Feyisetan Fig. 5 IMDb cell (15,000 reviews, 3 epochs, Laplace ε = 100 on the training text), calibrated on two cells of its quick look.
check fig5imdbcell configs/paper/feyisetan_fig5_imdb.yaml --set dataset.train_limit=2000 --set dataset.test_limit=1000 --set train.epochs=1 --set 'mechanisms.0.epsilon=[10]' --set 'apply=[none,train]' -- --set 'mechanisms.0.epsilon=[100]' --set 'apply=[train]'
# Xu Fig. 2 IMDb: one full-size utility pair (the baseline and Laplace ε = 25 at training and test time: 45,000 training reviews, 3 epochs, both splits privatized), calibrated on its quick utility look; the analysis cell kept tiny
check xufig2imdbcell configs/paper/xu_fig2_imdb.yaml --set dataset.train_limit=2000 --set dataset.test_limit=1000 --set train.epochs=1 --set analysis.top=50 --set analysis.samples=10 --set 'seeds=[1]' --set 'mechanisms=[{name: laplace, epsilon: [10]}]' -- --set analysis.top=50 --set analysis.samples=10 --set 'seeds=[1]' --set 'mechanisms=[{name: laplace, epsilon: [25]}]'
# Two full-size Xu Fig. 2 product-review cells (Laplace and Vickrey t = 0.5 at ε = 25, 1,000 draws of 4,879 words, seed 1), calibrated on its quick look's draws (100 a word) at ε = 10 and 50
check xuprcells configs/paper/xu_fig2_product_reviews.yaml --set analysis.samples=100 --set 'seeds=[1]' --set 'mechanisms=[{name: laplace, epsilon: [10, 50]}, {name: vickrey, epsilon: [10, 50], grid: {t: [0.5]}}]' -- --set 'seeds=[1]' --set 'mechanisms=[{name: laplace, epsilon: [25]}, {name: vickrey, epsilon: [25], grid: {t: [0.5]}}]'
