package spec

import (
	"fmt"
	"slices"
	"strings"

	"github.com/xp-nlp/xp/internal/near"
)

// unit is [0, 1].
var unitMin, unitMax = Incl(0), Incl(1)

// mechanisms are the privatization mechanisms (docs/mechanisms.md has
// their exact definitions and the choices made).
var mechanisms = []Descriptor{
	{Kind: Mechanism, Name: "laplace", Doc: "multivariate Laplace noise, nearest candidate (Feyisetan et al. 2020)",
		Notion: MetricDP, Epsilon: true},
	{Kind: Mechanism, Name: "vickrey", Doc: "Laplace noise, then the first or second nearest candidate (Xu et al. 2021)",
		Notion: MetricDP, Unguarded: "exclude_input", Epsilon: true, Noise: &NoiseSource{Mechanism: "laplace", Param: "lambda", WithParam: "mahalanobis"},
		Params: []Param{
			{Name: "t", Type: Float, Default: 0.5, Min: unitMin, Max: unitMax, Grid: true,
				Doc: "two-neighbour form: the nearer candidate is output with probability (1−t)·d2 / (t·d1 + (1−t)·d2); 0 is Laplace, 1 always the second"},
			{Name: "exclude_input", Type: Bool, Default: false, Grid: true,
				Doc: "drop the input word from the candidates as the paper's pseudo-code does (no metric-DP guarantee: reported as no-guarantee)"},
			{Name: "t_r", Type: Floats, MinLen: 2, Min: Incl(0), Grid: true,
				Doc: "generalized form: the len(t_r) nearest, the r-th output with probability ∝ exp(−t_r·d_r)"},
			{Name: "rank", Type: Int, Min: Incl(1), Grid: true,
				Doc: "deterministic variant: always the rank-th nearest candidate of the noisy vector"},
			{Name: "lambda", Type: Float, Min: unitMin, Max: unitMax, Grid: true,
				Doc: "draw the Mahalanobis mechanism's elliptical noise, Σ_p = λΣ + (1−λ)I, instead of Laplace's (pyPANTERA's VickreyMhl; the guarantee is then in the Mahalanobis metric). Absent: Laplace noise"},
		},
		Exclusive: [][]string{{"t", "t_r", "rank"}}},
	{Kind: Mechanism, Name: "mahalanobis", Doc: "elliptical noise shaped by the vectors' covariance, nearest candidate (Xu et al. 2020)",
		Notion: MetricDP, Epsilon: true,
		Params: []Param{{Name: "lambda", Type: Float, Default: 0.2, Min: unitMin, Max: unitMax, Grid: true,
			Doc: "Σ_p = λΣ + (1−λ)I"}}},
	{Kind: Mechanism, Name: "santext", Doc: "exponential mechanism over the candidates, ∝ exp(−ε·d/2) (Yue et al. 2021); by default, as the authors' code, the task's words with a vector",
		Notion: MetricDP, Epsilon: true,
		Params: []Param{{Name: "candidates", Type: String, Enum: []string{"task", "embedding"}, Default: "task", Dataset: []string{"task"}, Grid: true,
			Doc: "the output set: task, the words of the task's texts that have a vector (the authors' run_SanText.py); embedding, every word of the vectors"}}},
	{Kind: Mechanism, Name: "santext+", Doc: "SanText on the least frequent task words, others kept or sanitized with probability p (Yue et al. 2021; no guarantee for frequent words)",
		Notion: NoDP, Epsilon: true, Dataset: true,
		Params: []Param{
			{Name: "p", Type: Float, Default: 0.3, Min: unitMin, Max: unitMax, Grid: true,
				Doc: "probability that a non-sensitive word is sanitized"},
			{Name: "sensitive", Type: Float, Default: 0.9, Min: Excl(0), Max: unitMax, Grid: true,
				Doc: "fraction of the task vocabulary deemed sensitive, least frequent first"},
		}},
	{Kind: Mechanism, Name: "tem", Doc: "truncated exponential mechanism: ∝ exp(−ε·min(d, γ)/2) over every word of the vectors, so the words beyond γ share one mass uniformly (Carvalho et al. 2023)",
		Notion: MetricDP, Epsilon: true,
		Params: []Param{
			{Name: "beta", Type: Float, Default: 0.001, Min: Excl(0), Max: Excl(1), Grid: true,
				Doc: "γ = (2/ε)·ln((1−β)·|W|/β) over the |W| words of the vectors, so that the output lies beyond γ with probability at most β (the paper's choice; 0.001 as in sjmeis/MLDP)"},
			{Name: "gamma", Type: Float, Min: Excl(0), Grid: true,
				Doc: "the truncation distance γ itself, instead of deriving it from beta"},
		},
		Exclusive: [][]string{{"beta", "gamma"}}},
	{Kind: Mechanism, Name: "diffractor", Doc: "1-Diffractor: the words laid on a line by greedy nearest neighbours, a word moved along it by geometric or truncated exponential noise on its position (Meisenbacher et al. 2024); metric DP in the line's distance",
		Notion: LineDP, Epsilon: true,
		Params: []Param{
			{Name: "method", Type: String, Default: "geometric", Enum: []string{"geometric", "tem"}, Grid: true,
				Doc: "geometric: two-sided geometric noise on the position, Pr[shift k] ∝ e^{−ε·|k|}, clipped to the line's ends; tem: Pr[j] ∝ exp(−ε·min(|i − j|, γ)/2)"},
			{Name: "gamma", Type: Int, Default: 5, Min: Incl(1), Grid: true, Doc: "method tem: the window half-width γ in positions (the authors' default 5)"},
			{Name: "replace_stopwords", Type: Bool, Default: false, Grid: true, Doc: "privatize NLTK's 179 English stopwords too (default: kept, as the authors' code; a kept stopword has no guarantee)"},
		}},
	{Kind: Mechanism, Name: "truncated-gumbel", Doc: "truncated Gumbel: Gumbel noise, truncated to ±Δmax, on the distances of the input's k nearest words (k Poisson of mean ln(|W| − 1)), the smallest noisy one output (Carvalho et al. 2021, as sjmeis/MLDP implements it); offered as metric DP, which it does not keep (a word's farthest word is never its output): no guarantee",
		Notion: NoDP, Epsilon: true,
		Params: []Param{
			{Name: "min_dist", Type: Float, Min: Excl(0), Grid: true,
				Doc: "Δmin of the calibration, the smallest distance between words (absent: the smallest distance from the vectors' first word to another vector)"},
			{Name: "max_dist", Type: Float, Min: Excl(0), Grid: true,
				Doc: "Δmax, the largest distance between words and the noise's truncation (absent: the largest distance from the vectors' first word)"},
		}},
	custext("custext", "CusText: each input word samples from its own output set of K words (Chen et al. 2023)"),
	custext("custext+", "CusText+: CusText keeping NLTK's 179 English stopwords unchanged (Chen et al. 2023)"),
}

