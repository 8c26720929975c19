// Package catalog owns the list of public artifacts xp knows (corpora,
// word vectors and pretrained checkpoints), where each lives under the data root, where it is
// published and how to check it; and fetching them: download with resume
// and checksum verification, or copy from a mirror folder for clusters
// with a shared dataset folder and machines without internet.
package catalog

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"
)

// Artifact is one thing that can be fetched into the data root.
type Artifact struct {
	Name  string
	Kind  string // "dataset", "embedding" or "checkpoint"
	Title string
	Files []File
	// Unpack extracts the (single) file, a zip or tar.gz, into Dir after
	// download;
	// StripPrefix drops a leading folder of the members (SST-2.zip keeps
	// its files under SST-2/).
	Unpack      bool
	Dir         string
	StripPrefix string
	// Dataset is the datasets name this artifact provides, if any: a
	// mirror holding that dataset in any layout the loader reads counts.
	Dataset string
	// Layout are the files of the extracted layout (what Unpack makes of
	// the published archive) with their sha256: a copy from a mirror's
	// extracted layout is verified against them.
	Layout []File
	Note   string
}

// All returns every artifact in the catalog.
func All() []Artifact {
	return []Artifact{
		{Name: "imdb", Kind: "dataset", Title: "IMDb Large Movie Review Dataset v1.0",
			Files: []File{{URL: "https://ai.stanford.edu/~amaas/data/sentiment/aclImdb_v1.tar.gz", Path: "imdb/aclImdb_v1.tar.gz", Sum: "md5:7c2ac02c03563afcf9b574c7e56c153a"}}, Dataset: "imdb",
			Note: "read straight from the .tar.gz; no extraction needed"},
		{Name: "sst2", Kind: "dataset", Title: "GLUE SST-2",
			Files: []File{{URL: "https://dl.fbaipublicfiles.com/glue/data/SST-2.zip", Path: "sst2/SST-2.zip", Sum: "md5:9f81648d4199384278b86e315dac217c"}}, Unpack: true, Dir: "sst2", StripPrefix: "SST-2/", Dataset: "sst2",
			Layout: []File{
				{Path: "sst2/train.tsv", Sum: "sha256:48eac26399f8456935f81dd9e3a745c1430adb6c62e233ccfe22db4a0d15d1d1"},
				{Path: "sst2/dev.tsv", Sum: "sha256:54a9c12c77e402fc14d6a66a506f24d999f596b0176eb777c972cccc2f9cc4b0"},
				{Path: "sst2/test.tsv", Sum: "sha256:69a938605609b3e6663b4487918fe1565eb293734e6e520d0366d1d412fd2a13"},
			}},
		{Name: "qnli", Kind: "dataset", Title: "GLUE QNLI (v2)",
			Files: []File{{URL: "https://dl.fbaipublicfiles.com/glue/data/QNLIv2.zip", Path: "qnli/QNLIv2.zip", Sum: "md5:b4efd6554440de1712e9b54e14760e82"}}, Unpack: true, Dir: "qnli", StripPrefix: "QNLI/", Dataset: "qnli",
			Layout: []File{
				{Path: "qnli/train.tsv", Sum: "sha256:3bb7026735a0d4cd439dc1ca6ea162e0c1cc8f962f52df9cc50ee8f8278e0c0e"},
				{Path: "qnli/dev.tsv", Sum: "sha256:ac19409dcb04631eaaa094bdebdcf621086bc352503dfb6a1a648b614986f4fd"},
				{Path: "qnli/test.tsv", Sum: "sha256:6d856264e292fa7a7bc7b8e182efa1454ffd9532733c12ad813017dd5b377a5a"},
			}},
		{Name: "twitter", Kind: "dataset", Title: "NLP with Disaster Tweets (Kaggle)", Files: []File{{Path: "twitter/train.csv", Sum: "sha256:61111c6dc31eaffa34d1e1fa62e2395325c9bc3b38bba1941a5f1ed9b3fa60df"}}, Dataset: "twitter",
			Layout: []File{
				{Path: "twitter/train.csv", Sum: "sha256:61111c6dc31eaffa34d1e1fa62e2395325c9bc3b38bba1941a5f1ed9b3fa60df"},
				{Path: "twitter/test.csv", Sum: "sha256:33375dc852696331c5ad30d078ea4d20e357b74052be6225fecc2a2b0f468bd2"},
			},
			Note: "no public URL: Kaggle requires a login (`kaggle competitions download -c nlp-getting-started`); unzip into twitter/ or use --mirror"},
		{Name: "opinion", Kind: "dataset", Title: "Hu & Liu opinion lexicon (product-review opinion words)",
			Files: []File{
				{URL: lexiconURL + "negative-words.txt", Path: "opinion_lexicon/negative-words.txt", Sum: "sha256:3ea4023739aa62bef92b6d1b4c2310735b1e7826f8a615fba6c3a83a36c1ee26"},
				{URL: lexiconURL + "positive-words.txt", Path: "opinion_lexicon/positive-words.txt", Sum: "sha256:9f643e85bcd7eb32e680f05df3d87fdd3277d6626122b3efec94f3ee3790b596"},
			},
			Dataset: "opinion",
			Note:    "the publisher's copy is a .rar (cs.uic.edu/~liub/FBS); these are byte-identical copies of its members (2011)"},
		{Name: "enron", Kind: "dataset", Title: "CMU Enron email (May 2015 release)",
			Files:  []File{{URL: "https://www.cs.cmu.edu/~enron/enron_mail_20150507.tar.gz", Path: "enron/enron_mail_20150507.tar.gz"}},
			Unpack: true, Dir: "enron", Dataset: "enron", Note: "1.7 GB unpacked into enron/maildir; no published checksum"},
		{Name: "glove.6B", Kind: "embedding", Title: "GloVe 6B (Wikipedia + Gigaword, 400k words, 50–300d)",
			Files: []File{{URL: "https://nlp.stanford.edu/data/glove.6B.zip", Path: "embeddings/glove.6B.zip", Sum: "md5:056ea991adb4740ac6bf1b6d9b50408b"}},
			Note:  "read in place: embeddings/glove.6B.zip#glove.6B.300d.txt"},
		{Name: "glove.840B", Kind: "embedding", Title: "GloVe 840B (Common Crawl, 2.2M words, 300d)",
			Files: []File{{URL: "https://nlp.stanford.edu/data/glove.840B.300d.zip", Path: "embeddings/glove.840B.300d.zip"}}},
		{Name: "fasttext-wiki-news", Kind: "embedding", Title: "fastText wiki-news-300d-1M",
			Files: []File{{URL: "https://dl.fbaipublicfiles.com/fasttext/vectors-english/wiki-news-300d-1M.vec.zip", Path: "embeddings/wiki-news-300d-1M.vec.zip"}}},
		{Name: "fasttext-crawl", Kind: "embedding", Title: "fastText crawl-300d-2M",
			Files: []File{{URL: "https://dl.fbaipublicfiles.com/fasttext/vectors-english/crawl-300d-2M.vec.zip", Path: "embeddings/crawl-300d-2M.vec.zip"}}},
		{Name: "counter-fitted", Kind: "embedding", Title: "counter-fitted vectors (Mrkšić et al. 2016), 300d",
			Files: []File{{URL: "https://github.com/nmrksic/counter-fitting/raw/master/word_vectors/counter-fitted-vectors.txt.zip", Path: "embeddings/counter-fitted-vectors.txt.zip"}}},
		{Name: "fasttext-xpcorpus-300d", Kind: "embedding", Title: "fastText skip-gram 300d trained on the shared corpora (development only)",
			Files: []File{{Path: "embeddings/fasttext-sg-xpcorpus-300d.vec.gz", Sum: "sha256:9071e7a7e97de2dd45ab069e91a36fa1f7ff668151e7770bcf72326d50b3617a"}},
			Note:  "made for xp's shared data folder, not published: --mirror only; not independent of the corpora"},
		{Name: "fasttext-xpcorpus-50d", Kind: "embedding", Title: "fastText skip-gram 50d trained on the shared corpora (development only)",
			Files: []File{{Path: "embeddings/fasttext-sg-xpcorpus-50d.vec.gz", Sum: "sha256:4dd878f3abb8d3bd86aadf8a9e4cc6c62e77b2eedc6cfa2dfa89d320b51234f7"}},
			Note:  "--mirror only"},
		// A pretrained checkpoint is the user's to fetch, never xp's at
		// run time: its folder is where the CusText configs look for it.
		{Name: "bert-base-uncased", Kind: "checkpoint", Title: "BERT base uncased (Devlin et al. 2019), the Hugging Face hub's save_pretrained files",
			Files: []File{
				{URL: hfHub + "config.json", Path: "checkpoints/bert-base-uncased/config.json"},
				{URL: hfHub + "tokenizer_config.json", Path: "checkpoints/bert-base-uncased/tokenizer_config.json"},
				{URL: hfHub + "vocab.txt", Path: "checkpoints/bert-base-uncased/vocab.txt"},
				{URL: hfHub + "model.safetensors", Path: "checkpoints/bert-base-uncased/model.safetensors"},
			},
			Note: "the hub publishes no checksum xp could pin: the computed sha256 is reported; what the CusText configs fine-tune (docs/models.md)"},
	}
}

