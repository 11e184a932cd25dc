//! Pages whose text arrives by script. Reprint and piracy sites hide a chapter
//! as an encoded blob in an inline script (base64, XOR with a key on the page,
//! AES with a key derived from a page token) that the page decodes into the
//! DOM at load time; as served, the page holds a placeholder. Such a page is
//! handed to the browser even on a site not marked `render = "chromium"`,
//! when a browser is installed: the signs are an inline script that carries a
//! long encoded literal and calls a decoder. Ordinary pages (analytics,
//! share buttons, ad loaders) carry neither, so they stay unrendered. A page
//! whose text as served is thin and whose inline script writes text into the
//! page (paragraphs shipped shuffled and put back in order, text pieced
//! together from arrays) is rendered too (`render = "auto"`, see `page`).

/// Bytes of a page looked at.
const SCANNED_BYTES: usize = 4 << 20;
/// Shortest run of base64 (or hex) characters in a script that counts as an
/// encoded payload: about 200 CJK characters of text.
const MIN_PAYLOAD: usize = 512;
/// Calls that turn such a payload into text.
const DECODERS: [&[u8]; 6] = [
    b"atob(",
    b"crypto.subtle",
    b"fromCharCode",
    b"charCodeAt",
    b"TextDecoder",
    b"CryptoJS",
];

/// Whether `body` (HTML as served) has an inline script that decodes an
/// embedded payload into the page.
pub(crate) fn text_arrives_by_script(body: &[u8]) -> bool {
    any_inline_script(body, decodes_a_payload)
}

/// DOM calls that put text into the page (analytics and ad loaders append
/// scripts and images, not text).
const TEXT_WRITERS: [&[u8]; 6] = [
    b"innerHTML",
    b"insertAdjacentHTML",
    b"innerText",
    b"textContent",
    b"createTextNode",
    b".html(",
];

/// Whether `body` has an inline script that writes text into the page: with
/// a thin text as served, the chapter is likely put there by script
/// (paragraphs shipped shuffled, or pieced together from arrays).
pub(crate) fn writes_into_page(body: &[u8]) -> bool {
    any_inline_script(body, |code| {
        TEXT_WRITERS
            .iter()
            .any(|writer| find(code, writer).is_some())
    })
}

/// Whether the code of an inline script (no `src`) of `body` passes `test`.
fn any_inline_script(body: &[u8], test: impl Fn(&[u8]) -> bool) -> bool {
    let body = body.get(..body.len().min(SCANNED_BYTES)).unwrap_or(body);
    let mut rest = body;
    while let Some(start) = find_ci(rest, b"<script") {
        let Some(after) = rest.get(start + 7..) else {
            break;
        };
        let Some(open_end) = after.iter().position(|&byte| byte == b'>') else {
            break;
        };
        let (tag, inner) = after.split_at(open_end);
        let inner = inner.get(1..).unwrap_or_default();
        let end = find_ci(inner, b"</script").unwrap_or(inner.len());
        let (code, tail) = inner.split_at(end);
        if find_ci(tag, b"src=").is_none() && test(code) {
            return true;
        }
        rest = tail;
    }
    false
}

fn decodes_a_payload(code: &[u8]) -> bool {
    DECODERS.iter().any(|decoder| find(code, decoder).is_some())
        && longest_encoded_run(code) >= MIN_PAYLOAD
}

/// The longest run of base64 characters (`A-Z a-z 0-9 + / = - _`).
fn longest_encoded_run(code: &[u8]) -> usize {
    let mut longest = 0;
    let mut run = 0;
    for &byte in code {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'+' | b'/' | b'=' | b'-' | b'_') {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    longest
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

fn find_ci(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window.eq_ignore_ascii_case(needle))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(script: &str) -> String {
        format!(
            "<html><body><div id=c>内容加载中…</div><script>{script}</script>\
             <script src=\"/a.js\"></script></body></html>"
        )
    }

    #[test]
    fn an_encoded_chapter_decoded_by_the_page_is_seen() {
        let blob = "5L2g5aW9".repeat(100);
        for decoder in [
            "atob(d)",
            "crypto.subtle.decrypt(a,k,d)",
            "String.fromCharCode(x)",
        ] {
            let html = page(&format!(
                "var d=\"{blob}\";document.getElementById('c').innerHTML={decoder};"
            ));
            assert!(text_arrives_by_script(html.as_bytes()), "{decoder}");
        }
        let upper = page(&format!("var d='{blob}';atob(d)"))
            .replace("<script>", "<SCRIPT type=text/javascript>");
        assert!(text_arrives_by_script(upper.as_bytes()));
    }

    #[test]
    fn ordinary_scripts_are_not() {
        let analytics = page(
            "var _hmt=_hmt||[];(function(){var hm=document.createElement('script');\
             hm.src='https://hm.example/hm.js?0123456789abcdef';})();",
        );
        assert!(!text_arrives_by_script(analytics.as_bytes()));
        // A long literal nothing decodes (a config blob), or a decoder with no payload.
        let config = page(&format!("var cfg='{}';", "a".repeat(2000)));
        assert!(!text_arrives_by_script(config.as_bytes()));
        let short = page("var s=atob('5L2g5aW9');");
        assert!(!text_arrives_by_script(short.as_bytes()));
        // An external script is not read.
        let external = format!(
            "<script src=\"x.js\">atob('{}')</script>",
            "QUJD".repeat(200)
        );
        assert!(!text_arrives_by_script(external.as_bytes()));
        assert!(!text_arrives_by_script(b"<script>atob("));
        assert!(!text_arrives_by_script("<p>正文</p>".as_bytes()));
    }

    #[test]
    fn scripts_that_write_text_are_told_from_loaders() {
        let shuffled = page(
            "var p=['第二段','第一段'],o=[1,0];o.forEach(function(i){\
             document.getElementById('c').insertAdjacentHTML('beforeend','<p>'+p[i]+'</p>')});",
        );
        assert!(writes_into_page(shuffled.as_bytes()));
        assert!(writes_into_page(
            page("$('#c').html(t.join(''));").as_bytes()
        ));
        let loader = page(
            "var s=document.createElement('script');s.src='//ads.example/a.js';\
             document.body.appendChild(s);",
        );
        assert!(!writes_into_page(loader.as_bytes()));
        let external = "<script src=\"a.js\">x.innerHTML=1</script>";
        assert!(!writes_into_page(external.as_bytes()));
    }
}
