package experiments

import "testing"

// TestKeysStable pins the record keys of a fixed set of configs: a key
// is the address of a finished cell, so a change to a default, a
// descriptor or the key's layout that moves it silently re-runs (and
// silently changes) every study. A deliberate change updates these keys
// and says so in its commit (bumping Version where old records must not
// be read).
func TestKeysStable(t *testing.T) {
	in := Inputs{Data: "d", Embedding: "e"}
	configs := map[string]string{
		"bilstm": `name: k
dataset: {name: sst2}
embedding: {path: e.vec}
mechanisms:
  - {name: laplace, epsilon: [1]}
  - {name: vickrey, epsilon: [5], grid: {t: [0.5]}}
  - {name: mahalanobis, epsilon: [5], grid: {lambda: [0.5]}}
  - {name: santext, epsilon: [2]}
  - {name: santext+, epsilon: [2]}
  - {name: custext, epsilon: [2]}
apply: [none, train, test]
seeds: [1]
`,
		"baseline": `name: k
dataset: {name: sst2}
embedding: {path: e.vec}
model: {kind: baseline}
mechanisms:
  - {name: laplace, epsilon: [1]}
apply: [none, both]
privacy: {}
seeds: [2]
`,
		"analysis": `name: k
dataset: {name: sst2}
embedding: {path: e.vec}
analysis: {kind: plausible-deniability, words: 25, draws: 100}
mechanisms:
  - {name: laplace, epsilon: [1]}
  - {name: santext, epsilon: [1]}
seeds: [1]
`,
	}
	want := map[[2]string]string{}
	for _, w := range []struct{ config, cell, key string }{
		{"analysis", "plausible-deniability: laplace ε=1 seed=1", "8df93155dcf2553cae7c443388e6b6bd5118c2783db10cfa38e6130e68a9e3ae"},
		{"analysis", "plausible-deniability: santext ε=1 seed=1", "18891bb60363dfb835db11cebff3792d7e80200c15659445bc02949b59d258e8"},
		{"baseline", "baseline seed=2", "2e79f4464285ec557d5780572c8158226c3310ed0b67b27d28f50d737f9d250c"},
		{"baseline", "laplace ε=1 both seed=2", "48079502cfd28c607b483329cb7334cb9f93d0a7a55738130c83c345877a1b54"},
		{"bilstm", "baseline seed=1", "7df6a7050c7d004d2dc3ff9b3eaa24b4cba3e8df52fc930983754d8b7c2f8f53"},
		{"bilstm", "custext ε=2 test seed=1", "04e88292955449dc32f87f54ce2cc2c510bd36d4aee69c4b873e3f9dfc75ae4e"},
		{"bilstm", "custext ε=2 train seed=1", "9be894924083dfa58a8492161dc513b66516cefdd0f3b62bfa2110a5837f67b5"},
		{"bilstm", "laplace ε=1 test seed=1", "a1de1efd28a225628fb494fa4767ebb642d51e5c5198a6523c5ae8a2a1a5a516"},
		{"bilstm", "laplace ε=1 train seed=1", "df9c9a3f2216904ea168da52876b187bd34f2182ddd88c05461f6cc643b2dede"},
		{"bilstm", "mahalanobis lambda=0.5 ε=5 test seed=1", "a8200c01660a99dcb8deaf1163521af384fe678a468df082fc9e37e77e27c6f5"},
		{"bilstm", "mahalanobis lambda=0.5 ε=5 train seed=1", "7ded52ca6319dc8ac4f306918162a23f6c18f89a6f4efb985307d3b151ebb01c"},
		{"bilstm", "santext ε=2 test seed=1", "fae3a2a43e59743c690a1a0cb7eed002bfb21871ef1d9e27564de4182309ae7f"},
		{"bilstm", "santext ε=2 train seed=1", "f1861c63b916302b0fe96d87d32f8fc6b95728c2ebe31daaa298dcdfdca555c2"},
		{"bilstm", "santext+ ε=2 test seed=1", "b32b0eaa31df392e795ad9bfb0f8f4fffac53f3515b9695668711031c0666958"},
		{"bilstm", "santext+ ε=2 train seed=1", "02d2b44d6e65e012820f5d04a2b7caa161af6b07333ece1d7b114da8f4e0ab13"},
		{"bilstm", "vickrey t=0.5 ε=5 test seed=1", "495f14818285575fd0b450989df9ea5d7089717a1abf1c8beacd8fae5c424be4"},
		{"bilstm", "vickrey t=0.5 ε=5 train seed=1", "7509033b6bbe46d45eab90f5a572db5ba04986f56404237f79441c315f460e34"},
	} {
		want[[2]string{w.config, w.cell}] = w.key
	}
	seen := 0
	for name, text := range configs {
		c := parse(t, text)
		for _, cell := range c.Cells() {
			k, ok := want[[2]string{name, cell.String()}]
			if !ok {
				t.Errorf("%s: %s: no pinned key (got %s)", name, cell, c.Key(cell, in))
				continue
			}
			seen++
			if got := c.Key(cell, in); got != k {
				t.Errorf("%s: %s: key %s, pinned %s", name, cell, got, k)
			}
		}
	}
	if seen != len(want) {
		t.Errorf("%d of %d pinned cells planned", seen, len(want))
	}
}
