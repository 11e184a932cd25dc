//! The farm's plan, fixed by the seed: the works and their chapters
//! (synthetic, Chinese-like, distinct per work), the publisher's release
//! timetable, the sites (address, layout, robots.txt, which works they carry,
//! how they copy) and every copy with the second it appears.

use std::collections::HashMap;
use std::net::Ipv4Addr;

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Chapters of every work registered before the timed phase (and copied by
/// the sites that carry the work from the start).
pub const INITIAL_CHAPTERS: usize = 2;
/// Shortest delay of a copy after its release, seconds.
pub const MIN_DELAY_SECONDS: f64 = 10.0;
/// Requests per second the bench registers every site with.
pub const SITE_RATE_PER_SECOND: f64 = 1.0;
/// The path robots.txt disallows on the sites that have one.
pub const DISALLOWED_PREFIX: &str = "/vip/";

/// One registered chapter.
#[derive(Clone, Debug)]
pub struct Chapter {
    /// `c_0001`, ...
    pub id: String,
    /// `第3章 ...`.
    pub title: String,
    /// Paragraphs.
    pub paragraphs: Vec<String>,
}

impl Chapter {
    /// The text registered (paragraphs one a line).
    pub fn text(&self) -> String {
        self.paragraphs.join("\n")
    }
}

/// One work and its timetable.
#[derive(Clone, Debug)]
pub struct Work {
    /// `lat-w01`, ...
    pub id: String,
    /// Display title.
    pub title: String,
    /// Author.
    pub author: String,
    /// Every chapter, the initial ones first, then one per release.
    pub chapters: Vec<Chapter>,
    /// Seconds into the timed phase at which chapter `INITIAL_CHAPTERS + i`
    /// is registered.
    pub releases: Vec<f64>,
}

/// How a site lays its URLs out.
#[derive(Clone, Copy, Debug)]
pub enum Layout {
    /// `/book/{n}/`, `/book/{n}/{k}.html`, `/book/{n}/{k}_2.html`.
    Book,
    /// `/novel{n}/index.html`, `/novel{n}/chapter-{k}.html`, `-2.html`.
    Novel,
    /// `/html/{n}/`, `/html/{n}/{k}.shtml`, `/html/{n}/{k}_2.shtml`.
    Html,
}

/// What a site's robots.txt says.
#[derive(Clone, Debug, Default)]
pub struct Robots {
    /// `Crawl-delay` in seconds.
    pub crawl_delay: Option<u32>,
    /// Whether `DISALLOWED_PREFIX` is disallowed (and linked from the home page).
    pub disallow: bool,
}

impl Robots {
    /// The file's text.
    pub fn text(&self) -> String {
        let mut text = String::from("User-agent: *\n");
        if self.disallow {
            text.push_str(&format!("Disallow: {DISALLOWED_PREFIX}\n"));
        } else {
            text.push_str("Disallow:\n");
        }
        if let Some(delay) = self.crawl_delay {
            text.push_str(&format!("Crawl-delay: {delay}\n"));
        }
        text
    }
}

/// How a site mutates what it copies.
#[derive(Clone, Copy, Debug, Default)]
pub struct Mutation {
    /// Share of characters swapped for a homophone.
    pub homophones: f64,
    /// Share of characters replaced by another (typos).
    pub typos: f64,
    /// Ad lines injected between paragraphs.
    pub ads: bool,
}

/// One piracy site.
#[derive(Clone, Debug)]
pub struct Site {
    /// Display name.
    pub name: String,
    /// Its own loopback address (127.0.0.2, ...).
    pub ip: Ipv4Addr,
    /// URL layout.
    pub layout: Layout,
    /// Book number offset in its URLs.
    pub book_base: usize,
    /// robots.txt.
    pub robots: Robots,
    /// Works carried (indexes into `Plan::works`).
    pub works: Vec<usize>,
    /// Whether chapters are split over two pages.
    pub split: bool,
    /// Mutations of the copied text.
    pub mutation: Mutation,
    /// The site's usual delay after a release, seconds.
    pub base_delay: f64,
}

impl Site {
    fn book(&self, work: usize) -> usize {
        self.book_base + work * 7
    }

    /// The table of contents of `work`.
    pub fn toc_path(&self, work: usize) -> String {
        let n = self.book(work);
        match self.layout {
            Layout::Book => format!("/book/{n}/"),
            Layout::Novel => format!("/novel{n}/index.html"),
            Layout::Html => format!("/html/{}/", n + 1000),
        }
    }

    /// Page `part` (0 or 1) of chapter `chapter` of `work`.
    pub fn chapter_path(&self, work: usize, chapter: usize, part: usize) -> String {
        let n = self.book(work);
        let k = chapter + 1;
        match (self.layout, part) {
            (Layout::Book, 0) => format!("/book/{n}/{k}.html"),
            (Layout::Book, _) => format!("/book/{n}/{k}_2.html"),
            (Layout::Novel, 0) => format!("/novel{n}/chapter-{k}.html"),
            (Layout::Novel, _) => format!("/novel{n}/chapter-{k}-2.html"),
            (Layout::Html, 0) => format!("/html/{}/{}.shtml", n + 1000, k + 4000),
            (Layout::Html, _) => format!("/html/{}/{}_2.shtml", n + 1000, k + 4000),
        }
    }

    /// Pages one copy takes on this site.
    pub fn parts(&self) -> usize {
        if self.split { 2 } else { 1 }
    }
}

/// One copy of a chapter on a site.
#[derive(Clone, Debug)]
pub struct Copy {
    /// Index into `Plan::sites`.
    pub site: usize,
    /// Index into `Plan::works`.
    pub work: usize,
    /// Index into the work's chapters.
    pub chapter: usize,
    /// Seconds into the timed phase at which the site lists it; `None`: on
    /// the site from the start (an initial chapter, not timed).
    pub appears: Option<f64>,
}

/// What a path of a site serves.
#[derive(Clone, Copy, Debug)]
pub enum PageRef {
    /// A work's table of contents.
    Toc(usize),
    /// Part `part` of the copy `copy` (index into `Plan::copies`).
    Chapter { copy: usize, part: usize },
}

/// The whole farm and timetable.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The works.
    pub works: Vec<Work>,
    /// The sites.
    pub sites: Vec<Site>,
    /// Every copy that will be on a site, initial ones included.
    pub copies: Vec<Copy>,
    /// Per site: path to page.
    pub paths: Vec<HashMap<String, PageRef>>,
    /// Released chapters no site copies in the window: never copied by a
    /// site that carries the work.
    pub never_copied: usize,
    /// Copies that would appear after the window (not counted).
    pub after_window: usize,
    /// Length of the timed phase, seconds.
    pub phase_seconds: f64,
    /// No copy appears after this second of the timed phase.
    pub last_appearance: f64,
}

