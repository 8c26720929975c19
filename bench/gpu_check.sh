#!/bin/bash
set -uo pipefail
# gpu_check.sh: the GPU checks of docs/gpu.md, in two halves.
#
#   bench/gpu_check.sh pack    # here, where Go and the data root are
#   bench/gpu_check.sh run     # on a GPU node with PyTorch, from the repo root
#   bench/gpu_check.sh pack-imdb; STEPS=imdb bench/gpu_check.sh run
#
# pack builds, into .gpucheck/ (git-ignored), everything the node needs and
# has not got: xp and the test binaries of mech and mech/knn (stripped),
# torchbuild as a static binary with gotch's C++ half (libtch), and the data
# the checks read (fastText 300d recompressed with xz, SST-2): about 50 MB.
# run builds libxptorch.so against the node's PyTorch (torchbuild
# -cxx-only), then runs xp doctor, xp smoke on cuda, mech/knn's tests with
# their indexes on the GPU, the quick start with device cuda, and
# BenchmarkScoring on the GPU (with a CPU profile; step bench), 5 full-size
# cells of configs/paper/xu_fig2_product_reviews.yaml on the GPU (step
# xu; XU_LIMIT seconds, default 240), libtorch's
# own time for a search batch from Python (bench/gpu_floor.py; step floor),
# BenchmarkScoring on the node's CPU (step cpubench), and the whole of
# configs/paper/feyisetan_fig5_imdb.yaml on the GPU (step imdb, only when STEPS names
# it; IMDB_LIMIT seconds, default 420), each under its own time limit; outputs go to $OUT
# (or /tmp/gpucheck-out).
# Step bert (only when STEPS names it): models' BERT and RoBERTa tests on the GPU
# (XP_DEVICE=cuda: the float64 reference, bf16 under autocast, fine-tuning
# and its bit-exact resume; clipping's multi-tensor norm; and, on the node's
# CPU against its libtorch, the multi-tensor optimizer step's bits), BenchmarkBertStepVsPyTorch at bert-base's
# shape against the node's PyTorch in fp32 and in bf16 under autocast (and its
# dispatch shape, the host's cost of a step, in fp32),
# and one epoch of SST-2 (bench/sst2_bert_epoch.yaml) with a random
# bert-base-shaped checkpoint (bench/random_bert.py), timed, in bf16.
# Step recipe (only when STEPS names it; needs .gpuimdb): the baseline of
# feyisetan_fig5_imdb.yaml at full size (15,000/5,000 reviews) over
# RECIPE_SEEDS (default 1 2 3 4) for three recipes: as committed (last
# states, 3 epochs), max pooling with 10 epochs and patience 3, and the
# same with fine-tuned vectors; the seed spread of each is what
# docs/reproduction.md's IMDb recipe is chosen by.
# The IMDb reviews (19 MB with xz) and the rest (49 MB) do not fit in one
# call of the development workplace's device tool (64 MiB): pack-imdb puts
# them in .gpuimdb/, and a run that finds the build and data of an earlier
# run on the same node (/tmp/gpucheck-*) reuses them, so that
# `STEPS=imdb bench/gpu_check.sh run` may carry .gpuimdb alone.
# STEPS="doctor knn" runs only the steps named (build always runs);
# LIBTORCH names the libtorch to build against (default: python3's torch).
# The first run (2026-11-26, an H100) took 4 minutes without the profile.
cd "$(dirname "$0")/.."
P=.gpucheck
case "${1:-}" in
pack)
	: "${XP_DATA:?set XP_DATA to the data root}"
	grep -qx "/$P/" .git/info/exclude 2>/dev/null || echo "/$P/" >> .git/info/exclude
	# the device tool carries 64 MiB: binaries and text travel xz-compressed
	keep=$(mktemp -d)
	[ -f $P/data/ft300.vec.xz ] && mv $P/data/ft300.vec.xz "$keep"/
	rm -rf $P && mkdir -p $P/data $P/gotch-src || exit 1
	B=$(mktemp -d)
	go build -ldflags="-s -w" -o $B/xp ./cmd/xp &&
		go test -c -ldflags="-s -w" -o $B/knn.test ./mech/knn &&
		go test -c -ldflags="-s -w" -o $B/mech.test ./mech &&
		go test -c -ldflags="-s -w" -o $B/models.test ./models &&
		CGO_ENABLED=0 go build -o $B/torchbuild ./tools/torchbuild || exit 1
	tar cf - -C $B xp knn.test mech.test models.test torchbuild | xz -T0 -6 > $P/bin.tar.xz && rm -rf $B || exit 1
	cp -r "$(GOWORK=off go list -m -f '{{.Dir}}' github.com/sugarme/gotch)/libtch" $P/gotch-src/ && chmod -R u+w $P/gotch-src || exit 1
	tar cf - -C "$XP_DATA" sst2/train.tsv sst2/dev.tsv sst2/test.tsv opinion_lexicon | xz -T0 -6 > $P/data/sst2.tar.xz || exit 1
	if [ -f "$keep"/ft300.vec.xz ]; then
		mv "$keep"/ft300.vec.xz $P/data/ # the vectors do not change between packs
	else
		echo "gpu_check: recompressing fastText 300d with xz (a few minutes, once)"
		zcat "$XP_DATA/embeddings/fasttext-sg-xpcorpus-300d.vec.gz" | xz -T0 -9 > $P/data/ft300.vec.xz || exit 1
	fi
	rmdir "$keep"
	du -sh $P
	;;