// hfHub is the Hugging Face hub's folder of bert-base-uncased's files.
const hfHub = "https://huggingface.co/google-bert/bert-base-uncased/resolve/main/"

// File is one downloadable file of an artifact.
type File struct {
	// URL is the canonical download; "" where none is public (the
	// artifact's note says how to get it).
	URL string
	// Path is where the file is stored, relative to the data root.
	Path string
	// Sum is "md5:HEX" or "sha256:HEX": the publisher's checksum, or
	// (twitter, the extracted GLUE files) the sha256 of the publisher's
	// file as corroborated by independent copies (docs/data.md); "" when
	// there is neither (the computed sha256 is then reported).
	Sum string
}

// lexiconURL is a 2011 copy of the lexicon whose files are byte-identical
// to the publisher's .rar members.
const lexiconURL = "https://raw.githubusercontent.com/jeffreybreen/twitter-sentiment-analysis-tutorial-201107/08a269765a6b185d5f3dd522c876043ba9628715/data/opinion-lexicon-English/"

// Find returns the named artifact.
func Find(name string) (Artifact, error) {
	var names []string
	for _, a := range All() {
		if a.Name == name {
			return a, nil
		}
		names = append(names, a.Name)
	}
	return Artifact{}, fmt.Errorf("unknown artifact %q (known: %s)", name, strings.Join(names, ", "))
}

// CheckpointAt is the catalog's checkpoint whose folder is dir (relative
// to the data root, as a config's model.checkpoint names it).
func CheckpointAt(dir string) (Artifact, bool) {
	dir = path.Clean(filepath.ToSlash(dir))
	for _, a := range All() {
		if a.Kind == "checkpoint" && len(a.Files) > 0 && path.Dir(a.Files[0].Path) == dir {
			return a, true
		}
	}
	return Artifact{}, false
}

// splitSum parses "algo:hex".
func splitSum(sum string) (algo, hex string, err error) {
	algo, hex, ok := strings.Cut(sum, ":")
	if !ok || (algo != "md5" && algo != "sha256") {
		return "", "", fmt.Errorf("checksum %q is not md5:HEX or sha256:HEX", sum)
	}
	return algo, strings.ToLower(hex), nil
}

// Path returns the file's location under root.
func (f File) Local(root string) string { return filepath.Join(root, filepath.FromSlash(f.Path)) }