func custext(name, doc string) Descriptor {
	return Descriptor{Kind: Mechanism, Name: name, Doc: doc, Notion: SetDP, Epsilon: true, Dataset: true,
		Params: []Param{
			{Name: "k", Type: Int, Default: 20, Min: Incl(1), Grid: true, Doc: "output-set size K"},
			{Name: "mapping", Type: String, Default: "balanced", Enum: []string{"aggressive", "balanced", "conservative"}, Grid: true,
				Doc: "how output sets are assigned (the paper's Algorithm 1)"},
			{Name: "score", Type: String, Default: "cosine", Enum: []string{"cosine", "euclidean"}, Grid: true,
				Doc: "the score u(x, y) within a set, and the nearness that builds the sets: cosine, the authors' setting with the paper's counter-fitted vectors; euclidean, theirs with GloVe"},
			{Name: "strategy", Type: String, Default: "token", Enum: []string{"token", "record", "dataset"}, Grid: true,
				Doc: "a fresh draw per token, one per word per record, or one per word for the dataset"},
			{Name: "removed", Type: String, Enum: []string{"zero", "drop"}, Grid: true, DefaultText: "zero with cosine, drop with euclidean",
				Doc: "conservative mapping: what becomes of a chosen set's words. zero: their vectors are zeroed and stay in the search at cosine 0, so a set takes them once fewer than K remaining words have a positive cosine (the authors' code with the cosine score); drop: they leave the candidates (the effect of the authors' 1e9 overwrite with the Euclidean score). Absent: the authors' choice for the score; only the conservative mapping reads it"},
		},
		Requires: []Requirement{{Param: "removed", Value: "zero", Needs: "score", NeedsValue: "cosine"}}}
}