/// Parameters of a plan.
#[derive(Clone, Copy, Debug)]
pub struct PlanParams {
    /// Sites.
    pub sites: usize,
    /// Works.
    pub works: usize,
    /// Timed phase, seconds.
    pub phase_seconds: f64,
    /// Grace at its end, seconds.
    pub grace_seconds: f64,
    /// Longest copy delay, seconds.
    pub max_delay: f64,
    /// Seed.
    pub seed: u64,
}

impl Plan {
    /// The plan of `params`; the same parameters give the same plan.
    pub fn new(params: PlanParams) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(params.seed);
        let last_appearance = (params.phase_seconds - params.grace_seconds).max(MIN_DELAY_SECONDS);
        // Releases in [5 s, last appearance - the shortest delay].
        let release_end = (last_appearance - MIN_DELAY_SECONDS).max(6.0);
        let releases_per_work = ((release_end / 180.0).round() as usize).max(1);
        let works: Vec<Work> = (0..params.works)
            .map(|index| {
                let chapters = INITIAL_CHAPTERS + releases_per_work;
                let mut releases: Vec<f64> = (0..releases_per_work)
                    .map(|_| rng.random_range(5.0..=release_end))
                    .collect();
                releases.sort_by(f64::total_cmp);
                work(&mut rng, index, chapters, releases)
            })
            .collect();
        let mut sites: Vec<Site> = (0..params.sites)
            .map(|index| site(&mut rng, index, params.works, params.max_delay))
            .collect();
        // Every work is carried somewhere.
        for work in 0..params.works {
            if !sites.iter().any(|site| site.works.contains(&work)) && !sites.is_empty() {
                let at = rng.random_range(0..sites.len());
                sites[at].works.push(work);
            }
        }
        let mut copies = Vec::new();
        let mut never_copied = 0;
        let mut after_window = 0;
        for (site_index, site) in sites.iter().enumerate() {
            for &work_index in &site.works {
                for chapter in 0..INITIAL_CHAPTERS {
                    copies.push(Copy {
                        site: site_index,
                        work: work_index,
                        chapter,
                        appears: None,
                    });
                }
                for (release, at) in works[work_index].releases.iter().enumerate() {
                    if rng.random_bool(0.08) {
                        never_copied += 1;
                        continue;
                    }
                    let delay = (site.base_delay * rng.random_range(0.7..1.3))
                        .clamp(MIN_DELAY_SECONDS, params.max_delay.max(MIN_DELAY_SECONDS));
                    let appears = at + delay;
                    if appears > last_appearance {
                        after_window += 1;
                        continue;
                    }
                    copies.push(Copy {
                        site: site_index,
                        work: work_index,
                        chapter: INITIAL_CHAPTERS + release,
                        appears: Some(appears),
                    });
                }
            }
        }
        let paths = sites
            .iter()
            .enumerate()
            .map(|(site_index, site)| {
                let mut paths = HashMap::new();
                for &work in &site.works {
                    paths.insert(site.toc_path(work), PageRef::Toc(work));
                }
                for (copy_index, copy) in copies.iter().enumerate() {
                    if copy.site == site_index {
                        for part in 0..site.parts() {
                            paths.insert(
                                site.chapter_path(copy.work, copy.chapter, part),
                                PageRef::Chapter {
                                    copy: copy_index,
                                    part,
                                },
                            );
                        }
                    }
                }
                paths
            })
            .collect();
        Self {
            works,
            sites,
            copies,
            paths,
            never_copied,
            after_window,
            phase_seconds: params.phase_seconds,
            last_appearance,
        }
    }

    /// The copies timed (those that appear during the timed phase).
    pub fn timed(&self) -> impl Iterator<Item = (usize, &Copy)> {
        self.copies
            .iter()
            .enumerate()
            .filter(|(_, copy)| copy.appears.is_some())
    }

    /// The text of page `part` of `copy` as its site shows it: the chapter
    /// mutated as the site does (the same every time), one element a line.
    pub fn copied_paragraphs(&self, copy: &Copy, part: usize) -> Vec<String> {
        let site = &self.sites[copy.site];
        let chapter = &self.works[copy.work].chapters[copy.chapter];
        let mut rng = ChaCha8Rng::seed_from_u64(
            0x5eed ^ ((copy.site as u64) << 40) ^ ((copy.work as u64) << 20) ^ copy.chapter as u64,
        );
        let mut lines: Vec<String> = chapter
            .paragraphs
            .iter()
            .map(|paragraph| mutate(&mut rng, paragraph, site.mutation))
            .collect();
        if site.mutation.ads {
            let mut with_ads = Vec::new();
            for (index, line) in lines.into_iter().enumerate() {
                with_ads.push(line);
                if index % 5 == 2 {
                    with_ads.push(ad_line(&mut rng, site));
                }
            }
            lines = with_ads;
        }
        if site.parts() == 1 {
            return lines;
        }
        let half = lines.len().div_ceil(2);
        if part == 0 {
            lines.truncate(half);
            lines
        } else {
            lines.split_off(half)
        }
    }
}

