use super::*;

const CHAPTER: &str = r#"<!DOCTYPE html><html><head><meta charset="gbk"><title>第12章 长安士女观灯行乐（1/3）_白话说唐_笔趣阁</title>
<script>var bookid=1;</script><style>.x{}</style></head><body>
<div class="header"><a href="33098/index.html">返回</a><span class="title">白话说唐</span><a href="../index.html">首页</a></div>
<div class="nr_title" id="nr_title">第12章 长安士女观灯行乐（1/3）</div>
<div class="nr_page"><a href="33098_10.html">上一章</a> <a href="33098/index.html">目录</a> <a href="33098_12.html">下一章</a></div>
<div id="nr"><div id="nr1"><div class="ad_top">笔趣阁提示您：看后求收藏，接着再看更方便。</div>　　叔宝众人出了酒店，行至街上，见灯烛辉煌，如同白昼。及看到司马衙门前，见一个灯楼，却是彩缎装成。<br /><br />
　　周祚呈祥，贤圣降凡邦有道。<br /><br />
　　众人看罢，过了兵部衙门，行到杨越公府东首来，这些附近百姓人家门首，各搭一个小小灯栅，设天子牌位，点灯梦香供花，以示与民同乐的意思。<br /><br />
<p>（本章完）</p></div></div><script>document.write('<div class="ad">本站无弹窗</div>');</script>
<div class="nr_page">第1/3页 <a href="33098_11.html">[1]</a> <a href="33098_11_2.html">[2]</a> <a href="33098_11_2.html">下一页</a></div>
<p class="tip">手机用户请浏览 m.yitt604.la 阅读，更优质的阅读体验。</p><div class="footer">Copyright &#169; 2018 笔趣阁</div></body></html>"#;

#[test]
fn finds_the_content_block_title_heading_and_next_page() {
    let extracted = extract(CHAPTER, &ExtractionHints::default());
    assert_eq!(
        extracted.title,
        "第12章 长安士女观灯行乐（1/3）_白话说唐_笔趣阁"
    );
    assert_eq!(extracted.heading, "第12章 长安士女观灯行乐（1/3）");
    assert!(
        extracted.text.starts_with("　　叔宝众人出了酒店"),
        "{}",
        extracted.text
    );
    assert!(
        extracted
            .text
            .contains("\n　　周祚呈祥，贤圣降凡邦有道。\n")
    );
    assert!(extracted.text.ends_with("（本章完）"));
    assert!(
        !extracted.text.contains("看后求收藏"),
        "ads inside the block are dropped"
    );
    assert!(!extracted.text.contains("手机用户"));
    assert!(!extracted.text.contains("本站无弹窗"));
    assert_eq!(extracted.next_page_url.as_deref(), Some("33098_11_2.html"));
    assert!(extracted.links.contains(&"33098_12.html".to_string()));
    assert_eq!(
        extracted
            .links
            .iter()
            .filter(|link| *link == "33098_11_2.html")
            .count(),
        1
    );
}

#[test]
fn next_chapter_is_not_a_next_page() {
    let html = r#"<div><a href="c2.html" rel="next">Next Chapter</a><a href="c3.html">下一章</a></div><p>text</p>"#;
    assert_eq!(
        extract(html, &ExtractionHints::default()).next_page_url,
        None
    );
    let html = r#"<div><a href="p2.html">Next Page</a></div>"#;
    assert_eq!(
        extract(html, &ExtractionHints::default())
            .next_page_url
            .as_deref(),
        Some("p2.html")
    );
}

