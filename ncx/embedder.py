"""embedder: turn texts into unit vectors with a model2vec static model.

The only module that touches model weights. It reads a model2vec folder directly
(tokenizer.json + model.safetensors through `tokenizers` and `safetensors`), which
reproduces StaticModel.encode (ids without special tokens, unknown ids dropped, mean of
rows, optional per-token weights and mapping, L2-normalised) at a third of the cold
cost: `from_pretrained` imports the hub client even for a local folder (docs/decisions.md §4).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ncx.errors import ModelMismatch, ModelUnavailable
from ncx.layout import MANIFEST, NCX_DIR

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

BUNDLED_MODEL = "ncx-static-v2"
BUNDLED_NAME = re.compile(r"ncx-static-v(\d+)")  # what any release calls its bundled model
ENV_ORIGIN = "NCX_EMBEDDING_MODEL"
_MAX_TOKENS = 512  # model2vec's default truncation
_BATCH = 1024
_WIDEN_FROM = 1000  # texts in one embed call from which the table is widened at once
_SPREAD_FROM = 8000  # texts from which worker processes share the call (a model load each)
_ASCII_PUNCT = r"!-/:-@\[-`{-~"  # a character class's body: every ASCII punctuation mark
_SPLIT = re.compile(f"[ \n{_ASCII_PUNCT}]")  # where a text splits into pieces (SegmentTokenizer)


class Embedder(Protocol):
    """What the rest of ncx needs from a model."""

    @property
    def info(self) -> ModelInfo: ...

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]: ...


@dataclass(frozen=True, slots=True)
class ModelInfo:
    id: str  # bundled name, hub id, or local path as the user gave it
    dim: int
    sha256: str  # of model.safetensors: the weights that made the vectors

    def as_manifest(self) -> dict[str, Any]:
        return {"id": self.id, "dim": self.dim, "sha256": self.sha256}


def bundled_model_dir() -> Path:
    return Path(__file__).resolve().parent / "models" / BUNDLED_MODEL


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def tree_model_id(cfg_model: str | None, manifest_model: Mapping[str, Any]) -> tuple[str, str]:
    """The model id a command on a tree loads, and where that id comes from (for errors)."""
    if cfg_model:
        return cfg_model, ENV_ORIGIN
    return str(manifest_model.get("id", "")), f"{NCX_DIR}/{MANIFEST}"


def resolve_model_dir(
    model_id: str, *, cache_root: Path | None = None, named_in: str | None = None
) -> Path:
    """Find the local folder for a model id; never touches the network.

    Accepts the bundled name, an existing local folder, or a hub id previously fetched
    with `ncx model fetch` (kept under `cache_root`). `named_in` says where the id came
    from (the manifest, the environment), so an error can point there.
    """
    if model_id in ("", "default", BUNDLED_MODEL):
        folder = bundled_model_dir()
        if not (folder / "model.safetensors").is_file():
            raise ModelUnavailable(
                f"the bundled model {BUNDLED_MODEL} is missing from this install",
                path=folder,
                hint="reinstall ncx, or set NCX_EMBEDDING_MODEL to a local model2vec folder",
            )
        return folder
    folder = Path(model_id).expanduser()
    if folder.is_dir():
        if (
            not (folder / "model.safetensors").is_file()
            or not (folder / "tokenizer.json").is_file()
        ):
            raise ModelUnavailable(
                "is not a model2vec folder (needs model.safetensors and tokenizer.json)",
                path=folder,
                hint="point NCX_EMBEDDING_MODEL at a folder saved by model2vec",
            )
        return folder
    if cache_root is not None:
        fetched = cache_root / fetched_dir_name(model_id)
        if (fetched / "model.safetensors").is_file():
            return fetched
    if m := BUNDLED_NAME.fullmatch(model_id):
        raise _other_bundled(model_id, int(m.group(1)), named_in)
    raise ModelUnavailable(
        f"model {model_id!r} is not available locally",
        hint=f"run `ncx model fetch {model_id}` once with network, or use a local folder",
    )


def unavailable(
    model_id: str, *, cache_root: Path | None = None, named_in: str | None = None
) -> ModelUnavailable | None:
    """Why this machine cannot load `model_id`, or None if it can: a stat, nothing loaded."""
    try:
        resolve_model_dir(model_id, cache_root=cache_root, named_in=named_in)
    except ModelUnavailable as exc:
        return exc
    return None


def _other_bundled(model_id: str, version: int, named_in: str | None) -> ModelUnavailable:
    """Another release's bundled model: vectors it made can be replaced, not reproduced."""
    mine = BUNDLED_NAME.fullmatch(BUNDLED_MODEL)
    older = mine is not None and version < int(mine.group(1))
    where = f" (named in {named_in})" if named_in else ""
    release = "an earlier" if older else "a newer"
    if named_in == ENV_ORIGIN:
        hint = f"unset {ENV_ORIGIN}, or set it to {BUNDLED_MODEL} or a local model2vec folder"
    elif named_in and older:
        hint = f"run `ncx model use {BUNDLED_MODEL}` to re-embed the tree with it, and commit"
    elif named_in:
        hint = "a newer ncx embedded this tree: upgrade ncx (pip install -U ncx)"
    else:
        hint = f"this ncx has {BUNDLED_MODEL}; a local model2vec folder works too"
    return ModelUnavailable(
        f"{model_id}{where} is the bundled model of {release} ncx; this one ships {BUNDLED_MODEL}",
        hint=hint,
    )


