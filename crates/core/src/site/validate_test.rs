use std::time::Instant;

use crate::ErrorKind;
use crate::model::ExtractionHints;

use super::*;
use crate::site::SiteBuilder;

const STRICT: SitePolicy = SitePolicy::new(false);
const LOOPBACK: SitePolicy = SitePolicy::new(true);

fn site_with_seed(seed: &str) -> SiteBuilder {
    SiteBuilder::new("P01".parse().unwrap(), "盗版小说网", vec![seed.to_string()])
}

fn refusal(builder: SiteBuilder) -> String {
    let error = builder.build().unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidInput, "{error}");
    error.to_string()
}

#[test]
fn non_public_seeds_are_refused_unless_allowed() {
    for seed in [
        "http://127.0.0.1:8001/",
        "http://127.1/",
        "http://2130706433/",
        "http://0x7f000001/",
        "http://0177.0.0.1/",
        "http://0/",
        "http://0.0.0.0/",
        "http://10.1.2.3/",
        "http://172.16.5.4/",
        "http://192.168.1.1/",
        "http://169.254.169.254/latest/meta-data/",
        "http://100.64.0.1/",
        "http://[::1]/",
        "http://[fd00::1]/",
        "http://[fe80::1]/",
        "http://[::ffff:169.254.169.254]/",
        "http://[::ffff:7f00:1]/",
        "http://[64:ff9b::a9fe:a9fe]/",
        "http://localhost:8080/",
        "http://admin.localhost/",
        "http://LOCALHOST./",
    ] {
        let message = refusal(site_with_seed(seed).policy(STRICT));
        assert!(
            message.contains("seeds[0]") && message.contains("not a public address"),
            "{seed}: {message}"
        );
        site_with_seed(seed)
            .policy(LOOPBACK)
            .build()
            .unwrap_or_else(|err| panic!("{seed} is allowed by the policy: {err}"));
    }
    for seed in [
        "http://8.8.8.8/",
        "https://www.example.com/book/1.html",
        "http://[2606:4700::1111]/",
    ] {
        site_with_seed(seed).policy(STRICT).build().unwrap();
    }
}

#[test]
fn credentials_are_refused_and_never_echoed() {
    for seed in [
        "http://alice:hunter2@www.example.com/",
        "https://alice:hunter2@10.0.0.1/",
        "http:alice:hunter2@www.example.com/",
        "http://alice:hunter2@/",
    ] {
        let message = refusal(site_with_seed(seed).policy(LOOPBACK));
        assert!(message.contains("seeds[0]"), "{message}");
        assert!(!message.contains("hunter2"), "{seed}: {message}");
    }
    let message = refusal(site_with_seed("http://alice@www.example.com/"));
    assert!(message.contains("credentials") && !message.contains("alice"));
}

