// tokenizers_reference.js writes tokenizers_reference.json: two
// tokenizer.json files laid out as Hugging Face's `tokenizers` saves
// bert-base-uncased's and roberta-base's (a WordPiece model behind
// BertNormalizer and BertPreTokenizer with BERT's template post-processor;
// a byte-level BPE model behind the ByteLevel pre-tokenizer with
// RobertaProcessing), and what Hugging Face's own JavaScript
// implementation of those files, Tokenizers.js (@huggingface/tokenizers
// 0.2.0, Apache-2.0, pure JavaScript), encodes texts and pairs of texts
// into: pieces, ids and token types, special pieces included.
//
// The WordPiece vocabulary is written here: the specials, every character
// of the normalised texts but a few (so that [UNK] occurs), each also as
// a ## continuation, and whole words and word pieces that make the greedy
// longest match choose. The BPE vocabulary is RoBERTa's layout (<s>,
// <pad>, </s>, <unk>, the 256 byte characters, the merges' products,
// <mask> last) over the GPT-2 merges of gpt2_reference.json, whose texts
// it encodes too.
//
// Regenerate (from this folder, with Node and npm):
//
//	npm install --prefix /tmp/hftok @huggingface/tokenizers@0.2.0
//	NODE_PATH=/tmp/hftok/node_modules node tokenizers_reference.js > tokenizers_reference.json
//
// Left out, as TestTokenizerJSONAgainstTokenizersJS says: texts that
// spell a special piece ("[SEP]", "</s>"), which Hugging Face turns into
// that piece and xp keeps as text; and a pair whose second text is empty,
// which Tokenizers.js encodes as one text (`text_pair || null`) where the
// Rust crate's post-processors frame an empty second segment.
const fs = require('fs')
const path = require('path')
const { Tokenizer } = require('@huggingface/tokenizers')

const gpt2 = JSON.parse(fs.readFileSync(path.join(__dirname, 'gpt2_reference.json'), 'utf-8'))

// --- BERT (uncased) ---------------------------------------------------

const bertTexts = [
  'Hello, World!',
  'The film is a charming, funny and moving story.',
  'unaffable unbelievably playing played replaying',
  'Café naïve RÉSUMÉ Straße ÅNGSTRÖM',
  'accents: ñ ü ç å ø œ',
  'e\u0301 combining, and a\u0308 too',
  '東京タワー と 中文字です',
  '한국어 텍스트',
  'Greek Ελληνικά and Cyrillic Привет',
  'tab\tand\nnewline\r\nand  two spaces',
  'no\u00a0break and\u3000ideographic space',
  'control\u0000char\u0007bell and \u007f delete',
  'zero\u200bwidth and soft\u00adhyphen',
  "don't stop-believing... ok?!",
  '$5.99 for 50% off, 10/10 #great @user',
  'x² and ½ and ①',
  'emoji 😀 and 👍🏽 here',
  '  leading and trailing  ',
  '',
  ' ',
  'a'.repeat(100),
  'a'.repeat(101),
  'b'.repeat(100) + ' short',
  'the ' + 'c'.repeat(99) + 'é',
  'ＦＵＬＬＷＩＤＴＨ letters',
  'ﬁne ligature',
  'İstanbul and DİYARBAKIR',
  '<br /><br />This was awful.<br />',
]

const bertPairs = [
  ['How old are you?', 'I am six.'],
  ['', 'only the second'],
  ['Café?', '東京!'],
  ['Straße, naïve', 'ＦＵＬＬ width'],
]

const bertWords = [
  'the', 'film', 'is', 'a', 'charming', 'funny', 'and', 'moving', 'story', 'hello', 'world',
  'un', '##aff', '##able', '##believ', '##ably', 'play', '##ing', '##ed', 're', '##play', 'replay',
  'cafe', 'naive', 'resume', 'stra', '##sse', 'angstrom', 'accents', 'combining', 'too',
  'tab', 'new', '##line', 'two', 'spaces', 'no', 'break', 'ideographic', 'space', 'control',
  'char', 'bell', 'delete', 'zero', '##width', 'width', 'soft', '##hyphen', 'don', 'stop',
  'believing', 'believ', 'ok', 'for', 'off', 'great', 'user', 'emoji', 'here', 'leading',
  'trailing', 'short', 'letters', 'fine', 'lig', '##ature', 'istanbul', 'how', 'old', 'are',
  'you', 'am', 'six', 'only', 'first', 'second', 'br', 'this', 'was', 'awful', 'greek', 'cyrillic',
  '10', '##0', '99', '50', '5', 'text', 'fu', '##nny', 'mov', '##ing',
]