def fetched_dir_name(hub_id: str) -> str:
    return hub_id.replace("/", "--")


class StaticEmbedder:
    """A loaded model2vec static model: holds the token table and the tokenizer."""

    def __init__(self, folder: Path, model_id: str, *, sha256: str | None = None):
        from tokenizers import Tokenizer

        try:
            tensors = read_safetensors(folder / "model.safetensors")
            self._tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
            config = (
                json.loads((folder / "config.json").read_text())
                if (folder / "config.json").is_file()
                else {}
            )
        except Exception as exc:  # safetensors/tokenizers raise their own untyped errors
            raise ModelUnavailable(f"cannot load model: {exc}", path=folder) from None
        table = tensors.get("embeddings", tensors.get("embedding.weight"))
        if table is None:
            raise ModelUnavailable("model.safetensors has no 'embeddings' tensor", path=folder)
        # Rows stay float16 on disk and in memory; only the rows a text uses are widened.
        self._table = table
        self._weights = tensors.get("weights")
        self._mapping = tensors.get("mapping")
        self._normalize = bool(config.get("normalize", True))
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(_MAX_TOKENS)
        self._unk = _unk_token_id(self._tokenizer)
        self._segments: SegmentTokenizer | bool | None = False  # False: not looked at yet
        self._wide: NDArray[np.float32] | None = None  # the table as float32, once widened
        digest = sha256 or file_sha256(folder / "model.safetensors")
        self.info = ModelInfo(id=model_id, dim=int(self._table.shape[1]), sha256=digest)
        self._folder = folder

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        if len(texts) >= _SPREAD_FROM:
            import numpy as np

            from ncx.parallel import ordered_map, workers

            n = workers()
            if n > 1:
                # A first sync's 40,000 texts: each worker process loads the model once and
                # embeds every n-th text (a tree's docs come in folders of like cost); a
                # text's vector does not depend on the others in its call: the same bytes.
                spec = self.worker_spec()
                jobs = [(spec, texts[i::n]) for i in range(n)]
                out = np.empty((len(texts), self.info.dim), dtype=np.float32)
                for i, share in enumerate(ordered_map(_embed_share, jobs, at_least=2, chunksize=1)):
                    out[i::n] = share
                return out
        return self.embed_here(texts)

    def worker_spec(self) -> tuple[str, str, str]:
        """What another process needs to load this very model (embed_share): its folder,
        id and weights' sha256 (checked against the tree by whoever made this one)."""
        spec = (str(self._folder), self.info.id, self.info.sha256)
        _LOADED.setdefault(spec, self)  # embed_share in this process uses this one
        return spec

    def embed_here(self, texts: Sequence[str], *, bulk: bool = False) -> NDArray[np.float32]:
        """embed(), in this process. `bulk`: one of many calls (a first sync's batches), each
        done as a call of many texts is, whatever its size (the same vectors either way)."""
        import numpy as np

        # Many texts (a first sync): the whole table widened to float32 once (30 MB) costs
        # less than widening each text's rows, 40,000 times. A query widens its own rows.
        many = bulk or len(texts) >= _WIDEN_FROM
        ids, starts = self._token_ids(texts, many=many)
        if self._unk is not None:
            known = ids != self._unk
            ids = ids[known]
            starts = np.concatenate(([0], np.cumsum(known)))[starts]
        # np.asarray: the table is a memmap, and indexing one goes through Python each time.
        table = np.asarray(self._table)
        if many:
            if self._wide is None:  # kept: a first sync's workers embed batch after batch
                self._wide = table.astype(np.float32)
            table = self._wide
        out = np.zeros((len(texts), self.info.dim), dtype=np.float32)
        bounds = starts.tolist()
        for b in range(len(texts)):
            a, z = bounds[b], bounds[b + 1]
            if a == z:
                continue  # nothing known: stays a zero vector, scored 0 by cosine
            at = ids[a:z]
            rows = table[at if self._mapping is None else self._mapping[at]]
            if not many:
                rows = rows.astype(np.float32)
            if self._weights is not None:
                rows = rows * self._weights[at][:, None]
            out[b] = rows.mean(axis=0)
        if self._normalize:
            norms = np.linalg.norm(out, axis=1, keepdims=True)
            np.divide(out, norms, out=out, where=norms > 0)
        return out

    def _token_ids(
        self, texts: Sequence[str], *, many: bool
    ) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """All texts' token ids (no special tokens, each text cut at _MAX_TOKENS) in one
        array, text after text, and where each text's ids start (one more entry, the end)."""
        import numpy as np

        if many:
            if self._segments is False:
                self._segments = SegmentTokenizer.of(self._tokenizer)
            segments = self._segments
            if isinstance(segments, SegmentTokenizer):
                return segments.tokens(texts, _MAX_TOKENS)
        lists = [
            enc.ids
            for b in range(0, len(texts), _BATCH)
            for enc in self._tokenizer.encode_batch_fast(
                list(texts[b : b + _BATCH]), add_special_tokens=False
            )
        ]
        starts = np.zeros(len(lists) + 1, dtype=np.int64)
        np.cumsum([len(x) for x in lists], out=starts[1:])
        ids = np.fromiter(itertools.chain.from_iterable(lists), np.int64, int(starts[-1]))
        return ids, starts


