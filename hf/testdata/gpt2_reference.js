// gpt2_reference.js writes gpt2_reference.json: GPT-2's byte-level BPE
// pieces of the texts below, as OpenAI's encoder computes them
// (gpt-3-encoder 1.1.4, a JavaScript port of github.com/openai/gpt-2's
// encoder.py, MIT licence, with GPT-2's encoder.json and vocab.bpe, which
// RoBERTa's tokenizer shares), and the merges the test needs to compute
// them: every merge that was a candidate (an adjacent pair with a rank)
// at some step of some text's merging, in GPT-2's rank order. Computing
// with those merges alone gives the same pieces as with all 50,000: at
// each step the lowest-ranked pair present is among them.
//
// Regenerate (from this folder, with Node and npm):
//
//	npm install --prefix /tmp/gpt2ref gpt-3-encoder@1.1.4
//	NODE_PATH=/tmp/gpt2ref/node_modules node gpt2_reference.js > gpt2_reference.json
//
// Left out: U+0085 and U+FEFF, which JavaScript's \s and the Unicode
// White_Space property (Go's unicode.IsSpace, which xp follows) classify
// differently.
const fs = require('fs')
const path = require('path')
const { encode } = require('gpt-3-encoder')

const dir = path.dirname(require.resolve('gpt-3-encoder'))
const encoder = JSON.parse(fs.readFileSync(path.join(dir, 'encoder.json')))
const decoder = {}
for (const [k, v] of Object.entries(encoder)) decoder[v] = k
const lines = fs.readFileSync(path.join(dir, 'vocab.bpe'), 'utf-8').split('\n')
const merges = lines.slice(1, lines.length - 1).map(l => l.split(' '))
const rank = new Map(merges.map((m, i) => [m[0] + '\u0000' + m[1], i]))

const texts = [
  "Hello world",
  "The film is a charming, funny and moving story about growing up.",
  "It's not the worst movie I've seen, but it isn't good either.",
  "I'm sure you're right; they've said we'll go, and she'd agree.",
  "DON'T SHOUT, it'S fine",
  "'s at the start, and rock 'n' roll at eight o'clock",
  "y'all'd've",
  "a  b",
  "a   b",
  "a\tb",
  "a \tb",
  "a\n\nb",
  "  leading spaces",
  "trailing spaces  ",
  "line one\r\nline two\n",
  "tab\t\tthen text",
  "no\u00a0break and\u00a0\u00a0two",
  "ideographic\u3000space",
  "line\u2028separator",
  "123 4567 3.14 1,000,000 2nd",
  "Ⅻ and Ⅱ are numbers too",
  "٣٤ and ٥ in Arabic-Indic digits",
  "x² and ½ and ³⁄₄",
  "café naïve résumé Straße",
  "Привет, мир!",
  "東京タワー と 中文字",
  "한국어 텍스트",
  "עברית ועוד",
  "العربية جميلة",
  "e\u0301 combining accent",
  "ﬁne ligature",
  "👍🏽 great 😂😂",
  "family 👨‍👩‍👧 emoji",
  "❤️ love",
  "!!!??? -- ... (a) \"quoted\"",
  "<br /><br />This was awful.<br />",
  "http://example.com/a?b=c&d=e",
  "e-mail me at someone@example.org",
  "#hashtag @user RT: wow",
  "$5.99 for 50% off",
  "aaaaaaa",
  "hahahahaha lolololol",
  "zzzzzzzzzzzzzzzz",
  "!!!!!!!!!!!!",
  "antidisestablishmentarianism",
  "pneumonoultramicroscopicsilicovolcanoconiosis",
  "control\u0000char and \u001c and \u007f",
  "mixedCASEwords and CamelCase and snake_case",
  "the the the the",
  " ",
  "",
  "\n",
  "Ġ is a letter here, and so is Ċ",
  "what's what; it's it's",
  "spaces before punctuation  !",
  "a  'quoted' word",
  "numbers12345letters67890",
  "2020-11-28T23:30:55Z",
  "C++ and C# and F#",
  "😀😃😄😁😆😅🤣",
  "A fascinating, if overlong, study of grief.",
  "Worst. Movie. Ever.",
  "10/10 would watch again!!!",
]

function bpe(word, cands) {
  let parts = Array.from(word)
  while (parts.length > 1) {
    let best = -1, at = null
    for (let i = 0; i + 1 < parts.length; i++) {
      const r = rank.get(parts[i] + '\u0000' + parts[i + 1])
      if (r === undefined) continue
      cands.add(r)
      if (best < 0 || r < best) { best = r; at = [parts[i], parts[i + 1]] }
    }
    if (best < 0) break
    const merged = []
    for (let i = 0; i < parts.length; i++) {
      if (i + 1 < parts.length && parts[i] === at[0] && parts[i + 1] === at[1]) {
        merged.push(at[0] + at[1]); i++
      } else merged.push(parts[i])
    }
    parts = merged
  }
  return parts
}

const pat = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu
const byteChar = (() => {
  const bs = []
  for (let c = 0; c < 256; c++) {
    if ((c >= 33 && c <= 126) || (c >= 161 && c <= 172) || (c >= 174 && c <= 255)) bs.push(c)
  }
  const m = {}
  let n = 0
  for (let c = 0; c < 256; c++) m[c] = bs.includes(c) ? String.fromCharCode(c) : String.fromCharCode(256 + n++)
  return m
})()

const cands = new Set()
const cases = texts.map(text => {
  const pieces = encode(text).map(id => decoder[id])
  const mine = []
  for (const m of text.matchAll(pat)) {
    const word = Array.from(new TextEncoder().encode(m[0])).map(b => byteChar[b]).join('')
    mine.push(...bpe(word, cands))
  }
  if (mine.join('\u0000') !== pieces.join('\u0000')) {
    throw new Error(`the merge walk disagrees with the encoder on ${JSON.stringify(text)}: ${mine} / ${pieces}`)
  }
  return { text, pieces }
})
const used = [...cands].sort((a, b) => a - b).map(r => merges[r])
process.stdout.write(JSON.stringify({
  source: 'gpt-3-encoder 1.1.4 (GPT-2 encoder.json and vocab.bpe); hf/testdata/gpt2_reference.js',
  merges: used,
  cases,
}, null, 1) + '\n')