// head and training parameters common to every model kind.
var modelCommon = []Param{
	{Name: "head_hidden", Type: Int, Default: 0, Min: Incl(0), Doc: "hidden width of the MLP head (0: a linear head)"},
	{Name: "dropout", Type: Float, Default: 0.0, Min: Incl(0), Max: Excl(1), Doc: "dropout on the head's inputs (and between LSTM layers), training only"},
	{Name: "lr", Type: Float, Default: 1e-3, Min: Excl(0), Doc: "Adam learning rate"},
	{Name: "clip", Type: Float, Default: 5.0, Min: Incl(0), Doc: "global gradient-norm bound (0: no clipping)"},
	{Name: "fine_tune", Type: Bool, Default: false, Doc: "train the pretrained embeddings (default: frozen, as in the papers)"},
}

// models are the classifier kinds.
var models = []Descriptor{
	{Kind: Model, Name: "bilstm", Doc: "embedding → bidirectional LSTM → final states or max pooling → linear or MLP head", Dataset: true,
		Params: append([]Param{
			{Name: "hidden", Type: Int, Default: 128, Min: Incl(1), Doc: "LSTM units per direction"},
			{Name: "layers", Type: Int, Default: 1, Min: Incl(1), Doc: "stacked LSTM layers"},
			{Name: "pooling", Type: String, Default: "last", Enum: []string{"last", "max"}, Doc: "final states (last) or the maximum over the text's own tokens (max)"},
		}, modelCommon...)},
	{Kind: Model, Name: "baseline", Doc: "mean of the word embeddings → linear or MLP head (fast sanity checks)", Dataset: true,
		Params: modelCommon},
	{Kind: Model, Name: "transformer", Dataset: true, Pieces: true,
		Doc: "a pretrained BERT, DistilBERT or RoBERTa checkpoint (a local Hugging Face folder) fine-tuned with a classification head on the privatized texts, as Chen et al. (2023) do",
		Params: []Param{
			{Name: "checkpoint", Type: String, Required: true, Doc: "the folder holding config.json, the tokenizer (vocab.txt; RoBERTa: vocab.json and merges.txt; or tokenizer.json) and model.safetensors (a save_pretrained folder), relative to the data root like the vectors"},
			{Name: "lr", Type: Float, Default: 2e-5, Min: Excl(0), Doc: "AdamW's peak learning rate, decaying linearly to 0 over the training's steps"},
			{Name: "weight_decay", Type: Float, Default: 0.0, Min: Incl(0), Max: Excl(1), Doc: "AdamW's decoupled weight decay (Hugging Face's default, 0: none) of every weight but the biases and layer norms, as Hugging Face's Trainer leaves those out"},
			{Name: "warmup", Type: Float, Default: 0.0, Min: Incl(0), Max: Excl(1), Doc: "share of the steps over which the learning rate rises linearly from 0"},
			{Name: "clip", Type: Float, Default: 1.0, Min: Incl(0), Doc: "global gradient-norm bound (0: no clipping)"},
			{Name: "dropout", Type: Float, Default: 0.1, Min: Incl(0), Max: Excl(1), Doc: "dropout in the encoder and before the head, training only"},
			{Name: "precision", Type: String, Default: "fp32", Enum: []string{"fp32", "bf16"}, Doc: "fp32 throughout, or bf16: linear layers and matrix products in bfloat16 under autocast as torch.autocast does (weights, layer norms, softmax and the loss stay float32), for GPUs with bfloat16 units"},
		}},
}

