use super::*;

fn seen(html: &str) -> String {
    seen_with(
        html,
        LinkedSheets {
            sheets: &[],
            complete: true,
        },
    )
}

fn seen_with(html: &str, linked: LinkedSheets<'_>) -> String {
    let mut document = Html::parse_document(html);
    apply(&mut document, linked);
    let body = Selector::parse("body").unwrap();
    document
        .select(&body)
        .next()
        .map(|body| body.text().collect::<String>())
        .unwrap_or_default()
}

#[test]
fn hidden_decoys_are_dropped_visible_wrappers_kept() {
    let html = r#"<style>.fts{font-size:0px;line-height:0}.t9{font-size:0}.ok{font-weight:normal}
        .v{visibility:hidden;width:0} .off{position:absolute;left:-9999px}</style>
        <p>清<b class="fts">缚</b>晨<em class="t9">弩s</em><span class="ok">早</span>起<i class="v">颜</i>一
        <span style="position:absolute;left:-9999px">押怨</span>炉<span style="display:none!important">钱</span>香
        <span class="off">老</span><font class="fts">纵</font>。</p>"#;
    assert_eq!(
        seen(html).split_whitespace().collect::<String>(),
        "清晨早起一炉香。"
    );
}

#[test]
fn the_cascade_decides_what_is_hidden() {
    // Specificity, source order, !important and inline styles as a browser applies them.
    let html = r#"<style>
        p .x { display: none }
        .x.keep { display: inline }
        .late { display: none } .late { display: inline }
        #id { display: inline } .y { display: none !important }
        span.z { color: #fff } </style>
        <p>a<span class="x">b</span><span class="x keep">c</span><span class="late">d</span>
        <span id="id" class="y">e</span><span class="x" style="display:inline">f</span>
        <span class="z">g</span><span class="z" style="color:#000">h</span></p>"#;
    assert_eq!(seen(html).split_whitespace().collect::<String>(), "acdfh");
}

#[test]
fn inherited_properties_follow_the_tree() {
    let html = r##"<div style="visibility:hidden">a<span style="visibility:visible">b</span></div>
        <div style="font-size:0">c<span style="font-size:14px">d</span><span style="font-size:1.2em">e</span></div>
        <div style="background:#000;color:#fff">f</div>
        <div style="background-color:#123456"><span style="color:#123457">g</span>h</div>
        <div style="opacity:0">i<span style="opacity:1">j</span></div>
        <div style="width:0;overflow:hidden">k</div><span style="width:0;overflow:hidden">l</span>
        <div style="clip-path:inset(50%)">m</div><p hidden>n</p><font color="#ffffff">o</font>"##;
    assert_eq!(seen(html).split_whitespace().collect::<String>(), "bdfhl");
}

#[test]
fn unknown_backgrounds_and_sheets_are_not_guessed() {
    // White text over a background image, or with linked sheets unread, is not hidden;
    // a zero font size then hides only the element's own text.
    let html = r#"<div style="background:url(bg.png)"><span style="color:#fff">a</span></div>
        <span style="color:#fff">b</span><div style="font-size:0">c<p>d</p></div>"#;
    assert_eq!(seen(html).split_whitespace().collect::<String>(), "a");
    let incomplete = LinkedSheets {
        sheets: &[],
        complete: false,
    };
    assert_eq!(
        seen_with(html, incomplete)
            .split_whitespace()
            .collect::<String>(),
        "abd"
    );
}

#[test]
fn flex_order_restores_the_reading_order() {
    let html = r#"<style>.q{display:inline-flex;flex-wrap:wrap}</style><p><span class="q">
        <span style="order:3">下所未到</span> <span style="order:1">余游幕</span>
        <span style="order:2">三十年来，天</span></span>。</p>
        <p><span style="display:flex"><i style="order:2">b</i><i style="order:1">a</i></span></p>
        <p><span><i style="order:2">y</i><i style="order:1">x</i></span></p>"#;
    assert_eq!(
        seen(html).split_whitespace().collect::<String>(),
        "余游幕三十年来，天下所未到。abyx"
    );
}

#[test]
fn generated_content_is_text_a_reader_sees() {
    let html = r#"<style>.a::before{content:"天"} .a:after{content:"下"} .h::before{content:"x";display:none}
        .n::after{content:none}</style><p><span class="a">之</span><span class="h">。</span><span class="n">的</span></p>"#;
    assert_eq!(
        seen(html).split_whitespace().collect::<String>(),
        "天之下。的"
    );
}

#[test]
fn images_inside_a_text_run_become_named_glyphs() {
    let html = r#"<p>话说<img src="zt/1.png" class="zt" alt="">到大怒、<img src="zt/2.png" alt="斧">急者
        <img src="photo.jpg" width="600"> <a href="x"><img src="icon.png"></a>。</p>
        <p><img src="a.png">开头<img src="zt/1.png">再<img>见<img src="blank.gif" data-src="zt/9.png">了</p>"#;
    let text = seen(html);
    let name = |n: u32| char::from_u32(FIRST_NAMED_GLYPH as u32 + n).unwrap();
    // One picture, one character, wherever it is drawn; no picture, the placeholder.
    assert_eq!(
        text.split_whitespace().collect::<String>(),
        format!(
            "话说{}到大怒、斧急者。{}开头{}再{GLYPH_PLACEHOLDER}见{}了",
            name(0),
            name(1),
            name(0),
            name(2)
        )
    );
    // People are shown every named glyph as the replacement character.
    assert_eq!(
        copyhound_core::model::shown_text(&format!("甲{}{}乙", name(0), name(0xFFFC))),
        format!("甲{GLYPH_PLACEHOLDER}{GLYPH_PLACEHOLDER}乙")
    );
}

#[test]
fn linked_sheets_count_and_unscreened_media_does_not() {
    let sheet = ".d{display:none} @media print{.p{display:none}} @media (max-width:600px){.m{display:none}}";
    let html = r#"<style media="print">.s{display:none}</style>
        <p><span class="d">a</span><span class="p">b</span><span class="m">c</span><span class="s">d</span></p>"#;
    let sheets = [sheet];
    let linked = LinkedSheets {
        sheets: &sheets,
        complete: true,
    };
    assert_eq!(
        seen_with(html, linked)
            .split_whitespace()
            .collect::<String>(),
        "bcd"
    );
    let document = Html::parse_document(
        r#"<link rel="stylesheet" href="/a.css"><link rel="alternate stylesheet" href="/b.css">
           <link rel="stylesheet" media="print" href="/c.css"><link rel="icon" href="/i.png">
           <link rel="Stylesheet" media="screen and (min-width:1px)" href=" d.css ">"#,
    );
    assert_eq!(linked_sheet_hrefs(&document), ["/a.css", "d.css"]);
}

#[test]
fn selector_keys_and_specificity() {
    assert!(matches!(rightmost_key("div.a > p#b"), Key::Id(id) if id == "b"));
    assert!(matches!(rightmost_key(".x .y:not(.z)"), Key::Class(c) if c == "y"));
    assert!(matches!(rightmost_key("UL li"), Key::Tag(t) if t == "li"));
    assert!(matches!(rightmost_key("[data-x] *"), Key::Any));
    assert!(specificity("#a") > specificity(".a.b.c"));
    assert!(specificity(".a") > specificity("div p span"));
    assert_eq!(specificity("p:where(.a, #b)"), specificity("p"));
    assert_eq!(
        split_selector_list("a, b:is(c, d) ,e"),
        ["a", "b:is(c, d)", "e"]
    );
    assert_eq!(
        strip_pseudo_element(".a::before"),
        Some((".a", Pseudo::Before))
    );
    assert_eq!(strip_pseudo_element("p::first-line"), None);
    assert_eq!(strip_pseudo_element("p:has(a)"), None);
}

#[test]
fn hostile_css_is_bounded() {
    // A huge sheet of rules that all match every element: the test budget ends it.
    let mut css = String::from("<style>");
    for i in 0..30_000 {
        css.push_str(&format!("* .c{i}, p {{ color: red }}\n"));
    }
    css.push_str("</style>");
    let body = "<p>x</p>".repeat(2000);
    let mut document = Html::parse_document(&format!("{css}{body}"));
    let applied = apply(&mut document, LinkedSheets::default());
    assert!(applied.truncated.is_some(), "{applied:?}");
}

/// `levels` selector-taking pseudo-classes around a descendant combinator
/// that never matches: testing one walks the ancestors `levels + 1` deep.
fn costly_selector(levels: usize) -> String {
    let mut selector = String::from("span");
    for _ in 0..levels {
        selector = format!(":is({selector} div)");
    }
    selector
}

/// A decoy the page hides, under `depth` nested `div`s, with `rules` costly rules.
fn costly_page(depth: usize, levels: usize, rules: usize) -> String {
    let css: String = (0..rules)
        .map(|index| format!("{} {{ color: #00{index:04} }}\n", costly_selector(levels)))
        .collect();
    format!(
        "<style>.dk{{display:none}}\n{css}</style>{}<p>原文<i class=\"dk\">假</i></p>{}",
        "<div>".repeat(depth),
        "</div>".repeat(depth)
    )
}

#[test]
fn selectors_too_costly_to_match_are_dropped() {
    for cheap in [
        "div :not(:is(p span))",
        ".a:not(.b, .c) > p",
        "ul > li + li ~ li",
        ".prose :where(a):not(:where([class~=\"not prose\"] *))",
        ".w-\\[calc\\(100\\%-2rem\\)\\]",
        "p:nth-child(2n + 1) a",
    ] {
        assert!(is_cheap(cheap), "{cheap}");
    }
    for costly in [
        costly_selector(3).as_str(),
        ":is(:is(span div) div) div",
        ":not(:is(div :not(:is(span p)) p)) a",
        ":not(:not(:not(:not(:not(div)))))",
    ] {
        assert!(!is_cheap(costly), "{costly}");
    }
    // Three levels over 200 nested divs: seconds per rule when matched.
    let mut document = Html::parse_document(&costly_page(200, 3, 10));
    let applied = apply(&mut document, LinkedSheets::default());
    assert!(!applied.read_as_markup, "{applied:?}");
    assert!(
        applied
            .truncated
            .unwrap()
            .contains("10 CSS selectors too costly")
    );
    assert_eq!(applied.hidden, 1, "the cheap rule still applies");
}

#[test]
fn a_cascade_out_of_time_reads_the_page_as_markup() {
    // Two levels are kept, but 200 such rules over 200 nested divs take
    // seconds: the budget ends the cascade and nothing is applied.
    let html = costly_page(200, 2, 200);
    let mut document = Html::parse_document(&html);
    let applied = apply_within(
        &mut document,
        LinkedSheets::default(),
        Duration::from_millis(50),
    );
    assert!(applied.read_as_markup, "{applied:?}");
    assert_eq!(applied.hidden, 0);
    assert!(applied.truncated.unwrap().contains("read as markup"));
    assert!(document.root_element().text().any(|text| text == "假"));
    // A budget spent before the first test: the same, on any page.
    let mut document = Html::parse_document(&costly_page(3, 0, 1));
    let applied = apply_within(&mut document, LinkedSheets::default(), Duration::ZERO);
    assert!(applied.read_as_markup);
    let mut document = Html::parse_document(&costly_page(3, 0, 1));
    assert_eq!(apply(&mut document, LinkedSheets::default()).hidden, 1);
}