class SegmentTokenizer:
    """Token ids of many texts, each distinct piece of text tokenized once.

    Why: the tokenizer is most of a first sync's CPU (about 2 µs a token), and the texts of
    a tree repeat their words: a 40,000-chunk tree has 8.9 million pieces but 87,000
    distinct ones. Exact, not approximate: a BERT-style tokenizer (BertNormalizer: a
    per-character clean-up, lower-casing and accent stripping; BertPreTokenizer: words end
    at whitespace and every ASCII punctuation character is a word of its own; WordPiece
    within a word) gives a text the concatenation of its pieces' ids when the text is split
    at spaces and newlines and around ASCII punctuation, and cutting at 512 tokens is taking
    a prefix. Other tokenizers (byte-level BPE keeps the space in the token) are not split.
    (Split at spaces only, the same tree had 382,000 distinct segments: "model." and
    "`model`" each its own; tokenizing them was 9 of a first sync's CPU-seconds.)

    The distinct pieces are tokenized many to an input, joined by a special token that
    marks the seams (one input per piece costs ~17 µs of call overhead each).
    """

    _GROUP = 512  # pieces joined into one tokenizer input

    def __init__(self, tokenizer: Any, seam: str, seam_id: int, added: Sequence[str] = ()):
        self._tok, self._seam, self._seam_id = tokenizer, seam, seam_id
        self._join = f" {seam} "
        # A piece: the text of an added token ("[PAD]": the tokenizer matches those before
        # it splits anything, so they are never cut); a run of anything but a space, a
        # newline or ASCII punctuation; or one such punctuation character
        # (BertPreTokenizer's punctuation includes all of ASCII's).
        whole = "".join(f"{re.escape(t)}|" for t in sorted(added, key=lambda t: (-len(t), t)))
        self._piece = re.compile(f"{whole}[^ \n{_ASCII_PUNCT}]+|[{_ASCII_PUNCT}]")

    @classmethod
    def of(cls, tokenizer: Any) -> SegmentTokenizer | None:
        """One for this tokenizer when its ids split into pieces (above), else None."""
        text = tokenizer.to_str()
        spec = json.loads(text)
        kind = {k: (spec.get(k) or {}).get("type") for k in ("normalizer", "pre_tokenizer")}
        if (
            kind != {"normalizer": "BertNormalizer", "pre_tokenizer": "BertPreTokenizer"}
            or spec.get("model", {}).get("type") != "WordPiece"
            or spec.get("post_processor") is not None
        ):
            return None
        # Not the unknown token: WordPiece emits it for a word it cannot split, which would
        # be taken for a seam.
        unk = spec["model"].get("unk_token")
        added_tokens = spec.get("added_tokens") or []
        seams = [t["content"] for t in added_tokens if t.get("special") and t["content"] != unk]
        if not seams:
            return None
        for t in added_tokens:
            # The pieces keep an added token whole only where a piece starts: at a split
            # character, or after one. One that could start inside a run and holds a split
            # character, or one matched after normalising, is not split at all. Nor is one
            # matched only as a whole word (pieces would make "hello" of "helloa" a word)
            # or one starting with a space (it would match the space pieces are joined by).
            splits = _SPLIT.search(t["content"])
            if splits and (splits.start() > 0 or t.get("normalized")):
                return None
            if t.get("single_word") or t["content"].startswith(" "):
                return None
        # A copy, so switching truncation off here never reaches a query in another thread.
        from tokenizers import Tokenizer

        copy = Tokenizer.from_str(text)
        copy.no_truncation()
        copy.no_padding()
        seam_id = copy.token_to_id(seams[0])
        added = [t["content"] for t in added_tokens]
        return None if seam_id is None else cls(copy, seams[0], seam_id, added)

    def tokens(
        self, texts: Sequence[str], limit: int
    ) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """All texts' ids in one array, text after text, each cut at `limit`, and where each
        text's ids start (one more entry: the end). Pieces to ids by array work: a Python
        list per text was 8 of those CPU-seconds."""
        import numpy as np

        pieces = [self._piece.findall(t) for t in texts]
        flat = list(itertools.chain.from_iterable(pieces))
        distinct = list(dict.fromkeys(flat))
        code = dict(zip(distinct, range(len(distinct)), strict=True))
        codes = np.fromiter(map(code.__getitem__, flat), np.int64, len(flat))
        piece_ids, piece_at, piece_len = self._tokenize(distinct)
        # Each occurrence's ids, in order: where its piece's ids are, run by run.
        run = piece_len[codes]
        end = np.cumsum(run)
        total = int(end[-1]) if len(end) else 0
        ids = piece_ids[np.repeat(piece_at[codes] - (end - run), run) + np.arange(total)]
        text_pieces = np.zeros(len(texts) + 1, dtype=np.int64)
        np.cumsum([len(p) for p in pieces], out=text_pieces[1:])
        starts = np.concatenate(([0], end))[text_pieces]
        lengths = np.diff(starts)
        if (lengths > limit).any():
            ids = ids[np.arange(total) - np.repeat(starts[:-1], lengths) < limit]
            starts = np.concatenate(([0], np.cumsum(np.minimum(lengths, limit))))
        return ids, starts

    def ids(self, texts: Sequence[str], limit: int) -> Iterator[list[int]]:
        """Each text's ids as a list (tokens(), text by text)."""
        ids, starts = self.tokens(texts, limit)
        flat = ids.tolist()
        bounds = starts.tolist()
        for a, b in itertools.pairwise(bounds):
            yield flat[a:b]

    def _tokenize(
        self, pieces: list[str]
    ) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
        """The ids of distinct pieces: one array, and where each piece's ids start and how
        many there are."""
        import numpy as np

        at = np.zeros(len(pieces), dtype=np.int64)
        size = np.zeros(len(pieces), dtype=np.int64)
        parts: list[NDArray[np.int64]] = []
        offset = 0
        # A piece holding the seam's own text is tokenized alone (it would split there).
        alone = [i for i, p in enumerate(pieces) if self._seam in p]
        joined = [i for i, p in enumerate(pieces) if self._seam not in p]
        groups = [joined[g : g + self._GROUP] for g in range(0, len(joined), self._GROUP)]
        encoded = self._tok.encode_batch_fast(
            [self._join.join(pieces[i] for i in group) for group in groups],
            add_special_tokens=False,
        )
        for group, enc in zip(groups, encoded, strict=True):
            got = np.asarray(enc.ids, dtype=np.int64)
            seams = np.flatnonzero(got == self._seam_id)
            if len(seams) != len(group) - 1:  # cannot happen for this tokenizer family
                alone.extend(group)
                continue
            begins = np.concatenate(([0], seams + 1))
            ends = np.concatenate((seams, [len(got)]))
            at[group], size[group] = offset + begins, ends - begins
            parts.append(got)
            offset += len(got)
        singles = self._tok.encode_batch_fast([pieces[i] for i in alone], add_special_tokens=False)
        for i, enc in zip(alone, singles, strict=True):
            got = np.asarray(enc.ids, dtype=np.int64)
            at[i], size[i] = offset, len(got)
            parts.append(got)
            offset += len(got)
        ids = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
        return ids, at, size


