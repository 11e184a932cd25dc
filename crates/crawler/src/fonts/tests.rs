use super::testfont::{TestGlyph, build_font};
use super::*;

/// Characters of the reference font, each drawn as its own boxes.
const REAL: &str = "的一是了不在有人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处队南给色光门即保治北造百规热领七海口东导器压志世金增争济阶油思术极交受联什认六共权收证改清己美再采转更单风切打白教速花带安场身车例真务具万每目至达走积示议声报斗完类八离华名确才科张信马节话米整空元况今集温传土许步群广石记需段研界拉林律叫且究观越织装影算低持音众书布复容儿须际商非验连断深难近矿千周委素技备半办青省列习响约支般史感劳便团往酸历市克何除消构府称太准精值号率族维划选标写存候毛亲快效斯院查江型眼王按格养易置派层片始却专状育厂京识适属圆包火住调满县局照参红细引听该铁价严";

fn reference_font() -> (Vec<u8>, Vec<char>) {
    let mut seen = std::collections::HashSet::new();
    let characters: Vec<char> = REAL.chars().filter(|c| seen.insert(*c)).collect();
    let glyphs: Vec<TestGlyph> = (0..characters.len())
        .map(|at| TestGlyph::boxes(at as u32 + 1, 1000))
        .collect();
    let cmap: Vec<(char, u16)> = characters
        .iter()
        .enumerate()
        .map(|(at, c)| (*c, at as u16 + 1))
        .collect();
    (build_font(1000, &glyphs, &cmap), characters)
}

fn reference() -> ReferenceIndex {
    let (font, _) = reference_font();
    let index = ReferenceIndex::from_fonts([("reference".to_string(), font.as_slice())]);
    assert!(index.len() >= 300, "{}", index.len());
    index
}

#[test]
fn private_use_code_points_read_as_the_characters_they_draw() {
    let index = reference();
    let (_, characters) = reference_font();
    // A site font at another units-per-em drawing 的一是… at U+E000…
    let glyphs: Vec<TestGlyph> = (0..40)
        .map(|at| TestGlyph::boxes(at as u32 + 1, 1000).scaled(2))
        .collect();
    let cmap: Vec<(char, u16)> = (0..40)
        .map(|at| (char::from_u32(0xE000 + at).unwrap(), at as u16 + 1))
        .collect();
    let site = build_font(2000, &glyphs, &cmap);
    let map = decode_font(&site, &index).unwrap();
    assert!(map.is_decoding());
    assert_eq!(map.changed(), 40);
    let hidden: String = "\u{E000}\u{E001}\u{E002}x\u{E003}".to_string();
    let expected: String = [
        characters[0],
        characters[1],
        characters[2],
        'x',
        characters[3],
    ]
    .iter()
    .collect();
    assert_eq!(map.rewrite(&hidden), expected);
}

#[test]
fn shuffled_glyphs_read_as_what_they_draw() {
    let index = reference();
    let (_, characters) = reference_font();
    // 的 drawn as 一, 一 as 是 …: a rotation of the first 30 characters.
    let glyphs: Vec<TestGlyph> = (0..30)
        .map(|at| TestGlyph::boxes(at as u32 + 1, 1000))
        .collect();
    let cmap: Vec<(char, u16)> = (0..30)
        .map(|at| (characters[at], ((at + 1) % 30) as u16 + 1))
        .collect();
    let map = decode_font(&build_font(1000, &glyphs, &cmap), &index).unwrap();
    let text: String = characters[..3].iter().collect();
    let expected: String = characters[1..4].iter().collect();
    assert_eq!(map.rewrite(&text), expected);
    assert_eq!(
        map.rewrite("abc"),
        "abc",
        "code points outside the font stay"
    );
}

