"""Schemathesis hooks of deploy/dev/api-contract.sh: generators for the values
the OpenAPI document marks with a custom `format` or media type, whose validity
no JSON Schema keyword can state (a cron expression must parse (a report's
fire at most hourly), a cursor must be
one the server issued, an EPUB must be a zip with a package document). Each
generator yields valid values only; Schemathesis still sends invalid ones in its
negative phases."""

import io
import json
import zipfile

import schemathesis
from hypothesis import strategies as st

schemathesis.openapi.format(
    "cursor",
    # "", then cursors of the "<sortable time>:<id>" keys the stores issue
    st.sampled_from(["", "MDkyMjMzNzIwMzY4NTQ3NzU4MDc6eg", "MDox", "MTg0NDY3NDQwNzM3MDk1NTE2MTU6d18x"]),
)
schemathesis.openapi.format(
    "cron",
    st.sampled_from(["", "0 3 * * *", "*/15 * * * *", "0 0 1 * *", "30 2 * * 1-5"]),
)
schemathesis.openapi.format(
    # report schedules fire at most hourly, 5 fields
    "report-cron",
    st.sampled_from(["0 6 * * 1", "0 3 * * *", "0 0 1 * *", "30 2 * * 1-5", "0 * * * *"]),
)
schemathesis.openapi.format(
    "charset", st.sampled_from(["utf-8", "gbk", "gb18030", "big5", "shift_jis", "windows-1252"])
)
schemathesis.openapi.format(
    "css-selector", st.sampled_from(["#content", "div.chapter", "article p", "a[rel=next]"])
)
schemathesis.openapi.format(
    "url-pattern", st.sampled_from(["/book/*", "^https?://[^/]+/read/\\d+", "*.html"])
)
schemathesis.openapi.format(
    "heading-regex", st.sampled_from(["", "^第.+章", "^Chapter \\d+", "^卷[一二三]"])
)

_TEXT = st.text(
    alphabet=st.sampled_from("天地玄黄宇宙洪荒日月盈昃辰宿列张 abcdefg.,\n"), min_size=1, max_size=200
).filter(lambda text: text.strip())


def _epub(title: str, text: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        archive.writestr(
            "META-INF/container.xml",
            '<?xml version="1.0"?><container version="1.0" '
            'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
            '<rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
            "</rootfiles></container>",
        )
        archive.writestr(
            "OEBPS/content.opf",
            '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="2.0">'
            '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/">'
            f"<dc:title>{title}</dc:title><dc:creator>A. Writer</dc:creator></metadata>"
            '<manifest><item id="c1" href="c1.xhtml" media-type="application/xhtml+xml"/></manifest>'
            '<spine><itemref idref="c1"/></spine></package>',
        )
        body = "".join(f"<p>{line}</p>" for line in text.split("\n") if line.strip())
        archive.writestr(
            "OEBPS/c1.xhtml",
            '<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml">'
            f"<head><title>{title}</title></head><body><h1>{title}</h1>{body}</body></html>",
        )
    return buffer.getvalue()


schemathesis.openapi.media_type(
    "application/epub+zip",
    st.builds(_epub, st.sampled_from(["第一章", "Chapter 1", "序"]), _TEXT),
)
schemathesis.openapi.media_type(
    "application/x-ndjson",
    st.lists(
        st.builds(lambda title, text: json.dumps({"title": title, "text": text}, ensure_ascii=False),
                  st.sampled_from(["头条", "Breaking", "快讯"]), _TEXT),
        min_size=1,
        max_size=3,
    ).map(lambda lines: ("\n".join(lines) + "\n").encode()),
)
schemathesis.openapi.media_type("text/plain", _TEXT.map(lambda text: text.encode()))