#[test]
fn paragraphs_and_sections_are_kept() {
    let body: String = (0..20)
        .map(|i| format!("<p>段落{i}：且说棣华扶了母亲过来，伏侍坐下。</p>"))
        .collect();
    let html = format!(
        r#"<html><body><nav><a href="/">首页</a><a href="/a">玄幻小说</a></nav><div class="rich_media"><h1>出关（上）</h1>
        <div class="rich_media_content"><section>{body}</section><section>{body}</section></div></div>
        <div class="footer">本站所有小说为转载作品</div></body></html>"#
    );
    let extracted = extract(&html, &ExtractionHints::default());
    assert_eq!(extracted.heading, "出关（上）");
    assert_eq!(extracted.text.lines().count(), 40, "{}", extracted.text);
    assert!(extracted.is_content());
    assert!(!extracted.text.contains("首页"));
    assert!(!extracted.text.contains("转载"));
}

#[test]
fn hints_override_detection() {
    let html = r#"<div id="a">短的正文</div><div id="b"><p>很长很长的一段导航文字，不是正文，不是正文，不是正文，不是正文。</p></div><a class="nx" href="p2">›</a>"#;
    let hints = ExtractionHints {
        content_selector: Some("#a".into()),
        next_page_selector: Some("a.nx".into()),
        render: Default::default(),
    };
    let extracted = extract(html, &hints);
    assert_eq!(extracted.text, "短的正文");
    assert_eq!(extracted.next_page_url.as_deref(), Some("p2"));
}

#[test]
fn hostile_pages_are_bounded() {
    let links: String = (0..100_000)
        .map(|i| format!("<a href=\"/l{i}\">l{i}</a>"))
        .collect();
    let extracted = extract(
        &format!("<html><body>{links}</body></html>"),
        &ExtractionHints::default(),
    );
    assert_eq!(extracted.links.len(), DEFAULT_MAX_LINKS);
    assert!(!extracted.is_content());

    let deep = format!(
        "{}正文{}",
        "<div>".repeat(100_000),
        "</div>".repeat(100_000)
    );
    let started = std::time::Instant::now();
    assert!(
        extract(&deep, &ExtractionHints::default())
            .text
            .contains("正文")
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(2),
        "deep nesting is not parsed"
    );

    let broken = "<html><body><div><p>未闭合的段落<div><table><tr><td>单元格</b></i></html></html><<>>&#xZZ;";
    let extracted = extract(broken, &ExtractionHints::default());
    assert!(extracted.text.contains("单元格"), "{extracted:?}");
    assert!(extract("", &ExtractionHints::default()).text.is_empty());
}

#[test]
fn numbered_pagination_without_a_next_link() {
    let html = r#"<div class="t_f"><p>正文</p></div><div class="pgs">第2/8页 <a href="t-1.html">[1]</a> <a href="t-2.html">[2]</a> <a href="t-3.html">[3]</a></div>"#;
    assert_eq!(
        extract(html, &ExtractionHints::default())
            .next_page_url
            .as_deref(),
        Some("t-3.html")
    );
    let last = r#"<div>第3/3页 <a href="t-1.html">[1]</a> <a href="t-3.html">[3]</a></div>"#;
    assert_eq!(
        extract(last, &ExtractionHints::default()).next_page_url,
        None
    );
}

#[test]
fn svg_text_is_read_in_reading_order() {
    let paragraph =
        "第一条 为了规范农民专业合作社的组织和行为，鼓励、支持、引导农民专业合作社的发展。";
    let html = format!(
        r#"<html><body><div class="nav"><a href="/">首页</a></div><div id="content">
        <div class="svgp"><svg width="610" height="72" font-size="20"><text x="200" y="26">专业合作社的组织</text><text x="0" y="26">第一条 为了规范农民</text><text x="360" y="26">和行为，鼓励、</text><text x="0" y="58">支持、引导农民专业合作社的发展。</text></svg></div>
        <div class="svgp"><svg font-size="20"><text y="26"><tspan x="100">二段落的文字</tspan><tspan x="0">这是第</tspan></text></svg></div>
        <p>{}</p></div></body></html>"#,
        "正文".repeat(120)
    );
    let text = extract(&html, &ExtractionHints::default()).text;
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    assert_eq!(lines[0], paragraph, "{text}");
    assert_eq!(lines[1], "这是第二段落的文字");
}