#[test]
fn blank_decoys_are_dropped_and_spaces_kept() {
    let index = reference();
    let (_, characters) = reference_font();
    let mut glyphs: Vec<TestGlyph> = (0..20)
        .map(|at| TestGlyph::boxes(at as u32 + 1, 1000))
        .collect();
    glyphs.push(TestGlyph::blank(0));
    glyphs.push(TestGlyph::blank(250));
    let blank = glyphs.len() as u16 - 1;
    let space = glyphs.len() as u16;
    let mut cmap: Vec<(char, u16)> = (0..20).map(|at| (characters[at], at as u16 + 1)).collect();
    cmap.extend((20..40).map(|at| (characters[at], blank)));
    cmap.push((' ', space));
    let map = decode_font(&build_font(1000, &glyphs, &cmap), &index).unwrap();
    let text: String = [
        characters[0],
        characters[25],
        characters[1],
        ' ',
        characters[30],
    ]
    .iter()
    .collect();
    let expected: String = [characters[0], characters[1], ' '].iter().collect();
    assert_eq!(map.rewrite(&text), expected);
}

#[test]
fn a_normal_font_changes_nothing() {
    let index = reference();
    let (font, characters) = reference_font();
    let map = decode_font(&font, &index).unwrap();
    assert!(!map.is_decoding());
    assert_eq!(map.changed(), 0);
    assert_eq!(map.honest, characters.len());
    let text: String = characters[..10].iter().collect();
    assert_eq!(map.rewrite(&text), text);
}

#[test]
fn unknown_private_use_glyphs_become_placeholders() {
    let index = reference();
    // Drawings no reference has: the reference's, three times the size.
    let glyphs: Vec<TestGlyph> = (0..10)
        .map(|at| TestGlyph::boxes(at as u32 + 1, 1000).scaled(3))
        .collect();
    let cmap: Vec<(char, u16)> = (0..10)
        .map(|at| (char::from_u32(0xE100 + at).unwrap(), at as u16 + 1))
        .collect();
    let map = decode_font(&build_font(1000, &glyphs, &cmap), &index).unwrap();
    assert_eq!(map.rewrite("\u{E100}a"), format!("{GLYPH_PLACEHOLDER}a"));
}

#[test]
fn few_changes_change_nothing_and_garbage_is_an_error() {
    let index = reference();
    let (_, characters) = reference_font();
    let glyphs = vec![TestGlyph::boxes(2, 1000)];
    let map = decode_font(&build_font(1000, &glyphs, &[(characters[0], 1)]), &index).unwrap();
    assert_eq!(map.changed(), 1);
    assert_eq!(
        map.rewrite(&characters[0].to_string()),
        characters[0].to_string()
    );
    assert!(decode_font(b"not a font at all", &index).is_err());
    assert!(decode_font(b"wOF2\0\0\0\0\0\0\0\0\0\0\0\0\xff\xff\xff\xff", &index).is_err());
    assert!(matches!(
        decode_font(&vec![0u8; MAX_FONT_BYTES + 1], &index),
        Err(FontError::TooLarge(_))
    ));
}

mod applying {
    use std::sync::Arc;

    use scraper::Html;

    use super::*;
    use crate::fonts::apply::{FontRef, PageCss, apply_fonts};

    /// A site font drawing U+E000… as the reference's first 40 characters.
    fn pua_map() -> Arc<FontMap> {
        let glyphs: Vec<TestGlyph> = (0..40)
            .map(|at| TestGlyph::boxes(at as u32 + 1, 1000))
            .collect();
        let cmap: Vec<(char, u16)> = (0..40)
            .map(|at| (char::from_u32(0xE000 + at).unwrap(), at as u16 + 1))
            .collect();
        Arc::new(decode_font(&build_font(1000, &glyphs, &cmap), &reference()).unwrap())
    }

    const PAGE: &str = r#"<html><head><style>
        /* the site font */
        @font-face { font-family: "SiteFont"; src: url("../font/a.woff2") format("woff2"); }
        @media screen { .content { font-family: 'SiteFont', "Microsoft YaHei", sans-serif; } }
        .content .plain { font-family: Arial; }
        </style></head><body>
        <div class="content"><p id="in">&#xE000;&#xE001;</p><span class="plain">&#xE000;</span></div>
        <p id="out">&#xE000;</p>
        <p id="inline" style="color:red; font: 16px/1.5 SiteFont, serif">&#xE002;</p>
        </body></html>"#;