// ---- text ----

/// Common two-character words of narrative Chinese.
const WORDS: &[&str] = &[
    "他们", "我们", "自己", "一个", "没有", "什么", "知道", "时候", "这里", "那里", "已经", "看见",
    "起来", "出来", "过去", "回来", "心里", "眼前", "身边", "外面", "门口", "屋里", "山上", "城中",
    "街上", "院子", "窗外", "天色", "夜里", "清晨", "午后", "黄昏", "忽然", "渐渐", "终于", "仍然",
    "似乎", "果然", "原来", "只是", "不过", "于是", "然后", "因为", "所以", "虽然", "但是", "如果",
    "便是", "还是", "不肯", "不敢", "不能", "可以", "应该", "必须", "想要", "打算", "决定", "答应",
    "吩咐", "问道", "笑道", "说道", "叹气", "点头", "摇头", "抬头", "低头", "回头", "转身", "站住",
    "坐下", "走进", "走出", "跑去", "追上", "拦住", "拿起", "放下", "打开", "关上", "握住", "推开",
    "消息", "事情", "东西", "银子", "书信", "宝剑", "马车", "灯笼", "茶水", "酒杯", "衣裳", "包袱",
    "朋友", "兄弟", "师父", "弟子", "掌柜", "伙计", "官差", "客人", "老人", "孩子", "姑娘", "公子",
    "江湖", "门派", "客栈", "衙门", "寺庙", "树林", "小路", "河边", "桥头", "渡口", "山谷", "村子",
    "心中", "脸上", "手中", "眼中", "口中", "声音", "脚步", "影子", "目光", "神色", "主意", "办法",
    "明白", "清楚", "奇怪", "害怕", "高兴", "着急", "安静", "热闹", "冷清", "寒冷", "温暖", "疲倦",
    "慢慢", "连忙", "赶紧", "立刻", "一直", "始终", "从来", "刚才", "后来", "今天", "明天", "昨夜",
];

