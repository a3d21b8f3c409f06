"""embedder: the direct loader reproduces model2vec, works offline, fails clearly."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import run_script

from ncx.embedder import load_embedder, resolve_model_dir
from ncx.errors import ModelUnavailable

TEXTS = [
    "install the package with pip",
    "token refresh uses a cookie",
    "zzzz qqqq",  # only unknown words: a zero vector, not an error
    "",
    "Git commit hooks run before every commit " * 50,
]


def test_matches_model2vec_encode(tiny_model: Path) -> None:
    from model2vec import StaticModel

    ours = load_embedder(str(tiny_model)).embed(TEXTS)
    theirs = StaticModel.from_pretrained(str(tiny_model)).encode(TEXTS)
    assert ours.shape == theirs.shape and ours.dtype == np.float32
    np.testing.assert_allclose(ours, theirs, atol=1e-5)
    assert not ours[2].any() and not ours[3].any()


def test_offline_and_deterministic(tiny_model: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_a: object, **_k: object) -> None:
        raise OSError("network disabled in tests")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    a = load_embedder(str(tiny_model)).embed(TEXTS)
    b = load_embedder(str(tiny_model)).embed(TEXTS)
    assert a.tobytes() == b.tobytes()


def test_missing_and_bad_models_fail_with_a_hint(tmp_path: Path) -> None:
    with pytest.raises(ModelUnavailable) as info:
        resolve_model_dir("minishlab/potion-base-8M", cache_root=tmp_path)
    assert "ncx model fetch" in (info.value.hint or "")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelUnavailable) as info:
        resolve_model_dir(str(tmp_path / "empty"))
    assert "model2vec folder" in str(info.value)


def test_fingerprint_is_the_weights_sha256(tiny_model: Path) -> None:
    import hashlib

    info = load_embedder(str(tiny_model)).info
    assert (
        info.sha256 == hashlib.sha256((tiny_model / "model.safetensors").read_bytes()).hexdigest()
    )
    assert info.dim == 32


def test_cli_import_stays_light() -> None:
    code = (
        "import sys, ncx.cli.main, ncx.tree.sync, ncx.tree.status, ncx.tree.check\n"
        "heavy = [m for m in ('numpy', 'scipy', 'model2vec', 'git', 'tokenizers', 'safetensors') if m in sys.modules]\n"
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_widened_table_gives_the_same_bits(monkeypatch: pytest.MonkeyPatch) -> None:
    """A big batch widens the whole table once; a query widens its own rows: same vectors."""
    import ncx.embedder as emb

    e = load_embedder(emb.BUNDLED_MODEL)
    texts = [f"chunk {i}: deploy the service, then check its logs ({i * 7})" for i in range(40)]
    texts += ["", "über naïve café", "x" * 300]
    monkeypatch.setattr(emb, "_WIDEN_FROM", 10**9)
    rows = e.embed(texts)
    monkeypatch.setattr(emb, "_WIDEN_FROM", 1)
    widened = e.embed(texts)
    assert rows.tobytes() == widened.tobytes()


def _fuzz_texts(n: int) -> list[str]:
    """Strings built to hit the tokenizer's edges: accents and combining marks, CJK, emoji,
    control and odd whitespace characters, the special tokens' own text, '##' pieces."""
    import random

    rnd = random.Random(11)
    parts = [*"abcXYZ  \n\n\t\r0123.,-_(){}[]éÉ中😀\u00a0\u2003\u0301\x00\x0b\x1c\ufffdΣς"]
    parts += ["[PAD]", "[UNK]", "[pad]", "##", "straße", "İ", "x" * 120, "deploy", "logs"]
    return ["".join(rnd.choice(parts) for _ in range(rnd.randint(0, 60))) for _ in range(n)]


def test_segment_ids_are_the_tokenizer_ids() -> None:
    """The many-text path tokenizes each distinct segment once: the ids must be exactly the
    tokenizer's own for every text (this repo's docs, fuzz, texts past the 512-token cut)."""
    from ncx.embedder import _MAX_TOKENS, BUNDLED_MODEL, SegmentTokenizer

    tokenizer = load_embedder(BUNDLED_MODEL)._tokenizer
    segments = SegmentTokenizer.of(tokenizer)
    assert segments is not None
    root = Path(__file__).resolve().parents[1]
    docs = [p.read_text(encoding="utf-8") for p in sorted(root.glob("docs/*.md"))]
    docs += [(root / "README.md").read_text(encoding="utf-8")]
    paragraphs = [p for d in docs for p in d.split("\n\n")]
    texts = [*paragraphs, *docs, *_fuzz_texts(3000)]
    want = [e.ids for e in tokenizer.encode_batch_fast(texts, add_special_tokens=False)]
    assert any(len(w) == _MAX_TOKENS for w in want)  # the cut is exercised
    assert list(segments.ids(texts, _MAX_TOKENS)) == want


def test_other_tokenizers_are_not_split(tiny_model: Path) -> None:
    """A tokenizer outside the BERT family is used text by text, and still matches model2vec."""
    from model2vec import StaticModel

    import ncx.embedder as emb

    ours = load_embedder(str(tiny_model))
    assert emb.SegmentTokenizer.of(ours._tokenizer) is None
    texts = [f"{t} {i}" for i in range(emb._WIDEN_FROM) for t in TEXTS[:2]]
    theirs = StaticModel.from_pretrained(str(tiny_model)).encode(texts)
    np.testing.assert_allclose(ours.embed(texts), theirs, atol=1e-5)