// analyses are the privacy analyses (docs/analyses.md has their exact
// definitions). Epsilon: the analysis runs a mechanism at each ε of the
// config's mechanisms; without it the config has no mechanisms.
var analyses = []Descriptor{
	{Kind: Analysis, Name: "neighbours", ByRank: true, Doc: "distance from each sampled word to its k-th nearest candidate, percentiles over the words (Feyisetan et al. 2020, Fig. 1)",
		Params: []Param{
			{Name: "k", Type: Ints, MinLen: 1, Min: Incl(1), Default: []int{1, 5, 10, 20, 50, 100, 200, 500, 1000},
				Doc: "neighbour ranks (the word itself is rank 0)"},
			{Name: "percentiles", Type: Floats, MinLen: 1, Min: Incl(0), Max: Incl(100), Default: []float64{5, 20, 50, 80, 95},
				Doc: "percentiles over the words"},
			{Name: "words", Type: Int, Min: Incl(0), Default: 0,
				Doc: "words sampled uniformly (by the seed) from the candidates (0: every candidate)"},
		}},
	{Kind: Analysis, Name: "plausible-deniability", Figures: []string{"N_w mean", "S_w mean"}, Histograms: []string{"N_w", "S_w"}, // Feyisetan Fig. 2–4
		Doc:     "N_w = draws returning w unchanged and S_w = distinct outputs among m draws, per sampled word (Feyisetan et al. 2020, §3–4, Fig. 2–4)",
		Epsilon: true, Params: append(wordSample(), []Param{
			{Name: "draws", Type: Int, Min: Incl(1), Default: 1000,
				Doc: "draws m per word (the paper: 1,000)"},
			{Name: "exact", Type: Bool, Default: true,
				Doc: "compute the expected N_w and S_w from the output distribution where it is known (SanText, CusText) instead of drawing"},
		}...)},
	{Kind: Analysis, Name: "bayes-adversary", Figures: []string{"E_M", "L_M flip", "L_M loss"}, Tradeoffs: [][2]string{{"L_M flip", "E_M"}}, // Xu Fig. 2
		Doc:     "a Bayesian adversary's expected inference error E_M under the dataset's word prior, and the lexicon's utility loss L_M (Xu et al. 2021, §3)",
		Epsilon: true, Dataset: true, Revision: 1, // 1: sampled f_M reports the recovery resting on single draws (E_M's bias)
		Params: []Param{
			{Name: "samples", Type: Int, Min: Incl(1), Default: 1000,
				Doc: "draws per prior word estimating f_M where it is not known exactly"},
			{Name: "top", Type: Int, Min: Incl(0), Default: 0,
				Doc: "restrict the prior to the N most frequent words with a vector (0: all)"},
		}},
	{Kind: Analysis, Name: "query-attack", Doc: "the fewest independent privatizations whose plurality vote returns the word with probability ≥ target, p0 = Pr[M(w) = w], the runner-up's probability p1 and the number of outputs (Chen et al. 2023, Algorithm 2, Tables 7–8)",
		Epsilon: true, Revision: 1, // 1: p1 and outputs recorded
		Params: []Param{
			{Name: "list", Type: Strings, MinLen: 1, Default: []string{"happy"}, Doc: "the attacked words"},
			{Name: "target", Type: Float, Min: Excl(0), Max: Excl(1), Default: 0.95, Doc: "the vote accuracy the attacker needs"},
			{Name: "cap", Type: Int, Min: Incl(1), Default: 10000, Doc: "largest N tried (beyond it: ∞)"},
			{Name: "samples", Type: Int, Min: Incl(1), Default: 100000,
				Doc: "draws estimating the output distribution where it is not known exactly (Laplace, Vickrey, Mahalanobis)"},
		}},
	{Kind: Analysis, Name: "dp-audit", Doc: "a privacy audit: over ordered pairs of sampled words x, x′ and outputs y, the loss ln Pr[M(x) = y] − ln Pr[M(x′) = y] against the bound the mechanism's guarantee states (ε·d for metric DP in its metric, ε within a CusText output set; a no-guarantee variant against the bound of the mechanism it varies), exact where the output distribution is known, otherwise from draws with simultaneous 95% Clopper–Pearson bounds; pairs with a violation are counted. For CusText the inputs sharing each sampled word's output set join the sample",
		Epsilon: true, Params: append(auditSample(), []Param{
			{Name: "draws", Type: Int, Min: Incl(1), Default: 10000,
				Doc: "draws per word estimating its output distribution where it is not known exactly"},
			{Name: "exact", Type: Bool, Default: true,
				Doc: "use the output distribution where it is known (SanText, TEM, CusText) instead of drawing"},
		}...)},
	{Kind: Analysis, Name: "reconstruction", Figures: []string{"recovery %", "context-free recovery %", "unchanged %"}, Doc: "a context-aware reconstruction attack (after Tong et al. 2025): a biLSTM tagger over privatized sentences' vectors, trained on privatized texts disjoint from the evaluated ones, predicts each original token; its token recovery overall and on rare words beside the context-free attacker's (each observed word's most frequent original in the same training pairs)",
		Epsilon: true, Dataset: true, Params: []Param{
			{Name: "sentences", Type: Int, Min: Incl(1), Default: 4000, Doc: "texts the attacker learns from (privatized with the cell's mechanism and ε)"},
			{Name: "test", Type: Int, Min: Incl(1), Default: 1000, Doc: "texts evaluated, disjoint from the attacker's"},
			{Name: "vocab", Type: Int, Min: Incl(1), Default: 5000, Doc: "original words the attacker can name: its training text's most frequent (others only when left unchanged)"},
			{Name: "epochs", Type: Int, Min: Incl(1), Default: 3, Doc: "passes over the attacker's training texts"},
			{Name: "hidden", Type: Int, Min: Incl(1), Default: 128, Doc: "LSTM units per direction"},
			{Name: "lr", Type: Float, Min: Excl(0), Default: 0.002, Doc: "the attacker's Adam learning rate"},
			{Name: "fine_tune", Type: Bool, Default: true, Doc: "train the attacker's input vectors too, so it can learn each observed word's own tendencies as the context-free attacker does (false: frozen)"},
			{Name: "max_len", Type: Int, Min: Incl(1), Default: 64, Doc: "tokens kept of each text"},
			{Name: "rare", Type: Int, Min: Incl(0), Default: 5, Doc: "a word is rare when it occurs at most this often in the attacker's training text"},
		}},
	{Kind: Analysis, Name: "examples", Doc: "privatizations of chosen words (Feyisetan et al. 2020, Table 1), the share returned unchanged and the outputs' mean cosine with their input",
		Epsilon: true, Revision: 1, Params: []Param{
			{Name: "list", Type: Strings, MinLen: 1, Default: []string{"encryption", "hockey", "spacecraft"}, Doc: "the words"},
			{Name: "draws", Type: Int, Min: Incl(1), Default: 10, Doc: "privatizations shown per word (most frequent first)"},
		}}, // 1: cosine to input recorded
	{Kind: Analysis, Name: "mapping", Doc: "share of the dataset's input tokens and words whose CusText output set is not shared by all its inputs (not of type N–M; Chen et al. 2023, Table 4), how alike the sets are, and at the cell's ε the token-weighted probability that an input is returned as itself (p0) with the set-mates' normalised score that decides it; custext mechanisms only, ε changes only p0",
		Epsilon: true, Dataset: true, Revision: 4, Mechanisms: []string{"custext", "custext+"}, MechanismsWhy: "measures CusText's output sets"}, // 1: N–M read as "set shared by another input"; 2: conservative cosine sets keep removed words at cosine 0; 3: removed: drop reaches the mapping (records of revision 2 with it were built as zero); 4: p0 and the set-mates' normalised score recorded
}