/// Single characters that glue words into sentences.
const GLUE: &[&str] = &[
    "的", "了", "着", "在", "又", "也", "都", "就", "便", "才", "还", "却", "把", "被", "向", "往",
    "从", "对", "给", "跟", "和", "与", "将", "已", "不", "没", "很", "太", "更", "最",
];

const SURNAMES: &[&str] = &[
    "李", "王", "张", "刘", "陈", "杨", "赵", "黄", "周", "吴", "徐", "孙", "胡", "朱", "高", "林",
    "何", "郭", "马", "罗", "梁", "宋", "郑", "谢", "韩", "唐", "冯", "于", "董", "萧", "程", "曹",
];
const GIVEN: &[&str] = &[
    "云", "风", "青", "明", "远", "舟", "雪", "月", "川", "山", "凌", "霜", "子", "安", "宁", "清",
    "若", "尘", "星", "辰", "晚", "秋", "寒", "烟", "玉", "书", "墨", "澜", "飞", "鸿", "岚", "衡",
];
const PLACES: &[&str] = &[
    "临安", "洛阳", "金陵", "扬州", "姑苏", "长安", "汴梁", "襄阳", "成都", "大理", "燕京", "泉州",
    "青州", "幽州", "云州", "凉州", "岳阳", "江陵", "武昌", "桂林",
];
const TITLE_HEADS: &[&str] = &[
    "剑", "风", "雪", "云", "山", "河", "星", "月", "夜", "春", "秋", "江", "海", "天", "龙", "凤",
];
const TITLE_TAILS: &[&str] = &[
    "行", "录", "传", "记", "歌", "梦", "志", "谣", "问", "劫", "引", "辞",
];
const CHAPTER_WORDS: &[&str] = &[
    "夜", "雨", "归", "客", "旧", "约", "孤", "城", "初", "见", "远", "行", "江", "湖", "风", "波",
    "离", "别", "重", "逢", "暗", "流", "明", "灯", "长", "街", "古", "寺", "残", "局", "新", "局",
];

fn pick<'a>(rng: &mut ChaCha8Rng, from: &[&'a str]) -> &'a str {
    from[rng.random_range(0..from.len())]
}

fn name(rng: &mut ChaCha8Rng) -> String {
    let mut name = pick(rng, SURNAMES).to_string();
    name.push_str(pick(rng, GIVEN));
    if rng.random_bool(0.5) {
        name.push_str(pick(rng, GIVEN));
    }
    name
}

fn work(rng: &mut ChaCha8Rng, index: usize, chapters: usize, releases: Vec<f64>) -> Work {
    let title = format!(
        "{}{}{}",
        pick(rng, TITLE_HEADS),
        pick(rng, TITLE_HEADS),
        pick(rng, TITLE_TAILS)
    );
    // A vocabulary of its own: a third of the words, its characters, places.
    let mut vocabulary: Vec<&str> = WORDS.to_vec();
    vocabulary.shuffle(rng);
    vocabulary.truncate(WORDS.len() / 3);
    let people: Vec<String> = (0..5).map(|_| name(rng)).collect();
    let places: Vec<&str> = (0..3).map(|_| pick(rng, PLACES)).collect();
    let chapters = (0..chapters)
        .map(|chapter| {
            let heading: String = (0..4).map(|_| pick(rng, CHAPTER_WORDS)).collect();
            Chapter {
                id: format!("c_{:04}", chapter + 1),
                title: format!("第{}章 {heading}", chapter + 1),
                paragraphs: paragraphs(rng, &vocabulary, &people, &places, 1_800),
            }
        })
        .collect();
    Work {
        id: format!("lat-w{:02}", index + 1),
        title: format!("{title}·{}", index + 1),
        author: name(rng),
        chapters,
        releases,
    }
}

