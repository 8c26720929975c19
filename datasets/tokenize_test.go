package datasets

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestDefaultTokenizer(t *testing.T) {
	tok := DefaultTokenizer()
	cases := []struct{ in, want string }{
		// The examples of the shared embeddings' PROVENANCE.md.
		{"didn't", "did n't"},
		{"can't", "ca n't"},
		{"He's here", "he 's here"},
		{"I'm sure they'll've", "i 'm sure they 'll 've"},
		{"Great movie!<br /><br />Really.", "great movie ! really ."},
		{"It’s fine", "it 's fine"},
		{"n't", "n't"},
		{"don't won't", "do n't wo n't"},
		{"'sup", "' sup"},                  // 's followed by a letter is no clitic
		{"rock'n'roll", "rock ' n ' roll"}, // one-letter run keeps its n
		{"13,000 people #wildfires", "13 , 000 people # wildfires"},
		{"café naïve", "caf é na ï ve"}, // non-ASCII letters are tokens of their own
		{"  tabs\tand\nlines  ", "tabs and lines"},
		{"x\u00a0y", "x y"},
		{"", ""},
	}
	for _, c := range cases {
		got := strings.Join(tok.Tokens(c.in), " ")
		if got != c.want {
			t.Errorf("Tokens(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestTokenizerOptions(t *testing.T) {
	cases := []struct {
		tok  Tokenizer
		in   string
		want []string
	}{
		{Tokenizer{}, "Hello, World<br />", []string{"Hello,", "World<br", "/>"}},
		{Tokenizer{Lower: true, StripHTML: true}, "Hello, World<br />", []string{"hello,", "world"}},
		{Tokenizer{Punctuation: true}, "Didn't", []string{"Didn", "'", "t"}},
		{Tokenizer{Punctuation: true, Clitics: true}, "Didn't", []string{"Did", "n't"}},
		{Tokenizer{Lower: true, Punctuation: true, MaxTokens: 2}, "a b c", []string{"a", "b"}},
	}
	for _, c := range cases {
		if got := c.tok.Tokens(c.in); !reflect.DeepEqual(got, c.want) && !(len(got) == 0 && len(c.want) == 0) {
			t.Errorf("%+v.Tokens(%q) = %q, want %q", c.tok, c.in, got, c.want)
		}
	}
}

func ExampleTokenizer() {
	tok := DefaultTokenizer()
	fmt.Println(strings.Join(tok.Tokens("I didn't like it.<br />It's dull!"), " | "))
	// Output: i | did | n't | like | it | . | it | 's | dull | !
}

// TestNamedTokenizers: the names a config gives; cased keeps case under
// the default's rules (for GloVe 840B, fastText crawl).
func TestNamedTokenizers(t *testing.T) {
	for name, want := range map[string][]string{
		"default":    {"paris", "did", "n't", "say", "'", "hi", "'", "."},
		"cased":      {"Paris", "did", "n't", "say", "'", "Hi", "'", "."},
		"whitespace": {"Paris", "didn’t", "say", "'Hi'."},
	} {
		tok, ok := TokenizerNamed(name)
		if got := tok.Tokens("Paris didn’t say 'Hi'."); !ok || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
	if _, ok := TokenizerNamed("bert"); ok || !slices.Equal(TokenizerNames(), []string{"cased", "default", "whitespace"}) {
		t.Errorf("names: %v", TokenizerNames())
	}
}

// TestWebText: URLs are dropped and HTML entities decoded before
// tokenizing (a tweet's t.co link became eight junk tokens).
func TestWebText(t *testing.T) {
	tok := DefaultTokenizer()
	for in, want := range map[string]string{
		"Fire near La Ronge http://t.co/x7QzE9 #fire": "fire near la ronge # fire",
		"see www.example.com/a?b=1, &amp; more &lt;3": "see & more < 3",
		"HTTPS://X.Y/z!": "",
		"no url: a://b is one too; ftp://h/x, then words": "no url : is one too ; then words",
		"&quot;quoted&quot; &#39;s":                       `" quoted " 's`,
	} {
		if got := strings.Join(tok.Tokens(in), " "); got != want {
			t.Errorf("%q → %q, want %q", in, got, want)
		}
	}
	if got := (Tokenizer{Punctuation: true}).Tokens("http://t.co/x"); len(got) < 5 {
		t.Errorf("without Web a URL is kept as text: %q", got)
	}
}