def test_a_large_call_shared_by_workers_gives_the_same_bits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Worker processes embed contiguous shares of a large call: same vectors, same order."""
    import ncx.embedder as emb

    e = load_embedder(emb.BUNDLED_MODEL)
    texts = [f"section {i}: rotate the keys, then restart the {i % 7} workers" for i in range(64)]
    texts += ["", "über naïve café", *_fuzz_texts(64)]
    here = e.embed_here(texts)
    import ncx.parallel

    monkeypatch.setattr(emb, "_SPREAD_FROM", 10)
    monkeypatch.setattr(ncx.parallel, "workers", lambda: 3)  # uneven shares, even on 2 CPUs
    shared = e.embed(texts)
    assert shared.tobytes() == here.tobytes()


def test_segment_ids_when_the_first_special_token_is_the_unknown_one() -> None:
    """A BERT-style tokenizer whose first special token is [UNK]: WordPiece emits it for a
    word it cannot split, so it must not be the seam (it was: a ValueError in a sync)."""
    from tokenizers import AddedToken, Tokenizer, models, normalizers, pre_tokenizers

    from ncx.embedder import _MAX_TOKENS, SegmentTokenizer

    vocab = {"[UNK]": 0, "[PAD]": 1, "deploy": 2, "the": 3, "log": 4, "##s": 5}
    tok = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]", max_input_chars_per_word=100))
    tok.normalizer = normalizers.BertNormalizer()
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.add_special_tokens([AddedToken("[UNK]", special=True), AddedToken("[PAD]", special=True)])
    segments = SegmentTokenizer.of(tok)
    assert segments is not None
    texts = ["deploy the logs", "deploy zzz logs", "qq [UNK] the", "[PAD]x the", ""]
    want = [e.ids for e in tok.encode_batch_fast(texts, add_special_tokens=False)]
    assert 0 in want[1]  # the unknown word is there
    assert list(segments.ids(texts, _MAX_TOKENS)) == want


def test_worker_shares_under_spawn_give_the_same_bits(tmp_path: Path) -> None:
    """macOS and Windows start worker processes by spawning (nothing inherited): a share's
    job must carry all a worker needs, and its vectors must be the ones embedded here."""
    run_script(
        tmp_path / "spawn_embed.py",
        "import multiprocessing, sys\n"
        "import ncx.embedder as emb, ncx.parallel as par\n"
        "if __name__ == '__main__':\n"
        "    multiprocessing.set_start_method('spawn', force=True)\n"
        "    emb._SPREAD_FROM = 10\n"
        "    par.workers = lambda: 2\n"
        "    e = emb.load_embedder(emb.BUNDLED_MODEL)\n"
        "    texts = [f'note {i}: the backup runs at {i % 5} am' for i in range(40)]\n"
        "    here, real = [], emb.embed_share\n"
        "    emb.embed_share = lambda *job: here.append(1) or real(*job)  # this process only\n"
        "    shared = e.embed(texts)\n"
        "    if here:\n"
        "        sys.exit(4)  # no worker started: the shares ran here\n"
        "    sys.exit(0 if shared.tobytes() == e.embed_here(texts).tobytes() else 3)\n",
        timeout=120,
    )


def test_pieces_never_cut_an_added_token() -> None:
    """An added token is matched before anything is split: its text must stay one piece
    ("[PAD]" inside a word), and a tokenizer whose added token could be cut in the middle
    ("a.b", which starts inside a run) is not split into pieces at all."""
    from tokenizers import AddedToken, Tokenizer, models, normalizers, pre_tokenizers

    from ncx.embedder import _MAX_TOKENS, SegmentTokenizer

    def bert(*added: str) -> Tokenizer:
        vocab = {"[UNK]": 0, "[PAD]": 1, "deploy": 2, "the": 3, "log": 4, "##s": 5, ".": 6}
        tok = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]", max_input_chars_per_word=100))
        tok.normalizer = normalizers.BertNormalizer()
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        tok.add_special_tokens([AddedToken(t, special=True) for t in ("[UNK]", "[PAD]", *added)])
        return tok

    tok = bert()
    segments = SegmentTokenizer.of(tok)
    assert segments is not None
    texts = ["deploy[PAD]the logs.", "logs.[PAD].[PAD]x", "[[PAD]]", "the.[PAD"]
    want = [e.ids for e in tok.encode_batch_fast(texts, add_special_tokens=False)]
    assert 1 in want[0]
    assert list(segments.ids(texts, _MAX_TOKENS)) == want
    assert SegmentTokenizer.of(bert("a.b")) is None


def test_pieces_are_not_used_where_they_would_change_an_added_token_match() -> None:
    """A single-word added token is matched only between word boundaries that pieces
    would invent ("hello" in "helloa"), and one starting with a space would match the
    space the pieces are joined with ("b]foo"): such a tokenizer is not split into pieces."""
    from tokenizers import AddedToken, Tokenizer, models, normalizers, pre_tokenizers

    from ncx.embedder import _MAX_TOKENS, SegmentTokenizer

    def bert(added: AddedToken) -> Tokenizer:
        vocab = {"[UNK]": 0, "[PAD]": 1, "a": 2, "b": 3, "hello": 4, "foo": 5, "]": 6}
        tok = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]", max_input_chars_per_word=100))
        tok.normalizer = normalizers.BertNormalizer()
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        tok.add_special_tokens([AddedToken(t, special=True) for t in ("[UNK]", "[PAD]")])
        tok.add_tokens([added])
        return tok

    texts = ["helloa hello.", "b]foo a foo"]
    for added in (
        AddedToken("hello", single_word=True, normalized=False),
        AddedToken(" foo", normalized=False),
    ):
        tok = bert(added)
        want = [e.ids for e in tok.encode_batch_fast(texts, add_special_tokens=False)]
        segments = SegmentTokenizer.of(tok)
        assert segments is None or list(segments.ids(texts, _MAX_TOKENS)) == want
