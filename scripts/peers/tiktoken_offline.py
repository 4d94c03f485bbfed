"""Make `tiktoken.get_encoding("cl100k_base")` work without network access.

tiktoken (the PyPI wheel) does not ship its BPE files: on first use
`tiktoken_ext.openai_public.cl100k_base()` calls
`tiktoken.load.load_tiktoken_bpe(URL, expected_hash=SHA256)`, which goes
through `read_file_cached(URL)`: it first looks for the file
`$TIKTOKEN_CACHE_DIR/<sha1 of the URL>` and only downloads when that is
missing (or fails the SHA-256 check). The download host is not reachable on
our machines, so we seed that cache file ourselves from a copy that is
already on disk:

* the `tiktoken-rs` crate (a dependency of this workspace, so `cargo fetch`
  or any build puts it under `$CARGO_HOME/registry/src/*/`) ships
  `assets/cl100k_base.tiktoken`, byte-identical to OpenAI's file;
* failing that, the `bpe-openai` crate ships `data/cl100k_base.tiktoken.gz`.

The copy is checked against tiktoken's own expected SHA-256 (and tiktoken
checks it again on every load), so the encoding is exactly OpenAI's. Because
the real `tiktoken.get_encoding` path is used, LangChain's
`from_tiktoken_encoder(encoding_name="cl100k_base")` runs unmodified.

The cache lives in `$TIKTOKEN_CACHE_DIR` if set, else `<venv>/tiktoken-cache`
(`sys.prefix`, i.e. the peers virtualenv running the script).

Usage: `import tiktoken_offline; tiktoken_offline.setup()` before the first
`tiktoken.get_encoding` call; `python tiktoken_offline.py` seeds and checks.
"""

from __future__ import annotations

import glob
import gzip
import hashlib
import os
import sys

CL100K_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
# tiktoken_ext/openai_public.py, cl100k_base(): expected_hash
CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"


def _cargo_home() -> str:
    return os.environ.get("CARGO_HOME") or os.path.join(os.path.expanduser("~"), ".cargo")


def _candidates() -> list[tuple[str, bool]]:
    """(path, gzipped) of the on-disk copies of cl100k_base, best first."""
    src = os.path.join(_cargo_home(), "registry", "src", "*")
    found = [
        (p, False)
        for p in sorted(glob.glob(os.path.join(src, "tiktoken-rs-*", "assets", "cl100k_base.tiktoken")), reverse=True)
    ]
    found += [
        (p, True)
        for p in sorted(glob.glob(os.path.join(src, "bpe-openai-*", "data", "cl100k_base.tiktoken.gz")), reverse=True)
    ]
    return found


def cache_dir() -> str:
    return os.environ.get("TIKTOKEN_CACHE_DIR") or os.path.join(sys.prefix, "tiktoken-cache")


def setup() -> str:
    """Seed the tiktoken cache with cl100k_base and point tiktoken at it.

    Returns the cache file's path. Raises SystemExit with a hint when no copy
    of the file can be found.
    """
    directory = cache_dir()
    os.environ["TIKTOKEN_CACHE_DIR"] = directory
    target = os.path.join(directory, hashlib.sha1(CL100K_URL.encode()).hexdigest())
    if os.path.exists(target):
        with open(target, "rb") as f:
            if hashlib.sha256(f.read()).hexdigest() == CL100K_SHA256:
                return target
    for path, gz in _candidates():
        with open(path, "rb") as f:
            data = f.read()
        if gz:
            data = gzip.decompress(data)
        if hashlib.sha256(data).hexdigest() != CL100K_SHA256:
            continue
        os.makedirs(directory, exist_ok=True)
        tmp = f"{target}.{os.getpid()}.tmp"
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, target)
        return target
    raise SystemExit(
        "tiktoken_offline: no copy of cl100k_base.tiktoken found under "
        f"{_cargo_home()}/registry/src/*/(tiktoken-rs-*/assets|bpe-openai-*/data); "
        "run `cargo fetch` in the repository root first (it downloads the "
        "tiktoken-rs crate from crates.io)"
    )


def check() -> None:
    import tiktoken

    enc = tiktoken.get_encoding("cl100k_base")
    got = enc.encode("hello world")
    if got != [15339, 1917]:
        raise SystemExit(f"tiktoken_offline: cl100k_base gave {got} for 'hello world', expected [15339, 1917]")


if __name__ == "__main__":
    path = setup()
    check()
    print(f"tiktoken cl100k_base OK (cache {path})")