// stages run after the cells of an analysis config, reading their
// records (and those of the stages before them).
var stages = []Descriptor{
	{Kind: Stage, Name: "utility-loss", Utility: UtilityApply, Pairs: true, Figures: []string{"L_M train", "L_M test", "L_M both"}, Tradeoffs: [][2]string{{"L_M train", "E_M"}, {"L_M test", "E_M"}, {"L_M both", "E_M"}},
		Doc: "L_M of a sentence dataset: the clean baseline's accuracy minus the accuracy with the mechanism applied, per mechanism setting, ε and seed, beside the analysis's statistics; the run gains the utility cells it reads (Xu et al. 2021, Fig. 2)",
		Params: []Param{
			{Name: "apply", Type: Strings, Enum: []string{"train", "test", "both"}, MinLen: 1, Default: []string{"both"},
				Doc: "where the mechanism applies in the utility cells (each gives its own L_M)"},
		}},
	{Kind: Stage, Name: "select", Reads: "bayes-adversary", ReadsWhy: "maximizes E_M", Doc: "Xu et al. (2021), Algorithm 2: per mechanism and seed, double ε from the smallest until Laplace (t = 0) has loss below the budget, then at that ε the setting with the largest privacy statistic whose loss is at most the budget (procedure paper), or that setting over the whole grid (procedure grid)",
		Params: []Param{
			{Name: "procedure", Type: String, Enum: []string{"paper", "grid"}, Default: "paper",
				Doc: "paper: Algorithm 2 as published, over the grid's ε in increasing order (give ε0·2^k and t = 0 in the grid); grid: the arg-max over every setting and ε within the budget"},
			{Name: "budget", Type: Float, Min: Incl(0), Required: true, Doc: "the utility-loss budget C"},
			{Name: "loss", Type: String, Enum: []string{"L_M flip", "L_M loss", "L_M train", "L_M test", "L_M both"}, Default: "L_M flip",
				Doc: "the statistic bounded by the budget: the lexicon's flip or loss rate (bayes-adversary), or the accuracy drop of an apply mode (utility-loss)"},
			{Name: "privacy", Type: String, Enum: []string{"E_M"}, Default: "E_M", Doc: "the statistic maximized"},
		}},
	{Kind: Stage, Name: "epsilon-search", Searches: true, Reads: "examples", ReadsWhy: "shows the examples at the ε found", Doc: "per mechanism setting and seed, the ε at which the mean N_w over the examples' words reaches each target (bracketed from the middle of the range by decades, then bisection on log ε), and the examples at that ε (Feyisetan et al. 2020, Table 1)",
		Params: []Param{
			{Name: "targets", Type: Floats, Min: Excl(0), Max: Excl(1), MinLen: 1, Required: true,
				Doc: "mean N_w sought, as a share of the draws (Table 1: 0.05, 0.1, 0.2, 0.3 of 1,000)"},
			{Name: "draws", Type: Int, Min: Incl(1), Default: 1000, Doc: "draws per word estimating N_w at each probed ε"},
			{Name: "lo", Type: Float, Min: Excl(0), Default: 0.01, Doc: "lower end of the ε searched"},
			{Name: "hi", Type: Float, Min: Excl(0), Default: 10000.0, Doc: "upper end of the ε searched"},
			{Name: "tolerance", Type: Float, Min: Excl(0), Default: 0.1, Doc: "stop when the mean N_w is within this share of the target"},
			{Name: "probes", Type: Int, Min: Incl(1), Default: 30, Doc: "the most ε probed per target"},
		}},
	{Kind: Stage, Name: "matched-privacy", Utility: UtilityBaseline, Searches: true, Reads: "reconstruction", ReadsWhy: "matches on its attackers that need no training (copying, context-free) and runs the whole attack at the ε found",
		Tradeoffs: [][2]string{{"Δ accuracy", "recovery %"}, {"Δ accuracy", "matched recovery %"}},
		Doc:       "mechanisms compared at matched privacy: per mechanism setting and seed, the ε at which the stronger of the reconstruction analysis's attackers that need no training — copying the observed word, and the context-free attacker — recovers the target share of tokens (bracketed from the middle of the range by decades, then bisection on log ε, over the same pairs), then at that ε the context-aware attacker's recovery and the accuracy of the classifier with the mechanism applied, beside the baseline's, flagged where no attacker beats copying or the tagger beats the attacker matched; the run gains the baselines",
		Params: []Param{
			{Name: "target", Type: Float, Min: Excl(0), Max: Excl(100), Required: true,
				Doc: "the token recovery sought, of the stronger of copying and the context-free attacker, in percent of the evaluated tokens with a vector"},
			{Name: "apply", Type: String, Enum: []string{"train", "test", "both"}, Default: "both",
				Doc: "where the mechanism applies in the utility cell at the ε found"},
			{Name: "lo", Type: Float, Min: Excl(0), Default: 0.01, Doc: "lower end of the ε searched"},
			{Name: "hi", Type: Float, Min: Excl(0), Default: 10000.0, Doc: "upper end of the ε searched"},
			{Name: "tolerance", Type: Float, Min: Excl(0), Default: 0.05, Doc: "stop when the recovery is within this share of the target"},
			{Name: "probes", Type: Int, Min: Incl(1), Default: 30, Doc: "the most ε probed"},
			{Name: "match_on", Type: String, Enum: []string{"cheap", "strongest"}, DefaultText: "cheap",
				Doc: "the attacker the search matches: cheap, the stronger of copying and the context-free attacker (the tagger is trained at the ε found only, and flagged where it beats them); strongest, the strongest of copying, the context-free attacker and the tagger, the whole attack run at every probed ε (a tagger trained per probe: many times slower)"},
		}},
}