# Models by worker_spec: a worker's, loaded once; this process's own, registered by
# worker_spec (so a pool that falls back to running here embeds with it, not a second load).
_LOADED: dict[tuple[str, str, str], StaticEmbedder] = {}


def embed_share(spec: tuple[str, str, str], texts: Sequence[str]) -> NDArray[np.float32]:
    """`texts` embedded in this process by the model `spec` names (worker_spec), loaded
    once per process: a worker's share of a large embed call, or of a first sync."""
    model = _LOADED.get(spec)
    if model is None:
        folder, model_id, sha = spec
        model = _LOADED[spec] = StaticEmbedder(Path(folder), model_id, sha256=sha)
    return model.embed_here(texts, bulk=True)


def _embed_share(job: tuple[tuple[str, str, str], Sequence[str]]) -> NDArray[np.float32]:
    return embed_share(*job)


_DTYPES = {"F16": "<f2", "F32": "<f4", "F64": "<f8", "I32": "<i4", "I64": "<i8"}


def read_safetensors(path: Path) -> dict[str, Any]:
    """Memory-map the tensors of a .safetensors file (its documented layout: an 8-byte
    header length, a JSON header, raw little-endian data): no copy of the 15 MB table on
    the query path, and no safetensors import."""
    import numpy as np

    with path.open("rb") as f:
        n = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(n))
    out: dict[str, Any] = {}
    for name, spec in header.items():
        if name == "__metadata__":
            continue
        dtype = _DTYPES.get(spec["dtype"])
        if dtype is None:
            raise ValueError(f"unsupported tensor dtype {spec['dtype']} for {name}")
        begin, end = spec["data_offsets"]
        shape = tuple(spec["shape"])
        if end == begin:
            out[name] = np.zeros(shape, dtype=dtype)
        else:
            out[name] = np.memmap(path, dtype=dtype, mode="r", offset=8 + n + begin, shape=shape)
    return out


