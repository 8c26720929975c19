package datasets

import (
	"maps"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Tokenizer turns a text into words. The zero value does nothing but split
// on white space; DefaultTokenizer matches GloVe-style preprocessing and
// exactly the tokenization of the fastText vectors in the shared data
// folder (embeddings/prepare_corpus.py there), so that corpus words and
// embedding words meet.
type Tokenizer struct {
	Lower     bool // lowercase (Unicode)
	Quotes    bool // curly apostrophes (’) made straight
	StripHTML bool // remove <br /> and <br/> line breaks (IMDb)
	// Web drops URLs (scheme://… and www.… up to the next space) and
	// decodes the HTML entities &amp; &lt; &gt; &quot; &#39; &apos;
	// &nbsp; (tweets): without it a URL becomes a run of junk tokens
	// ("http", ":", "/", "t", ".", "co", "/", "x7qz…") that pass through
	// unprivatized as out-of-vocabulary words.
	Web         bool
	Punctuation bool // every character that is not a letter-or-digit run or space is its own token
	Clitics     bool // split n't 's 're 've 'll 'd 'm off as GloVe/PTB do ("didn't" → "did n't"; needs Punctuation)
	MaxTokens   int  // keep at most this many tokens; 0 keeps all
}

// DefaultTokenizer is GloVe-style: lowercase, HTML breaks removed, curly
// apostrophes made straight, tokens are runs of [a-z0-9], clitics split
// off, any other non-space character a token of its own.
func DefaultTokenizer() Tokenizer {
	return Tokenizer{Lower: true, Quotes: true, StripHTML: true, Web: true, Punctuation: true, Clitics: true}
}

// tokenizers are the tokenizers a config names (its tokenizer key).
var tokenizers = map[string]Tokenizer{
	// GloVe-style, lowercased: the shared fastText vectors, GloVe 6B.
	"default": DefaultTokenizer(),
	// The same rules keeping case, for cased vectors (GloVe 840B, fastText
	// crawl): "Paris" stays "Paris".
	"cased": {Quotes: true, StripHTML: true, Web: true, Punctuation: true, Clitics: true},
	// Split on white space only, nothing else.
	"whitespace": {},
}

// TokenizerNamed returns the tokenizer a config names: default, cased or
// whitespace.
func TokenizerNamed(name string) (Tokenizer, bool) {
	t, ok := tokenizers[name]
	return t, ok
}

// TokenizerNames lists the names TokenizerNamed knows, sorted.
func TokenizerNames() []string { return slices.Sorted(maps.Keys(tokenizers)) }

// Tokens returns the tokens of s.
func (t Tokenizer) Tokens(s string) []string {
	return t.Append(nil, s)
}

// Append appends the tokens of s to dst.
func (t Tokenizer) Append(dst []string, s string) []string {
	if t.StripHTML {
		s = strings.ReplaceAll(s, "<br />", " ")
		s = strings.ReplaceAll(s, "<br/>", " ")
	}
	if t.Web {
		s = webText(s)
	}
	if t.Quotes {
		s = strings.ReplaceAll(s, "’", "'")
	}
	if t.Lower {
		s = strings.ToLower(s)
	}
	start := len(dst)
	if !t.Punctuation {
		for _, f := range strings.FieldsFunc(s, isSpace) {
			if t.full(dst, start) {
				break
			}
			dst = append(dst, f)
		}
		return dst
	}
	for i := 0; i < len(s) && !t.full(dst, start); {
		c := s[i]
		switch {
		case t.Clitics && strings.HasPrefix(s[i:], "n't"):
			dst = append(dst, "n't")
			i += 3
		case t.Clitics && c == '\'' && cliticAt(s, i) > 0:
			n := cliticAt(s, i)
			dst = append(dst, s[i:i+n])
			i += n
		case isWordByte(c):
			j := i + 1
			for j < len(s) && isWordByte(s[j]) {
				j++
			}
			// [a-z0-9]+(?=n't): a run ending in n followed by 't
			// gives up its n to the clitic.
			if t.Clitics && j-i >= 2 && s[j-1] == 'n' && strings.HasPrefix(s[j:], "'t") {
				j--
			}
			dst = append(dst, s[i:j])
			i = j
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			if !isSpace(r) {
				dst = append(dst, s[i:i+n])
			}
			i += n
		}
	}
	return dst
}

func (t Tokenizer) full(dst []string, start int) bool {
	return t.MaxTokens > 0 && len(dst)-start >= t.MaxTokens
}

// isWordByte is the [a-z0-9] of the reference tokenizer. Uppercase
// letters count only when the tokenizer does not lowercase.
func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c >= 'A' && c <= 'Z'
}

// cliticAt returns the length of a clitic 's 're 've 'll 'd 'm starting at
// s[i] and followed by a word boundary, or 0.
func cliticAt(s string, i int) int {
	for _, c := range [...]string{"'s", "'re", "'ve", "'ll", "'d", "'m"} {
		if strings.HasPrefix(s[i:], c) {
			end := i + len(c)
			if end == len(s) {
				return len(c)
			}
			r, _ := utf8.DecodeRuneInString(s[end:])
			if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_') {
				return len(c)
			}
		}
	}
	return 0
}

// isSpace is Python's str.isspace, which the reference tokenizer's \s
// follows: Unicode white space plus the ASCII separators 0x1c–0x1f.
func isSpace(r rune) bool {
	return unicode.IsSpace(r) || r >= 0x1c && r <= 0x1f
}

// urlRE matches a URL: a scheme and :// or a www. host, up to white space.
var urlRE = regexp.MustCompile(`(?i)\b(?:[a-z][a-z0-9+.-]*://|www\.)\S+`)

var entities = strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">", "&quot;", `"`, "&#39;", "'", "&apos;", "'", "&nbsp;", " ")

// webText drops URLs and decodes the common HTML entities (see
// Tokenizer.Web).
func webText(s string) string {
	if strings.Contains(s, "&") {
		s = entities.Replace(s)
	}
	if strings.Contains(s, "://") || strings.Contains(strings.ToLower(s), "www.") {
		s = urlRE.ReplaceAllString(s, " ")
	}
	return s
}
