//! Test data and helpers shared by the binary's end-to-end tests.
#![allow(dead_code)] // each test binary uses its part

/// The registered chapter of the samples (a news article, 858 characters).
pub const CHAPTER: &str = include_str!("../../samples/registered-chapter.txt");
/// A pirate page that copies [`CHAPTER`].
pub const PIRATED: &[u8] = include_bytes!("../../samples/pirated-page.html");

/// Deterministic filler text from common characters (xorshift, fixed seed).
pub fn filler(chars: usize, seed: u64) -> String {
    const COMMON: &str = "的一是了我不人在他有这个上们来到时大地为子中你说生国年着就那和要她出也得里后自以会家可下而过天去能对小多然于心学么之都好看起发当没成只如事把还用第样道想作种开美总从无情己面最女但现前些所同日手又行意动方期它头经长儿回位分爱老因很给名法间斯知世什两次使身者被高已亲其进此话常与活正感";
    let alphabet: Vec<char> = COMMON.chars().collect();
    let mut state = seed.max(1);
    let mut out = String::new();
    for index in 0..chars {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        out.push(alphabet[(state % alphabet.len() as u64) as usize]);
        if index % 40 == 39 {
            out.push_str("。\n");
        }
    }
    out
}

/// A loopback port nothing listens on (the listener is dropped at once).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A plain HTML page of `body`'s lines as paragraphs.
pub fn page(title: &str, body: &str) -> String {
    let paragraphs: String = body
        .lines()
        .map(|line| format!("<p>{line}</p>\n"))
        .collect();
    format!(
        "<html><head><meta charset=\"utf-8\"><title>{title}</title></head><body><h1>{title}</h1>\n<div id=\"content\">{paragraphs}</div></body></html>"
    )
}