// characters the vocabulary leaves out: their words become [UNK]
const bertMissing = new Set(['😀', '👍', '🏽', '①', 'ø', 'œ', 'ß'])

function bertVocab() {
  const vocab = {}
  const add = p => { if (!(p in vocab)) vocab[p] = Object.keys(vocab).length }
  for (const p of ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]']) add(p)
  for (const w of bertWords) add(w)
  const chars = new Set()
  for (const t of bertTexts.concat(bertPairs.flat())) {
    for (const c of t.toLowerCase().normalize('NFD').replace(/\p{Mn}/gu, '')) chars.add(c)
  }
  for (const c of [...chars].sort()) {
    if (/\s/u.test(c) || bertMissing.has(c) || c.codePointAt(0) < 32 || c === '\u007f') continue
    add(c)
    add('##' + c)
  }
  return vocab
}

function bertTokenizer() {
  const vocab = bertVocab()
  const added = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'].map(c => ({
    id: vocab[c], content: c, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true,
  }))
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: added,
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } }],
      pair: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } },
        { Sequence: { id: 'B', type_id: 1 } }, { SpecialToken: { id: '[SEP]', type_id: 1 } }],
      special_tokens: {
        '[CLS]': { id: '[CLS]', ids: [vocab['[CLS]']], tokens: ['[CLS]'] },
        '[SEP]': { id: '[SEP]', ids: [vocab['[SEP]']], tokens: ['[SEP]'] },
      },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab },
  }
}

// --- RoBERTa ------------------------------------------------------------

function byteAlphabet() {
  const out = []
  let n = 0
  for (let c = 0; c < 256; c++) {
    const printable = (c >= 33 && c <= 126) || (c >= 161 && c <= 172) || (c >= 174 && c <= 255)
    out.push(printable ? String.fromCharCode(c) : String.fromCharCode(256 + n++))
  }
  return out
}

function robertaTokenizer() {
  const vocab = {}
  const add = p => { if (!(p in vocab)) vocab[p] = Object.keys(vocab).length }
  for (const p of ['<s>', '<pad>', '</s>', '<unk>']) add(p)
  for (const p of byteAlphabet()) add(p)
  for (const [a, b] of gpt2.merges) add(a + b)
  add('<mask>')
  const added = ['<s>', '<pad>', '</s>', '<unk>', '<mask>'].map(c => ({
    id: vocab[c], content: c, single_word: false, lstrip: c === '<mask>', rstrip: false, normalized: false, special: true,
  }))
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: added,
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: { type: 'RobertaProcessing', sep: ['</s>', vocab['</s>']], cls: ['<s>', vocab['<s>']], trim_offsets: true, add_prefix_space: false },
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: {
      type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: '', end_of_word_suffix: '',
      fuse_unk: false, byte_fallback: false, ignore_merges: false, vocab, merges: gpt2.merges.map(m => m.join(' ')),
    },
  }
}

const robertaPairs = [
  ['How old are you?', 'I am six.'],
  ['', 'only the second'],
  ["It's not the worst movie I've seen", 'but it isn\'t good either.'],
]

// --- encode ---------------------------------------------------------------

function run(tj, config, texts, pairs) {
  const tok = new Tokenizer(tj, config)
  const cases = []
  for (const text of texts) {
    const e = tok.encode(text, { return_token_type_ids: true })
    cases.push({ text, tokens: e.tokens, ids: e.ids, types: e.token_type_ids })
  }
  for (const [a, b] of pairs) {
    const e = tok.encode(a, { text_pair: b, return_token_type_ids: true })
    cases.push({ text: a, pair: b, tokens: e.tokens, ids: e.ids, types: e.token_type_ids })
  }
  return cases
}

const bert = bertTokenizer()
const roberta = robertaTokenizer()
const out = {
  source: '@huggingface/tokenizers 0.2.0 (Tokenizers.js), Tokenizer.encode with return_token_type_ids',
  bert: { tokenizer: bert, cases: run(bert, { do_lower_case: true, model_max_length: 512 }, bertTexts, bertPairs) },
  roberta: { tokenizer: roberta, cases: run(roberta, { model_max_length: 512 }, gpt2.cases.map(c => c.text), robertaPairs) },
}
process.stdout.write(JSON.stringify(out, null, 0) + '\n')