/// Paragraphs of at least `chars` characters in all.
fn paragraphs(
    rng: &mut ChaCha8Rng,
    vocabulary: &[&str],
    people: &[String],
    places: &[&str],
    chars: usize,
) -> Vec<String> {
    let mut out = Vec::new();
    let mut total = 0;
    while total < chars {
        let mut paragraph = String::new();
        for _ in 0..rng.random_range(2..6) {
            paragraph.push_str(&sentence(rng, vocabulary, people, places));
        }
        total += paragraph.chars().count();
        out.push(paragraph);
    }
    out
}

fn sentence(
    rng: &mut ChaCha8Rng,
    vocabulary: &[&str],
    people: &[String],
    places: &[&str],
) -> String {
    let speaker = &people[rng.random_range(0..people.len())];
    let mut clauses = Vec::new();
    for clause in 0..rng.random_range(1..4) {
        let mut text = String::new();
        if clause == 0 && rng.random_bool(0.5) {
            text.push_str(speaker);
        }
        for _ in 0..rng.random_range(2..6) {
            if rng.random_bool(0.35) {
                text.push_str(pick(rng, GLUE));
            }
            if rng.random_bool(0.06) {
                text.push_str(places[rng.random_range(0..places.len())]);
            } else if rng.random_bool(0.05) {
                text.push_str(&people[rng.random_range(0..people.len())]);
            } else {
                text.push_str(pick(rng, vocabulary));
            }
        }
        clauses.push(text);
    }
    let body = clauses.join("，");
    match rng.random_range(0..10) {
        0 => format!("{speaker}说道：“{body}！”"),
        1 => format!("“{body}？”{speaker}问道。"),
        2 => format!("{body}！"),
        3 => format!("{body}……"),
        _ => format!("{body}。"),
    }
}

fn site(rng: &mut ChaCha8Rng, index: usize, works: usize, max_delay: f64) -> Site {
    let carried = rng.random_range(2..=5).min(works);
    let mut all: Vec<usize> = (0..works).collect();
    all.shuffle(rng);
    all.truncate(carried);
    all.sort_unstable();
    let robots = Robots {
        crawl_delay: rng.random_bool(0.3).then(|| rng.random_range(2..=3)),
        disallow: rng.random_bool(0.4),
    };
    let mutation = match rng.random_range(0..5) {
        0 => Mutation::default(),
        1 => Mutation {
            homophones: 0.04,
            ..Mutation::default()
        },
        2 => Mutation {
            typos: 0.02,
            ..Mutation::default()
        },
        3 => Mutation {
            ads: true,
            ..Mutation::default()
        },
        _ => Mutation {
            homophones: 0.03,
            typos: 0.01,
            ads: true,
        },
    };
    let max_delay = max_delay.max(MIN_DELAY_SECONDS);
    // Log-uniform: as many sites within a minute as within ten.
    let base_delay = (MIN_DELAY_SECONDS.ln()
        + rng.random_range(0.0..=1.0) * (max_delay.ln() - MIN_DELAY_SECONDS.ln()))
    .exp();
    Site {
        name: format!("盗版书站{:03}", index + 1),
        ip: Ipv4Addr::new(127, 0, (index / 250) as u8, (index % 250 + 2) as u8),
        layout: match index % 3 {
            0 => Layout::Book,
            1 => Layout::Novel,
            _ => Layout::Html,
        },
        book_base: rng.random_range(10..90),
        robots,
        works: all,
        split: rng.random_bool(0.3),
        mutation,
        base_delay,
    }
}