// measures are computed beside a utility cell's numbers when its config
// asks (config key privacy: the one descriptor of this kind).
var measures = []Descriptor{
	{Kind: Measure, Name: "privacy", Doc: "opt-in privacy measures of each split a utility cell privatizes, over the split's word types with a vector: mean N_w and S_w (plausible deniability) and the Bayes adversary's token recovery 1 − E_M under the split's word frequencies; each word type costs draws lookups (docs/analyses.md)",
		Params: []Param{
			{Name: "measures", Type: Strings, MinLen: 1, Enum: []string{"deniability", "recovery"}, Default: []string{"deniability", "recovery"},
				Doc: "deniability: mean N_w and S_w as shares of the draws; recovery: the adversary's chance of naming the original word, 1 − E_M"},
			{Name: "top", Type: Int, Min: Incl(0), Default: 1000,
				Doc: "the split's N most frequent word types with a vector (0: all; the cost grows with it)"},
			{Name: "draws", Type: Int, Min: Incl(1), Default: 100,
				Doc: "draws per word type where the output distribution is not known exactly"},
			{Name: "exact", Type: Bool, Default: true,
				Doc: "use the output distribution where it is known (SanText, CusText) instead of drawing"},
		}},
}

// auditSample is wordSample with fewer words: an audit compares every
// ordered pair.
func auditSample() []Param {
	ps := wordSample()
	for i := range ps {
		if ps[i].Name == "words" {
			ps[i].Default = 20
			ps[i].Doc = "words sampled (by the seed), without replacement; the audit compares every ordered pair"
		}
	}
	return ps
}