pack-imdb)
	: "${XP_DATA:?set XP_DATA to the data root}"
	grep -qx "/.gpuimdb/" .git/info/exclude 2>/dev/null || echo "/.gpuimdb/" >> .git/info/exclude
	mkdir -p .gpuimdb || exit 1
	if [ ! -f .gpuimdb/imdb.tar.xz ]; then
		echo "gpu_check: recompressing the IMDb reviews with xz (about 2 minutes, once)"
		zcat "$XP_DATA/imdb/aclImdb_v1_train_test.tar.gz" | xz -T0 -9e > .gpuimdb/imdb.tar.xz.part && mv .gpuimdb/imdb.tar.xz.part .gpuimdb/imdb.tar.xz || exit 1
	fi
	du -sh .gpuimdb
	;;
run)
	OUT=${OUT:-/tmp/gpucheck-out}; mkdir -p "$OUT"
	R=$PWD t0=$(date +%s)
	el() { echo "[+$(($(date +%s) - t0))s] $*"; }
	want() { [ -z "${STEPS:-}" ] || named $1; }
	named() { [[ " ${STEPS:-} " == *" $1 "* ]]; } # imdb, bert and recipe run only when named
	B=/tmp/gpucheck-bin D=/tmp/gpucheck-data
	if named imdb || named recipe; then
		[ -f .gpuimdb/imdb.tar.xz ] || [ -d $D/imdb/aclImdb ] || { echo "gpu_check: step imdb needs .gpuimdb: run 'bench/gpu_check.sh pack-imdb' and carry it" >&2; exit 2; }
		[ -d $D/imdb/aclImdb ] || { mkdir -p $D/imdb && xz -dc .gpuimdb/imdb.tar.xz | tar x -C $D/imdb; } || exit 1
	fi
	if [ -f $P/bin.tar.xz ]; then
		T=${LIBTORCH:-$(python3 -c 'import torch, os; print(os.path.dirname(torch.__file__))')} || exit 1
		mkdir -p $B $D/embeddings && tar xJf $P/bin.tar.xz -C $B && tar xJf $P/data/sst2.tar.xz -C $D || exit 1
		(xz -dc $P/data/ft300.vec.xz | gzip -1 > $D/embeddings/fasttext-sg-xpcorpus-300d.vec.gz.part && mv $D/embeddings/fasttext-sg-xpcorpus-300d.vec.gz.part $D/embeddings/fasttext-sg-xpcorpus-300d.vec.gz) &
		el build
		$B/torchbuild -cxx-only -gotch $P/gotch-src -gotch-version v0.9.1 -libtorch "$T" -out /tmp/gpucheck-build -q > "$OUT/manifest.json" 2> "$OUT/build.log" || { tail -20 "$OUT/build.log"; exit 1; }
	elif [ -x $B/xp ] && [ -f $D/embeddings/fasttext-sg-xpcorpus-300d.vec.gz ]; then
		el "reusing the build and data of an earlier run on this node"
	else
		echo "gpu_check: no $P: run 'bench/gpu_check.sh pack' where Go is, and carry $P" >&2; exit 2
	fi
	L=$(dirname "$(ls /tmp/gpucheck-build/torch/*/libxptorch.so | head -1)")
	export LD_LIBRARY_PATH=$L XP_DATA=$D OMP_WAIT_POLICY=passive
	X=$B/xp
	el doctor
	timeout 60 $X doctor 2>&1 | tee "$OUT/doctor.txt" || exit 1
	wait
	if want smoke; then el smoke; timeout 60 $X smoke -device cuda 2>&1 | tail -1; fi
	if want knn; then
		el "knn tests on cuda"
		(cd mech/knn && XP_DEVICE=cuda timeout 150 $B/knn.test -test.v) > "$OUT/knn_cuda.txt" 2>&1
		echo "knn rc=$?"; grep -E '^(--- FAIL|ok|FAIL|PASS)|int8-torch, k' "$OUT/knn_cuda.txt" | head -20
	fi
	if want quickstart; then
		el "quick start on cuda"
		timeout 200 $X run configs/sst2_quickstart.yaml --set device=cuda --set output=/tmp/gpucheck-qs > "$OUT/quickstart_cuda.txt" 2>&1
		echo "quickstart rc=$?"; grep -E '^\| (none|laplace)|cells:' "$OUT/quickstart_cuda.txt"
	fi
	if want bench; then
		el "scoring benchmark on cuda"
		(cd mech && XP_DEVICE=cuda timeout 150 $B/mech.test -test.run '^$' -test.bench 'Scoring/fasttext300d' -test.benchtime 1x -test.cpuprofile "$OUT/cuda.prof") > "$OUT/bench_cuda.txt" 2>&1
		echo "bench rc=$?"; grep Benchmark "$OUT/bench_cuda.txt"
	fi
	if want xu; then
		# Xu et al. Fig. 2 (product reviews), full size (1,000 draws per
		# word, 4,879 words), seed 1: Laplace at ε = 1, 25, 100, and ε = 25
		# for Mahalanobis and Vickrey t = 0.5: 5 of the config's 108 cells
		el "xu_fig2_product_reviews on cuda, 5 full-size cells"
		timeout ${XU_LIMIT:-240} $X run configs/paper/xu_fig2_product_reviews.yaml --set device=cuda --set output=/tmp/gpucheck-xu \
			--set 'seeds=[1]' --set 'mechanisms.0.epsilon=[1,25,100]' --set 'mechanisms.1.epsilon=[25]' --set 'mechanisms.2.epsilon=[25]' --set 'mechanisms.2.grid.t=[0.5]' > "$OUT/xu_cuda.txt" 2>&1
		echo "xu rc=$?"; grep -E '^bayes-adversary:|cells:' "$OUT/xu_cuda.txt"; tar czf "$OUT/xu_out.tgz" -C /tmp gpucheck-xu 2>/dev/null
	fi
	if want floor; then
		el "libtorch's own time per search batch (gpu_floor.py)"
		timeout 120 python3 bench/gpu_floor.py > "$OUT/floor.txt" 2>&1
		echo "floor rc=$?"; grep -E '^floor' "$OUT/floor.txt"
	fi
	if want cpubench; then
		el "scoring benchmark on the node's CPU"
		(cd mech && timeout 100 $B/mech.test -test.run '^$' -test.bench 'Scoring/fasttext300d/laplace/batch=1024' -test.benchtime 1x) > "$OUT/bench_cpu.txt" 2>&1
		echo "bench rc=$?"; grep Benchmark "$OUT/bench_cpu.txt"
	fi
	if named imdb; then
		# Feyisetan et al. Fig. 5, IMDb panel: the whole config as written
		# (13 cells, 7 trainings of a biLSTM over 15,000 reviews), on the GPU
		el "feyisetan_fig5_imdb on cuda, the whole config"
		timeout ${IMDB_LIMIT:-420} $X run configs/paper/feyisetan_fig5_imdb.yaml --set device=cuda --set output=/tmp/gpucheck-imdb > "$OUT/imdb_cuda.txt" 2>&1
		echo "imdb rc=$?"; grep -E '^\| |cells:' "$OUT/imdb_cuda.txt" | head -30; tar czf "$OUT/imdb_out.tgz" -C /tmp gpucheck-imdb 2>/dev/null
	fi
	if named bert; then
		el "BERT tests on cuda"
		(cd models && XP_DEVICE=cuda timeout 120 $B/models.test -test.run 'Bert|Roberta|ClipOnDevice|StepForeach' -test.v) > "$OUT/bert_tests.txt" 2>&1
		echo "bert tests rc=$?"; grep -E '^(--- |ok|FAIL|PASS)' "$OUT/bert_tests.txt" | head -30
		for prec in fp32 bf16; do
			el "BERT step against PyTorch on cuda, $prec"
			shapes='bert-base|dispatch' # dispatch: the host's cost of a step, in fp32 only
			[ $prec = fp32 ] || shapes=bert-base
			(cd models && XP_DEVICE=cuda XP_PRECISION=$prec timeout 260 $B/models.test -test.run '^$' -test.bench "BertStepVsPyTorch/($shapes)\$" -test.benchtime 1x -test.v) > "$OUT/bert_bench_$prec.txt" 2>&1
			echo "bench $prec rc=$?"; grep -E 'round|xp/PyTorch' "$OUT/bert_bench_$prec.txt"
		done
		el "one SST-2 epoch, bert-base shape, bf16"
		timeout 60 python3 bench/random_bert.py $D/bert-random --vocab-from $D/sst2/train.tsv || exit 1
		s0=$(date +%s)
		timeout 300 $X run bench/sst2_bert_epoch.yaml --set device=cuda --set model.precision=bf16 --set embedding.path=embeddings/fasttext-sg-xpcorpus-300d.vec.gz \
			--set output=/tmp/gpucheck-bert > "$OUT/bert_epoch.txt" 2>&1
		echo "epoch rc=$? wall $(($(date +%s) - s0)) s"
		grep -E 'cells:|^\| none' "$OUT/bert_epoch.txt"
		python3 -c 'import glob, json
