#!/usr/bin/env python3
"""Reference ids from the Hugging Face `tokenizers` library for hf_tokenizer_test.cpp.

Usage: make_hf_references.py OUT_DIR [SMOLLM2_VOCAB_JSON] [--only NAME]

Writes OUT_DIR/NAME/tokenizer.json and OUT_DIR/NAME/expected.jsonl for each tokenizer below;
each line of expected.jsonl is one text and the library's ids for it:
  plain:   encode(text, add_special_tokens=False), special tokens typed as text staying text
           (encode_special_tokens = True: what user text must give)
  wrapped: the same with add_special_tokens=True (the post-processor's BOS / EOS)
  control: encode(text, add_special_tokens=False) with special tokens recognised (template
           control text)
  decoded: decode(plain, skip_special_tokens=True)
and OUT_DIR/NAME/decoded.jsonl holds random id sequences (byte tokens, special tokens, unk
and pieces that are not whole characters among them) and the library's
decode(ids, skip_special_tokens=True).
Tokenizers:
  smollm2  the byte-level BPE of SmolLM2-135M (vocab and merges dumped from the GGUF by the
           test), its Digits + ByteLevel pre-tokenizer and special tokens (only with the vocab)
  llama3   a Llama-3-style byte-level BPE trained here: NFC, Split on Llama 3's regex (digit
           groups of three, contractions), ignore_merges, <|begin_of_text|> template, and added
           tokens with lstrip / rstrip / single_word / non-special
  sp_bpe   a SentencePiece-style BPE as transformers converts Llama 2 (Prepend + Replace
           normalizer, byte_fallback, fuse_unk, Replace/ByteFallback/Fuse/Strip decoder)
  metaspace  the same model with a Metaspace pre-tokenizer (prepend_scheme first) and decoder
  splits   the llama3 model behind every Split behavior (String and Regex patterns, invert),
           Digits in runs, Punctuation, WhitespaceSplit, and Strip / Lowercase / NFKC / Regex Replace normalizers
Exits 77 when the tokenizers package is missing (the C++ test then skips).
"""
import json
import os
import random
import sys

try:
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers
    from tokenizers import pre_tokenizers, processors, trainers
except ImportError:
    print("make_hf_references: the Python package 'tokenizers' is not installed", file=sys.stderr)
    sys.exit(77)

LLAMA3_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)

SAMPLES = [
    "Hello world! How are you today?",
    "I'm sure they'll say WE'RE done, it's John's and you've DON'T",
    "The year 2024 had 366 days; pi is 3.14159265 and 1,000,000 is a million.",
    "你好，世界！今天天气很好。我们去公园散步吧。",
    "日本語のテキストとカタカナ、ひらがな。",
    "Emoji: 👨‍👩‍👧‍👦 family, 👍🏽 thumbs, 🏳️‍🌈 flag, ❤️ heart",
    "def square(x):\n    return x ** 2\n\nprint(square(12))\n",
    "for (int i = 0; i < n; ++i) { sum += a[i] * b[i]; }",
    "   leading spaces and trailing   ",
    "tabs\tand\t\tnew\nlines\n\n\n  indented",
    "<|im_start|>user\nhi there<|im_end|>\n<|im_start|>assistant\n",
    "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHey<|eot_id|>",
    "<s>[INST] what is this? [/INST]</s>",
    "café naïve Ångström façade résumé e\u0301 A\u030a",
    "Ελληνικά και русский текст, עברית ועربية",
    "mixed123numbers456and789text 0000 12 345 6789",
    "URL: https://example.com/path?query=1&x=y#frag",
    "[[note]] a note, not[[note]]glued, <|rstrip|>   after, before   <|lstrip|>",
    "<|python_tag|>call() <unk> </s> <|endoftext|>",
    "  ",
    "\n",
    "a",
    "",
]

ALPHABET = list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 \n\t.,;:'\"!?()[]{}<>|_-+=*/\\")
ALPHABET += list("éüßçñøå你好世界天气日本語ñ€£¥") + ["👍", "👨\u200d👩", "\u200d", "🏽", "\u0301"]


def texts(seed, n):
    rng = random.Random(seed)
    out = list(SAMPLES)
    while len(out) < n:
        if rng.random() < 0.5:
            parts = [rng.choice(SAMPLES) for _ in range(rng.randint(1, 3))]
            out.append(rng.choice(["", " ", "\n", "  ", "\t"]).join(parts))
        else:
            out.append("".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 40))))
    return out


def corpus():
    rng = random.Random(7)
    lines = []
    for _ in range(400):
        lines.append(" ".join(rng.choice(SAMPLES) for _ in range(2)))
    return lines


def write(out_dir, name, tok, strings):
    folder = os.path.join(out_dir, name)
    os.makedirs(folder, exist_ok=True)
    tok.save(os.path.join(folder, "tokenizer.json"))
    with open(os.path.join(folder, "expected.jsonl"), "w", encoding="utf-8") as f:
        for text in strings:
            tok.encode_special_tokens = True
            plain = tok.encode(text, add_special_tokens=False).ids
            wrapped = tok.encode(text, add_special_tokens=True).ids
            tok.encode_special_tokens = False
            control = tok.encode(text, add_special_tokens=False).ids
            decoded = tok.decode(plain, skip_special_tokens=True)
            row = {"text": text, "plain": plain, "wrapped": wrapped, "control": control,
                   "decoded": decoded}
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    write_decoded(folder, tok)