    fn read(html: &str, map: Option<Arc<FontMap>>) -> (String, Vec<FontRef>) {
        let mut document = Html::parse_document(html);
        let css: Vec<String> = document
            .select(&scraper::Selector::parse("style").unwrap())
            .map(|style| style.text().collect())
            .collect();
        let pieces: Vec<PageCss<'_>> = css
            .iter()
            .map(|text| PageCss { sheet: None, text })
            .collect();
        let lookup = move |font: &FontRef| {
            assert_eq!(font.url, "../font/a.woff2");
            map.clone().map(Some)
        };
        let applied = apply_fonts(&mut document, &pieces, &lookup);
        let body: String = document
            .select(&scraper::Selector::parse("body").unwrap())
            .flat_map(|body| body.text())
            .filter(|text| !text.trim().is_empty())
            .map(str::trim)
            .collect::<Vec<_>>()
            .join("|");
        (body, applied.unread)
    }

    #[test]
    fn text_under_the_font_is_read_as_drawn_and_only_there() {
        let (_, characters) = reference_font();
        let (text, unread) = read(PAGE, Some(pua_map()));
        assert!(unread.is_empty());
        let expected = format!(
            "{}{}|\u{E000}|\u{E000}|{}",
            characters[0], characters[1], characters[2]
        );
        assert_eq!(text, expected);
    }

    #[test]
    fn fonts_not_at_hand_are_reported_and_change_nothing() {
        let (text, unread) = read(PAGE, None);
        assert_eq!(unread.len(), 1);
        assert_eq!(unread[0].sheet, None);
        assert_eq!(text, "\u{E000}\u{E001}|\u{E000}|\u{E000}|\u{E002}");
    }

    #[test]
    fn a_page_without_font_faces_is_left_alone() {
        let html = "<p style=\"font-family: SiteFont\">&#xE000;</p>";
        let (text, unread) = read(html, Some(pua_map()));
        assert!(unread.is_empty());
        assert_eq!(text, "\u{E000}");
    }
}

mod fuzz {
    use proptest::prelude::*;

    use super::*;

    /// Built once: the reference index is the slow part of a case.
    fn shared_reference() -> &'static ReferenceIndex {
        static INDEX: std::sync::OnceLock<ReferenceIndex> = std::sync::OnceLock::new();
        INDEX.get_or_init(reference)
    }

    fn site_font() -> Vec<u8> {
        let glyphs: Vec<TestGlyph> = (0..24).map(|at| TestGlyph::boxes(at + 1, 1000)).collect();
        let cmap: Vec<(char, u16)> = (0..24)
            .map(|at| (char::from_u32(0xE000 + at).unwrap(), at as u16 + 1))
            .collect();
        build_font(1000, &glyphs, &cmap)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 128, failure_persistence: None, ..ProptestConfig::default() })]

        /// A web font is hostile input: any bytes decode or fail with an error.
        #[test]
        fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..4096)) {
            let _ = decode_font(&bytes, shared_reference());
        }

        /// A real font with bytes changed anywhere (tables, offsets, outlines)
        /// decodes or fails with an error.
        #[test]
        fn a_corrupted_font_never_panics(edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..16)) {
            let mut font = site_font();
            for (at, byte) in edits {
                let at = at.index(font.len());
                font[at] = byte;
            }
            let _ = decode_font(&font, shared_reference());
            let mut woff = b"wOFF".to_vec();
            woff.extend_from_slice(&font);
            let _ = decode_font(&woff, shared_reference());
        }
    }
}

/// A cmap group that claims every 32-bit code point is walked only up to the
/// visit cap: the font decodes (truncated) instead of spinning for hours.
#[test]
fn a_cmap_group_of_four_billion_code_points_is_cut_short() {
    let glyphs = vec![TestGlyph::boxes(1, 1000)];
    let mut font = build_font(1000, &glyphs, &[('\u{E000}', 1)]);
    let mut group = Vec::new();
    group.extend_from_slice(&0xE000u32.to_be_bytes());
    group.extend_from_slice(&0xE000u32.to_be_bytes());
    group.extend_from_slice(&1u32.to_be_bytes());
    let at = font
        .windows(group.len())
        .position(|window| window == group.as_slice())
        .unwrap();
    font[at..at + 4].copy_from_slice(&0u32.to_be_bytes());
    font[at + 4..at + 8].copy_from_slice(&u32::MAX.to_be_bytes());
    let map = decode_font(&font, &reference()).unwrap();
    assert!(map.truncated, "the walk stopped early");
}