def _unk_token_id(tokenizer: Any) -> int | None:
    unk = getattr(tokenizer.model, "unk_token", None)
    return None if unk is None else tokenizer.token_to_id(unk)


def load_embedder(
    model_id: str,
    *,
    cache_root: Path | None = None,
    sha256: str | None = None,
    named_in: str | None = None,
) -> StaticEmbedder:
    folder = resolve_model_dir(model_id, cache_root=cache_root, named_in=named_in)
    return StaticEmbedder(folder, model_id, sha256=sha256)


# --- the tree's model: the one place that loads it and checks it against the manifest ------


def model_mismatch(
    info: ModelInfo, manifest_model: Mapping[str, Any], *, check_sha: bool = True
) -> str | None:
    """Why `info` is not the model recorded for the tree, or None if it is."""
    want_sha = str(manifest_model.get("sha256") or "")
    if info.dim == manifest_model.get("dim") and (not check_sha or info.sha256 == want_sha):
        return None
    return (
        f"this tree was embedded by {manifest_model.get('id')!r} "
        f"({manifest_model.get('dim')}d, sha256 {want_sha[:12]}…), but the model loaded is "
        f"{info.id!r} ({info.dim}d" + (f", sha256 {info.sha256[:12]}…)" if check_sha else ")")
    )


def load_tree_model(
    root: Path,
    manifest_model: Mapping[str, Any],
    cfg_model: str | None,
    cache_root: Path | None,
    *,
    check_sha: bool = True,
    allow_mismatch: bool = False,
) -> StaticEmbedder:
    """The model a command on this tree uses (the manifest's, or NCX_EMBEDDING_MODEL's),
    checked against the tree's fingerprint. `check_sha=False` (the query path) compares
    the dimension only and skips hashing the weights; `allow_mismatch` is for a re-embed."""
    model_id, origin = tree_model_id(cfg_model, manifest_model)
    model = load_embedder(
        model_id, cache_root=cache_root, sha256=None if check_sha else "-", named_in=origin
    )
    if not allow_mismatch:
        check_tree_model(root, model.info, manifest_model, check_sha=check_sha)
    return model


def check_tree_model(
    root: Path, info: ModelInfo, manifest_model: Mapping[str, Any], *, check_sha: bool = True
) -> None:
    """Raise ModelMismatch, with the fix, unless `info` is the tree's model."""
    why = model_mismatch(info, manifest_model, check_sha=check_sha)
    if why is not None:
        raise ModelMismatch(
            why,
            path=root / NCX_DIR / MANIFEST,
            hint="run `ncx sync --reembed` to re-embed the tree with the loaded model, "
            "or unset NCX_EMBEDDING_MODEL",
        )