def write_decoded(folder, tok):
    rng = random.Random(2)
    n = tok.get_vocab_size(with_added_tokens=True)
    byte_ids = [i for t, i in tok.get_vocab().items() if t.startswith("<0x") and len(t) == 6]
    with open(os.path.join(folder, "decoded.jsonl"), "w", encoding="utf-8") as f:
        for _ in range(500):
            ids = [rng.choice(byte_ids) if byte_ids and rng.random() < 0.4 else rng.randrange(n)
                   for _ in range(rng.randint(1, 12))]
            row = {"ids": ids, "text": tok.decode(ids, skip_special_tokens=True)}
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


def smollm2(vocab_path):
    with open(vocab_path, encoding="utf-8") as f:
        dump = json.load(f)
    vocab = {t: i for i, t in enumerate(dump["tokens"])}
    merges = [tuple(m.split(" ", 1)) for m in dump["merges"]]
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges))
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Digits(individual_digits=True),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
    ])
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    control = [t for t, kind in zip(dump["tokens"], dump["token_type"]) if kind == 3]
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in control])
    return tok


def llama3():
    tok = Tokenizer(models.BPE(ignore_merges=True))
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(LLAMA3_PATTERN), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel()
    specials = ["<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>",
                "<|end_header_id|>", "<|eot_id|>"]
    trainer = trainers.BpeTrainer(vocab_size=1500, special_tokens=specials,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train_from_iterator(corpus(), trainer=trainer)
    tok.add_tokens([AddedToken("[[note]]", single_word=True, normalized=True)])
    tok.add_special_tokens([
        AddedToken("<|rstrip|>", special=True, rstrip=True, normalized=False),
        AddedToken("<|lstrip|>", special=True, lstrip=True, normalized=False),
        AddedToken("<|python_tag|>", special=True, normalized=False),
    ])
    bos = tok.token_to_id("<|begin_of_text|>")
    tok.post_processor = processors.Sequence([
        processors.ByteLevel(trim_offsets=False),
        processors.TemplateProcessing(single="<|begin_of_text|> $A",
                                      pair="<|begin_of_text|> $A <|begin_of_text|> $B:1",
                                      special_tokens=[("<|begin_of_text|>", bos)]),
    ])
    return tok


def sp_model():
    """A SentencePiece-style BPE: trained on "▁"-joined text, then given the 256 byte tokens."""
    trainer_tok = Tokenizer(models.BPE(unk_token="<unk>"))
    trainer_tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"),
                                                   normalizers.Replace(" ", "▁")])
    trainer = trainers.BpeTrainer(vocab_size=700, special_tokens=["<unk>", "<s>", "</s>"],
                                  limit_alphabet=120, show_progress=False)
    trainer_tok.train_from_iterator(corpus(), trainer=trainer)
    trained = json.loads(trainer_tok.to_str())["model"]
    vocab = dict(trained["vocab"])
    for b in range(256):
        vocab.setdefault("<0x%02X>" % b, len(vocab))
    merges = [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in trained["merges"]]
    model = models.BPE(vocab=vocab, merges=merges, unk_token="<unk>", byte_fallback=True,
                       fuse_unk=True)
    tok = Tokenizer(model)
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False)
                            for t in ["<unk>", "<s>", "</s>"]])
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A", pair="<s> $A <s> $B:1", special_tokens=[("<s>", vocab["<s>"])])
    return tok


def sp_bpe():
    tok = sp_model()
    tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(),
                                     decoders.Fuse(), decoders.Strip(" ", 1, 0)])
    return tok


def metaspace():
    tok = sp_model()
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first",
                                                 split=False)
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="first", split=False)
    return tok


def splits():
    tok = llama3()
    tok.normalizer = normalizers.Sequence([
        normalizers.Strip(left=True, right=False), normalizers.NFKC(), normalizers.Lowercase(),
        normalizers.Replace(Regex(r"[ \t]{3,}"), "  "),
    ])
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(" ", behavior="merged_with_previous"),
        pre_tokenizers.Split(Regex(r"[,;]"), behavior="removed"),
        pre_tokenizers.Split(Regex(r"[.!?]+"), behavior="merged_with_next"),
        pre_tokenizers.Split(Regex(r"\n"), behavior="contiguous"),
        pre_tokenizers.Split(Regex(r"\p{L}+"), behavior="isolated", invert=True),
        pre_tokenizers.Digits(individual_digits=False),
        pre_tokenizers.Punctuation(behavior="merged_with_previous"),
        pre_tokenizers.WhitespaceSplit(),
        pre_tokenizers.ByteLevel(add_prefix_space=True, use_regex=False),
    ])
    return tok


def main():
    args = sys.argv[1:]
    only = None
    if "--only" in args:
        i = args.index("--only")
        only = args[i + 1] if i + 1 < len(args) else None
        del args[i:i + 2]
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    out_dir = args[0]
    strings = texts(1, 1500)
    makers = {"llama3": llama3, "sp_bpe": sp_bpe, "metaspace": metaspace, "splits": splits}
    if len(args) > 1:
        makers["smollm2"] = lambda: smollm2(args[1])
    if only is not None and only not in makers:
        print(f"make_hf_references: no tokenizer {only!r} (have {sorted(makers)})",
              file=sys.stderr)
        return 2
    for name, make in makers.items():
        if only is None or name == only:
            write(out_dir, name, make(), strings)
    return 0


if __name__ == "__main__":
    sys.exit(main())