#[test]
fn patterns_selectors_and_schedules_are_checked() {
    let seed = "https://www.example.com/";
    let cases: Vec<(SiteBuilder, &str)> = vec![
        (
            site_with_seed(seed).allow_patterns(vec!["re:([".into()]),
            "`allow_patterns[0]`",
        ),
        (
            site_with_seed(seed).deny_patterns(vec!["*.jpg".into(), "re:a)".into()]),
            "`deny_patterns[1]`",
        ),
        (
            site_with_seed(seed).deny_patterns(vec!["  ".into()]),
            "`deny_patterns[0]` is empty",
        ),
        (
            site_with_seed(seed).allow_patterns(vec!["re:(a{1000}){1000}".into()]),
            "`allow_patterns[0]`",
        ),
        (
            site_with_seed(seed).allow_patterns(vec!["x".repeat(MAX_PATTERN_CHARS + 1)]),
            "longer than",
        ),
        (
            site_with_seed(seed).extraction(ExtractionHints {
                content_selector: None,
                next_page_selector: Some("a[href=".into()),
                render: Default::default(),
            }),
            "`extraction.next_page_selector`",
        ),
        (
            site_with_seed(seed).extraction(ExtractionHints {
                content_selector: Some("div >> p".into()),
                next_page_selector: None,
                render: Default::default(),
            }),
            "`extraction.content_selector`",
        ),
        (site_with_seed(seed).schedule("0 0 30 2 *"), "never fires"),
        (site_with_seed(seed).schedule("0 0 31 4 *"), "never fires"),
        (
            site_with_seed(seed).schedule("0 0 0 31 11 *"),
            "never fires",
        ),
        (site_with_seed(seed).schedule("61 * * * *"), "`schedule`"),
        (
            site_with_seed(seed).politeness(1e9, 2),
            "rate_limit_per_second",
        ),
        (
            site_with_seed(seed).politeness(f64::NAN, 2),
            "rate_limit_per_second",
        ),
        (site_with_seed(seed).politeness(1.0, 65), "concurrency"),
        (site_with_seed(seed).limits(101, 10), "max_depth"),
        (site_with_seed(seed).limits(3, 0), "max_pages_per_run"),
        (
            SiteBuilder::new("P01".parse().unwrap(), " ", vec![seed.into()]),
            "`name`",
        ),
    ];
    for (builder, fragment) in cases {
        let started = Instant::now();
        let message = refusal(builder);
        assert!(
            message.contains(fragment),
            "{message} should name {fragment}"
        );
        assert!(
            started.elapsed().as_secs() < 2,
            "validation took {:?}: {message}",
            started.elapsed()
        );
    }
    // Rare but real schedules are fine: leap days fire every four years.
    site_with_seed(seed)
        .schedule("0 0 29 2 *")
        .allow_patterns(vec!["re:^https://www\\.example\\.com/book/\\d+".into()])
        .build()
        .unwrap();
}

#[test]
fn quoted_values_are_short_and_masked() {
    assert_eq!(
        quoted("http://u:p@example.com/x"),
        "http://***@example.com/x"
    );
    assert!(!quoted("not a url u:secret@x").contains("secret"));
    assert_eq!(quoted(&"a".repeat(500)).chars().count(), 121);
}

#[test]
fn a_seed_host_must_be_a_dns_name() {
    for seed in [
        "http://pirate.example*/",
        "http://pi!rate.example/",
        "http://pirate$.example/",
        "http://a'b.example/",
        "http://a(b).example/",
        "http://盗版.example/",
        " http://pirate.example/",
        "http://pirate.example/a b",
        "http://pirate.example\\path",
        "http://pirate.example:65536/",
    ] {
        let message = refusal(site_with_seed(seed).policy(LOOPBACK));
        assert!(
            message.contains("seeds[0]") && message.contains("host name"),
            "{seed}: {message}"
        );
    }
    for seed in [
        "https://xn--w7ta.example/",
        "HTTP://Pirate.Example:8080/书/1.html?page=2#top",
        "http://a-b.c.example:8080/x",
        "http://my_site.example/",
    ] {
        site_with_seed(seed)
            .policy(STRICT)
            .build()
            .unwrap_or_else(|err| panic!("{seed}: {err}"));
    }
}

#[test]
fn a_search_url_is_on_a_seeds_host_with_one_key() {
    let check = |template: &str| {
        let mut site = crate::site::default_site("P01".parse().unwrap());
        site.name = "书屋".into();
        site.seeds = vec!["https://www.shuwu.example/".into()];
        site.search_url = Some(template.into());
        validate_site(&site, &STRICT)
    };
    check("https://www.shuwu.example/s.php?q={{key}}").unwrap();
    check("https://www.shuwu.example:443/search/{{key}}/").unwrap();
    for (template, why) in [
        ("https://www.shuwu.example/s.php?q=", "`{{key}}` once"),
        (
            "https://www.shuwu.example/s?q={{key}}&t={{key}}",
            "`{{key}}` once",
        ),
        (
            "https://evil.example/s?q={{key}}",
            "host of one of the site's seeds",
        ),
        (
            "http://www.shuwu.example:8080/s?q={{key}}",
            "host of one of the site's seeds",
        ),
        ("ftp://www.shuwu.example/{{key}}", "http(s)"),
        ("/s.php?q={{key}}", "not a URL"),
    ] {
        let error = check(template).unwrap_err();
        assert!(error.to_string().contains(why), "{template}: {error}");
        assert!(error.to_string().contains("`search_url`"), "{error}");
    }
}
