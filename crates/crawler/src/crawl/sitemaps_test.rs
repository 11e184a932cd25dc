use proptest::prelude::*;

use super::*;

/// A `<urlset>` listing `count` pages.
fn urlset(count: usize) -> String {
    let mut xml = String::from("<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">");
    for index in 0..count {
        xml.push_str(&format!(
            "<url><loc>http://a.example/{index}.html</loc></url>"
        ));
    }
    xml + "</urlset>"
}

fn read(text: &str) -> (Listing, ReadReport) {
    parse_within(text, Instant::now() + SITEMAP_PARSE_BUDGET)
}

fn parse(text: &str) -> Listing {
    read(text).0
}

#[test]
fn reads_urlsets_indexes_and_text_lists() {
    let urlset = r#"<?xml version="1.0" encoding="UTF-8"?>
        <urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
          <url><loc> http://a.example/1.html?x=1&amp;y=2 </loc><lastmod>2019-01-01</lastmod></url>
          <url><ns:loc><![CDATA[http://a.example/2.html]]></ns:loc></url>
        </urlset>"#;
    assert_eq!(
        parse(urlset).pages,
        ["http://a.example/1.html?x=1&y=2", "http://a.example/2.html"]
    );
    let index =
        r#"<sitemapindex><sitemap><loc>http://a.example/s1.xml.gz</loc></sitemap></sitemapindex>"#;
    assert_eq!(
        parse(index),
        Listing {
            sitemaps: vec!["http://a.example/s1.xml.gz".into()],
            pages: vec![],
        }
    );
    assert_eq!(
        parse("http://a.example/3.html\n# not a url\nhttps://a.example/4.html\n").pages,
        ["http://a.example/3.html", "https://a.example/4.html"]
    );
    assert_eq!(
        parse("<urlset><url><loc>unterminated").pages,
        Vec::<String>::new()
    );
}

#[test]
fn prefixes_entities_and_sloppy_xml_are_read() {
    let sitemap = "\u{feff}<?xml version=\"1.0\"?>\n<!-- 站点地图 -->\
        <sm:sitemapindex xmlns:sm=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\
        <sm:sitemap><sm:LOC>http://a.example/&#x31;.xml?a=1&b=2&amp;c=&lt;&nbsp;</sm:LOC></sm:sitemap>\
        <sm:sitemap><sm:loc>http://a.example/2.xml</sm:location></sm:sitemap>\
        <sm:sitemap><sm:loc/><sm:loc>  </sm:loc></sm:sitemap>\
        </sm:sitemapindex>";
    assert_eq!(
        parse(sitemap),
        Listing {
            sitemaps: vec!["http://a.example/1.xml?a=1&b=2&c=<&nbsp;".into()],
            pages: vec![],
        },
        "a mismatched end tag does not close a `<loc>`"
    );
    let mismatched = "<urlset><url><loc>http://a.example/1.html</loc></URL><url><loc>http://a.example/2.html</loc></url></urlset>";
    assert_eq!(
        parse(mismatched).pages,
        ["http://a.example/1.html", "http://a.example/2.html"]
    );
}

#[test]
fn malformed_xml_keeps_what_came_before() {
    let sitemap = "<urlset><url><loc>http://a.example/1.html</loc></url><url><loc>http://a.example/2.html</loc></url><url><loc>http://a.example/3.html<!-- never closed";
    let (listing, report) = read(sitemap);
    assert_eq!(
        listing.pages,
        ["http://a.example/1.html", "http://a.example/2.html"]
    );
    assert_eq!(report.ended, Ended::Malformed);
}

#[test]
fn a_multibyte_character_at_byte_4096_is_read_past() {
    // A Chinese comment straddling byte 4096 used to panic the crawl task.
    let mut sitemap = String::from("<?xml version=\"1.0\"?><!-- ");
    while sitemap.len() < 4095 {
        sitemap.push('x');
    }
    sitemap.push_str("站点地图 --><urlset><url><loc>http://a.example/1.html</loc></url></urlset>");
    assert!(!sitemap.is_char_boundary(4096));
    assert_eq!(parse(&sitemap).pages, ["http://a.example/1.html"]);
    // GBK bytes read as UTF-8: replacement characters everywhere.
    let mut gbk = b"<urlset><!-- ".to_vec();
    while gbk.len() < 5000 {
        gbk.extend_from_slice(&[0xd5, 0xbe, 0xb5, 0xe3]);
    }
    gbk.extend_from_slice(b" --><url><loc>http://a.example/2.html</loc></url></urlset>");
    assert_eq!(parse(&decode(&gbk)).pages, ["http://a.example/2.html"]);
}

#[test]
fn pathological_bodies_are_read_in_one_pass() {
    // 200k `<` took 51 s with a scanner that searched again from each one.
    let head = "<urlset><url><loc>http://a.example/1.html</loc></url>";
    let hostile = [
        format!("{head}{}", "<".repeat(200_000)),
        format!("{head}{}", "<loc".repeat(100_000)),
        format!("{head}{}", "<x>".repeat(133_000)),
        format!("{head}<url><loc>{}</loc></url>", "&".repeat(400_000)),
        format!("{head}<url><loc>{}</loc></url>", "&amp;".repeat(80_000)),
        format!("{head}{}", "<!-- -".repeat(66_000)),
    ];
    for body in &hostile {
        let (listing, report) = read(body);
        assert_eq!(listing.pages, ["http://a.example/1.html"], "{report:?}");
        assert_ne!(report.ended, Ended::OutOfTime, "the deadline is a guard");
        assert!(report.events <= body.len(), "{report:?}");
    }
    // Twice the input, twice the work.
    let work = |copies: usize| {
        read(&format!("{head}{}", "<x>&amp;".repeat(copies)))
            .1
            .events
    };
    assert_eq!(work(200_000) - work(100_000), work(100_000) - work(0));
}

#[test]
fn the_deadline_stops_reading_and_keeps_the_listing_so_far() {
    let sitemap = urlset(2000);
    let (listing, report) = read(&sitemap);
    assert_eq!((listing.pages.len(), report.ended), (2000, Ended::Complete));
    // A deadline already passed: nothing more is read.
    let (listing, report) = parse_within(&sitemap, Instant::now());
    assert_eq!(report.ended, Ended::OutOfTime);
    assert!(listing.pages.len() < 2000);
}

#[test]
fn urls_and_locs_are_capped() {
    let (listing, report) = read(&urlset(MAX_URLS_PER_SITEMAP + 10));
    assert_eq!(listing.pages.len(), MAX_URLS_PER_SITEMAP);
    assert_eq!(report.ended, Ended::Full);
    let long = format!(
        "<urlset><url><loc>http://a.example/{}</loc></url><url><loc>http://a.example/2</loc></url></urlset>",
        "x".repeat(MAX_LOC_BYTES)
    );
    assert_eq!(parse(&long).pages, ["http://a.example/2"]);
}

#[test]
fn robots_lines_and_gzip() {
    let base = Url::parse("http://a.example/robots.txt").unwrap();
    assert_eq!(
        robots_sitemaps(
            "User-agent: *\nDisallow: /x\nSITEMAP: /sm.xml # main\nsitemap:http://a.example/b.xml",
            &base
        ),
        ["http://a.example/sm.xml", "http://a.example/b.xml"]
    );
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut gz, b"http://a.example/1.html\n").unwrap();
    assert_eq!(decode(&gz.finish().unwrap()), "http://a.example/1.html\n");
    // A gzip bomb stops at the byte budget.
    let mut bomb = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    let zeros = vec![b'a'; 1 << 20];
    for _ in 0..(MAX_SITEMAP_BYTES >> 20) + 4 {
        std::io::Write::write_all(&mut bomb, &zeros).unwrap();
    }
    assert_eq!(decode(&bomb.finish().unwrap()).len(), MAX_SITEMAP_BYTES);
}

/// XML-ish text: sitemap tags, entities, CDATA, comments and CJK in any order.
fn sitemap_like() -> impl Strategy<Value = String> {
    let piece = prop::sample::select(vec![
        "<urlset>",
        "<sitemapindex>",
        "<url>",
        "</url>",
        "<loc>",
        "</loc>",
        "<ns:loc>",
        "</ns:loc>",
        "<loc/>",
        "<![CDATA[",
        "]]>",
        "<!--",
        "-->",
        "&amp;",
        "&#x4e2d;",
        "&#1114112;",
        "&",
        ";",
        "<",
        ">",
        "http://a.example/",
        "站点",
        "\u{fffd}",
        " ",
        "\n",
        "<?xml version=\"1.0\"?>",
        "\u{feff}",
    ]);
    prop::collection::vec(piece, 0..64).prop_map(|pieces| pieces.concat())
}

fn check_bounded(text: &str) {
    let (listing, _) = read(text);
    let urls = listing.pages.iter().chain(&listing.sitemaps);
    assert!(urls.clone().count() <= MAX_URLS_PER_SITEMAP);
    // Entities only shrink: no URL text comes from nowhere.
    assert!(urls.map(String::len).sum::<usize>() <= text.len());
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 512,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        check_bounded(&decode(&bytes));
    }

    #[test]
    fn sitemap_like_text_is_bounded(text in sitemap_like()) {
        check_bounded(&text);
    }
}