// wordSample are the parameters of an analysis over a sample of words.
func wordSample() []Param {
	return []Param{
		{Name: "from", Type: String, Enum: []string{"embedding", "dataset", "list"}, Default: "embedding", Dataset: []string{"dataset"},
			Doc: "where words are sampled: the candidates, the dataset's vocabulary (words with a vector), or list"},
		{Name: "words", Type: Int, Min: Incl(1), Default: 100, Doc: "words sampled (by the seed), without replacement"},
		{Name: "top", Type: Int, Min: Incl(0), Default: 0,
			Doc: "sample among the N first candidates (embedding: the file's order, by frequency for GloVe and fastText) or N most frequent dataset words (0: all)"},
		{Name: "list", Type: Strings, MinLen: 1, Doc: "the words when from is list"},
	}
}

func table(k Kind) []Descriptor {
	switch k {
	case Mechanism:
		return mechanisms
	case Model:
		return models
	case Analysis:
		return analyses
	case Stage:
		return stages
	case Measure:
		return measures
	}
	return nil
}

// Lookup returns the descriptor of the named mechanism, model or analysis.
func Lookup(k Kind, name string) (*Descriptor, error) {
	t := table(k)
	for i := range t {
		if t[i].Name == name {
			return &t[i], nil
		}
	}
	return nil, fmt.Errorf("unknown %s %q%s (known: %s)", k, name, near.DidYouMean(name, Names(k)), strings.Join(Names(k), ", "))
}

// Drawing is the descriptor of the analysis or stage named a, which
// names the statistics its results carry and its figures draw (Figures,
// Tradeoffs, Histograms, ByRank); an empty one for a name neither kind
// knows.
func Drawing(a string) *Descriptor {
	for _, k := range []Kind{Analysis, Stage} {
		if d, err := Lookup(k, a); err == nil {
			return d
		}
	}
	return &Descriptor{}
}

// Resolve looks up the named descriptor of kind k, checks ε where the kind
// takes one, and resolves the raw parameters: what a constructor does
// before it builds anything.
func Resolve(k Kind, name string, eps float64, raw map[string]any) (*Descriptor, Values, error) {
	d, err := Lookup(k, name)
	if err != nil {
		return nil, nil, err
	}
	if d.Epsilon {
		if err := CheckEpsilon(name, eps); err != nil {
			return nil, nil, err
		}
	}
	v, err := d.Resolve(raw)
	if err != nil {
		return nil, nil, err
	}
	return d, v, nil
}

// Names lists the names of a kind, sorted.
func Names(k Kind) []string {
	var n []string
	for _, d := range table(k) {
		n = append(n, d.Name)
	}
	slices.Sort(n)
	return n
}

// All returns the descriptors of a kind in their documented order. The
// result is a copy: descriptors are not to be changed at run time.
func All(k Kind) []Descriptor { return slices.Clone(table(k)) }