/// Homophone groups: a character found here may be swapped for another of its group.
const HOMOPHONES: &[&str] = &[
    "的地得",
    "在再",
    "他她它",
    "做作",
    "以已",
    "像象",
    "那哪",
    "进近",
    "期其",
    "是事",
    "到道",
    "见件",
    "心新",
    "时十",
    "里理",
    "知之",
    "意义",
    "气器",
    "住注",
    "青清",
    "明名",
    "方芳",
    "城成",
    "生声",
    "天添",
    "手首",
    "话化",
    "回会",
    "工公",
    "和合",
    "后候",
    "长常",
    "夜叶",
    "山衫",
    "门们",
];

fn mutate(rng: &mut ChaCha8Rng, text: &str, mutation: Mutation) -> String {
    if mutation.homophones == 0.0 && mutation.typos == 0.0 {
        return text.to_string();
    }
    let glue: Vec<char> = GLUE.iter().flat_map(|glue| glue.chars()).collect();
    text.chars()
        .map(|c| {
            if mutation.homophones > 0.0
                && rng.random_bool(mutation.homophones)
                && let Some(group) = HOMOPHONES.iter().find(|group| group.contains(c))
            {
                let others: Vec<char> = group.chars().filter(|&o| o != c).collect();
                return others[rng.random_range(0..others.len())];
            }
            if mutation.typos > 0.0 && c as u32 > 0x4e00 && rng.random_bool(mutation.typos) {
                return glue[rng.random_range(0..glue.len())];
            }
            c
        })
        .collect()
}

fn ad_line(rng: &mut ChaCha8Rng, site: &Site) -> String {
    let host = format!(
        "www.{}{}.com",
        ["bq", "xs", "dd", "kk"][rng.random_range(0..4)],
        site.ip.octets()[3]
    );
    match rng.random_range(0..4) {
        0 => format!("本站网址：{host}，最快更新最新章节，请记住本站域名！"),
        1 => format!("手机用户请浏览 m.{host} 阅读，更优质的阅读体验。"),
        2 => "天才一秒记住本站地址，为您提供精彩小说阅读。".to_string(),
        _ => format!("（{}提示：本章未完，点击下一页继续阅读）", site.name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> PlanParams {
        PlanParams {
            sites: 30,
            works: 8,
            phase_seconds: 540.0,
            grace_seconds: 180.0,
            max_delay: 600.0,
            seed: 3,
        }
    }

    #[test]
    fn a_seed_gives_the_same_plan_and_chapters_are_long_and_distinct() {
        let (a, b) = (Plan::new(params()), Plan::new(params()));
        assert_eq!(a.copies.len(), b.copies.len());
        assert_eq!(a.works[3].chapters[1].text(), b.works[3].chapters[1].text());
        for work in &a.works {
            for chapter in &work.chapters {
                assert!(chapter.text().chars().count() >= 1_500);
            }
        }
        assert_ne!(a.works[0].chapters[0].text(), a.works[1].chapters[0].text());
        let other = Plan::new(PlanParams {
            seed: 4,
            ..params()
        });
        assert_ne!(
            a.works[0].chapters[0].text(),
            other.works[0].chapters[0].text()
        );
    }

    #[test]
    fn copies_appear_in_the_window_on_their_own_pages() {
        let plan = Plan::new(params());
        assert!(plan.timed().count() > 10);
        for (_, copy) in plan.timed() {
            let at = copy.appears.unwrap();
            let release = plan.works[copy.work].releases[copy.chapter - INITIAL_CHAPTERS];
            assert!(at >= release + MIN_DELAY_SECONDS - 1e-9 && at <= plan.last_appearance);
        }
        let ips: std::collections::HashSet<_> = plan.sites.iter().map(|site| site.ip).collect();
        assert_eq!(ips.len(), plan.sites.len());
        // Split sites serve both halves, and together they hold the chapter.
        let (index, copy) = plan
            .copies
            .iter()
            .enumerate()
            .find(|(_, copy)| plan.sites[copy.site].split)
            .unwrap();
        let site = &plan.sites[copy.site];
        let second = site.chapter_path(copy.work, copy.chapter, 1);
        assert!(matches!(
            plan.paths[copy.site][&second],
            PageRef::Chapter { copy, part: 1 } if copy == index
        ));
        let both = plan.copied_paragraphs(copy, 0).len() + plan.copied_paragraphs(copy, 1).len();
        assert!(
            both >= plan.works[copy.work].chapters[copy.chapter]
                .paragraphs
                .len()
        );
    }
}