for f in glob.glob("/tmp/gpucheck-bert/cells/*.json"):
    d = json.load(open(f))
    print("epoch", [(e["epoch"], round(e["examples_per_sec"], 1), round(e["loss"], 4)) for e in d.get("epochs", [])], "test", d.get("test", {}).get("accuracy"))'
		tar czf "$OUT/bert_out.tgz" -C /tmp gpucheck-bert 2>/dev/null
	fi
	if named recipe; then
		# the IMDb baseline at full size under three recipes (docs/reproduction.md)
		seeds=$(echo ${RECIPE_SEEDS:-1 2 3 4} | tr ' ' ,)
		for r in "committed|" "max10p3|--set model.pooling=max --set train.epochs=10 --set train.patience=3" \
			"max10p3ft|--set model.pooling=max --set train.epochs=10 --set train.patience=3 --set model.fine_tune=true"; do
			name=${r%%|*} sets=${r#*|}
			el "IMDb recipe $name, seeds $seeds"
			timeout ${RECIPE_LIMIT:-200} $X run configs/paper/feyisetan_fig5_imdb.yaml --set device=cuda --set 'mechanisms=[]' --set 'apply=[none]' \
				--set "seeds=[$seeds]" $sets --set output=/tmp/gpucheck-recipe-$name --set cache=/tmp/gpucheck-cache > "$OUT/recipe_$name.txt" 2>&1
			echo "recipe $name rc=$?"
			python3 -c 'import glob, json, statistics, sys
acc = []
for f in sorted(glob.glob(sys.argv[1] + "/cells/*.json")):
    d = json.load(open(f))
    if "test" not in d:
        continue
    acc.append(d["test"]["accuracy"])
    print(sys.argv[2], "seed", d["cell"].get("seed"), "test", round(d["test"]["accuracy"], 4), "best epoch", d.get("best_epoch"),
          "valid", [round(e["valid"]["accuracy"], 3) for e in d.get("epochs", [])])
if acc:
    print(sys.argv[2], "test accuracy mean %.4f sd %.4f min %.4f max %.4f over %d seeds" % (statistics.mean(acc), statistics.stdev(acc) if len(acc) > 1 else 0, min(acc), max(acc), len(acc)))' /tmp/gpucheck-recipe-$name $name
		done
		tar czf "$OUT/recipe_out.tgz" -C /tmp $(cd /tmp && ls -d gpucheck-recipe-*) 2>/dev/null
	fi
	nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
	el end
	;;
*)
	echo "usage: bench/gpu_check.sh pack|run (docs/gpu.md)" >&2
	exit 2
	;;
esac
