//! The checks every backend must pass. Each takes a fresh, empty [`Stores`].

use copyhound_core::ErrorKind;
use copyhound_core::ids::{ApiKeyId, PageId, ReportId};
use copyhound_core::model::{ApiKey, FingerprintOwner, FingerprintStatus, MatchStatus, Role};
use copyhound_core::ports::{MatchFilter, PageRequest, PageUpsert};

use super::fixtures::{self, at};
use crate::Stores;

fn first(limit: u32) -> PageRequest {
    PageRequest { after: None, limit }
}

fn filter(publisher: &str) -> MatchFilter {
    MatchFilter {
        publisher_id: publisher.parse().unwrap(),
        work_id: None,
        chapter_id: None,
        site_id: None,
        statuses: Vec::new(),
        min_score: None,
        seen_since: None,
        seen_before: None,
    }
}

/// Collects every page of a listing as `(items, pages read)`, asserting each
/// page holds at most `limit` items.
macro_rules! collect_all {
    ($limit:expr, |$request:ident| $call:expr) => {{
        let mut $request = first($limit);
        let mut items = Vec::new();
        let mut pages = 0;
        loop {
            let page = $call.await.unwrap();
            assert!(page.items.len() <= $limit as usize);
            pages += 1;
            items.extend(page.items);
            match page.next {
                Some(next) => $request.after = Some(next),
                None => break (items, pages),
            }
        }
    }};
}

async fn prepare(stores: &Stores) {
    crate::migrate_up(stores).await.unwrap();
}

pub(crate) async fn publishers_sites_and_reports_round_trip(stores: &Stores) {
    prepare(stores).await;
    stores.publishers.check_connectivity().await.unwrap();
    let publisher = fixtures::publisher("pub_a");
    stores.publishers.put_publisher(&publisher).await.unwrap();
    assert_eq!(
        stores
            .publishers
            .get_publisher(&publisher.id)
            .await
            .unwrap(),
        publisher
    );
    let key = ApiKey {
        id: "key_1".parse::<ApiKeyId>().unwrap(),
        publisher_id: publisher.id.clone(),
        secret_sha256: "ef".repeat(32),
        role: Role::Admin,
        created_at: at(3),
        revoked: false,
    };
    stores.publishers.put_api_key(&key).await.unwrap();
    assert_eq!(stores.publishers.get_api_key(&key.id).await.unwrap(), key);
    let site = fixtures::site("pub_a", "site_a");
    stores.sites.put_site(&site).await.unwrap();
    assert_eq!(stores.sites.get_site(&site.id).await.unwrap(), site);
    let run = fixtures::crawl_run("site_a", "run_1", 5);
    stores.sites.put_crawl_run(&run).await.unwrap();
    assert_eq!(stores.sites.get_crawl_run(&run.id).await.unwrap(), run);
    let report = fixtures::report("pub_a", "rep_1", 7);
    stores.reports.put_report(&report).await.unwrap();
    assert_eq!(
        stores
            .reports
            .get_report(&report.scope.publisher_id, &report.id)
            .await
            .unwrap(),
        report
    );
}

pub(crate) async fn upserts_are_idempotent(stores: &Stores) {
    prepare(stores).await;
    let page = fixtures::page("http://127.0.0.1:8001/a.html", "site_a", "正文");
    let found = fixtures::found_match("pub_a", &page.url, "w1", "c1", 10);
    let record = fixtures::fingerprint(fixtures::chapter_owner("w1", "c1"), 1);
    for round in 0..2 {
        stores
            .publishers
            .put_publisher(&fixtures::publisher("pub_a"))
            .await
            .unwrap();
        stores
            .works
            .put_work(&fixtures::work("pub_a", "w1"))
            .await
            .unwrap();
        stores
            .works
            .put_chapters(&[fixtures::chapter("w1", 1), fixtures::chapter("w1", 2)])
            .await
            .unwrap();
        stores
            .sites
            .put_site(&fixtures::site("pub_a", "site_a"))
            .await
            .unwrap();
        stores
            .sites
            .put_crawl_run(&fixtures::crawl_run("site_a", "run_1", 0))
            .await
            .unwrap();
        let outcome = stores.pages.upsert_page(&page).await.unwrap();
        assert_eq!(
            outcome,
            if round == 0 {
                PageUpsert::New
            } else {
                PageUpsert::Unchanged
            }
        );
        stores.fingerprints.put_fingerprint(&record).await.unwrap();
        stores
            .fingerprints
            .put_fingerprints(std::slice::from_ref(&record))
            .await
            .unwrap();
        stores.matches.upsert_match(&found).await.unwrap();
        stores
            .reports
            .put_report(&fixtures::report("pub_a", "rep_1", 0))
            .await
            .unwrap();
    }
    let publisher_id = "pub_a".parse().unwrap();
    assert_eq!(
        stores
            .publishers
            .list_publishers(&first(10))
            .await
            .unwrap()
            .items
            .len(),
        1
    );
    assert_eq!(
        stores
            .works
            .list_works(&publisher_id, &first(10))
            .await
            .unwrap()
            .items
            .len(),
        1
    );
    assert_eq!(
        stores
            .works
            .list_chapters(&"w1".parse().unwrap())
            .await
            .unwrap()
            .len(),
        2
    );
    assert_eq!(
        stores
            .sites
            .list_sites(None, &first(10))
            .await
            .unwrap()
            .items
            .len(),
        1
    );
    assert_eq!(
        stores
            .sites
            .list_crawl_runs(&"site_a".parse().unwrap(), &first(10))
            .await
            .unwrap()
            .items
            .len(),
        1
    );
    let pages = stores
        .pages
        .list_pages(&"site_a".parse().unwrap(), &first(10))
        .await
        .unwrap();
    assert_eq!(pages.items, vec![page.clone()]);
    assert_eq!(
        stores
            .fingerprints
            .list_fingerprints(1, &first(10))
            .await
            .unwrap()
            .items,
        vec![record]
    );
    assert_eq!(
        stores
            .matches
            .list_matches(&filter("pub_a"), &first(10))
            .await
            .unwrap()
            .items,
        vec![found.clone()]
    );
    assert_eq!(
        stores.matches.matches_of_page(&page.id).await.unwrap(),
        vec![found]
    );
    assert_eq!(
        stores
            .reports
            .list_reports(&publisher_id, &first(10))
            .await
            .unwrap()
            .items
            .len(),
        1
    );
    let outcomes = stores
        .pages
        .upsert_pages(&[page.clone(), page])
        .await
        .unwrap();
    assert_eq!(outcomes, [PageUpsert::Unchanged, PageUpsert::Unchanged]);
}

pub(crate) async fn page_history_follows_content_changes(stores: &Stores) {
    prepare(stores).await;
    let url = "http://127.0.0.1:8001/chapter-1.html";
    let original = fixtures::page(url, "site_a", "第一版");
    assert_eq!(
        stores.pages.upsert_page(&original).await.unwrap(),
        PageUpsert::New
    );
    let revisit = copyhound_core::model::Page {
        last_seen: at(10),
        first_seen: at(10),
        ..original.clone()
    };
    assert_eq!(
        stores.pages.upsert_page(&revisit).await.unwrap(),
        PageUpsert::Unchanged
    );
    let stored = stores.pages.get_page(&original.id).await.unwrap();
    assert_eq!((stored.first_seen, stored.last_seen), (at(0), at(10)));

    let mut changed = fixtures::page(url, "site_a", "第二版");
    (changed.first_seen, changed.last_seen) = (at(20), at(20));
    assert_eq!(
        stores.pages.upsert_page(&changed).await.unwrap(),
        PageUpsert::Changed
    );
    let mut third = fixtures::page(url, "site_a", "第三版");
    (third.first_seen, third.last_seen) = (at(30), at(30));
    let outcomes = stores.pages.upsert_pages(&[third.clone()]).await.unwrap();
    assert_eq!(outcomes, [PageUpsert::Changed]);

    let stored = stores.pages.get_page(&original.id).await.unwrap();
    assert_eq!(stored.text, "第三版");
    assert_eq!(stored.raw_body, third.raw_body);
    assert_eq!((stored.first_seen, stored.last_seen), (at(0), at(30)));
    let history: Vec<_> = stored
        .previous_versions
        .iter()
        .map(|version| {
            (
                version.body_sha256.clone(),
                version.first_seen,
                version.last_seen,
            )
        })
        .collect();
    assert_eq!(
        history,
        [
            (original.body_sha256.clone(), at(0), at(10)),
            (changed.body_sha256.clone(), at(20), at(20))
        ]
    );
}

pub(crate) async fn match_upsert_keeps_the_review_state(stores: &Stores) {
    prepare(stores).await;
    let found = fixtures::found_match("pub_a", "http://127.0.0.1:8001/a.html", "w1", "c1", 10);
    stores.matches.upsert_match(&found).await.unwrap();
    let review = fixtures::review(MatchStatus::Confirmed);
    let reviewed = stores
        .matches
        .review_match(&found.publisher_id, &found.id, &review)
        .await
        .unwrap();
    assert_eq!(
        (reviewed.status, reviewed.reviews.clone()),
        (MatchStatus::Confirmed, vec![review.clone()])
    );

    let mut again = fixtures::found_match("pub_a", "http://127.0.0.1:8001/a.html", "w1", "c1", 50);
    again.score = 0.5;
    stores.matches.upsert_match(&again).await.unwrap();
    let stored = stores
        .matches
        .get_match(&found.publisher_id, &found.id)
        .await
        .unwrap();
    assert_eq!(stored.status, MatchStatus::Confirmed);
    assert_eq!(stored.reviews, vec![review]);
    assert_eq!(
        (stored.first_seen, stored.last_seen, stored.score),
        (at(10), at(50), 0.5)
    );
}

pub(crate) async fn keyset_pagination_spans_several_pages(stores: &Stores) {
    prepare(stores).await;
    let publisher_id = "pub_a".parse().unwrap();
    for number in 0..23 {
        stores
            .works
            .put_work(&fixtures::work("pub_a", &format!("w{number:03}")))
            .await
            .unwrap();
        let url = format!("http://127.0.0.1:8001/{number}.html");
        stores
            .matches
            .upsert_match(&fixtures::found_match(
                "pub_a",
                &url,
                "w1",
                "c1",
                number % 7,
            ))
            .await
            .unwrap();
        stores
            .sites
            .put_crawl_run(&fixtures::crawl_run(
                "site_a",
                &format!("run_{number}"),
                number % 5,
            ))
            .await
            .unwrap();
    }
    let pages: Vec<_> = (0..23)
        .map(|number| fixtures::page(&format!("http://h/{number}"), "site_a", "t"))
        .collect();
    assert!(
        stores
            .pages
            .upsert_pages(&pages)
            .await
            .unwrap()
            .iter()
            .all(|outcome| *outcome == PageUpsert::New)
    );

    let (works, pages_read) = collect_all!(10, |request| stores
        .works
        .list_works(&publisher_id, &request));
    let ids: Vec<String> = works.iter().map(|work| work.id.to_string()).collect();
    let expected: Vec<String> = (0..23).map(|number| format!("w{number:03}")).collect();
    assert_eq!((ids, pages_read), (expected, 3));

    let (matches, _) = collect_all!(10, |request| stores
        .matches
        .list_matches(&filter("pub_a"), &request));
    assert_eq!(matches.len(), 23);
    let keys: Vec<_> = matches
        .iter()
        .map(|found| (found.last_seen, found.id.clone()))
        .collect();
    let mut sorted = keys.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(keys, sorted, "newest first, then id descending");

    let (runs, _) = collect_all!(4, |request| stores
        .sites
        .list_crawl_runs(&"site_a".parse().unwrap(), &request));
    assert_eq!(runs.len(), 23);
    assert!(
        runs.windows(2)
            .all(|pair| pair[0].created_at >= pair[1].created_at)
    );
    let (listed, _) = collect_all!(5, |request| stores
        .pages
        .list_pages(&"site_a".parse().unwrap(), &request));
    assert_eq!(listed.len(), 23);
    let bad = PageRequest {
        after: Some("%%%".into()),
        limit: 5,
    };
    assert_eq!(
        stores
            .works
            .list_works(&publisher_id, &bad)
            .await
            .unwrap_err()
            .kind(),
        ErrorKind::InvalidInput
    );
}

pub(crate) async fn match_filters_select(stores: &Stores) {
    prepare(stores).await;
    for number in 0..6 {
        let mut found = fixtures::found_match(
            "pub_a",
            &format!("http://h/{number}"),
            "w1",
            "c1",
            number * 10,
        );
        found.score = number as f32 / 10.0;
        if number >= 3 {
            found.work_id = "w2".parse().unwrap();
        }
        stores.matches.upsert_match(&found).await.unwrap();
        if number % 2 == 0 {
            stores
                .matches
                .review_match(
                    &found.publisher_id,
                    &found.id,
                    &fixtures::review(MatchStatus::Dismissed),
                )
                .await
                .unwrap();
        }
    }
    let count = |filter: MatchFilter| async move {
        stores
            .matches
            .list_matches(&filter, &first(100))
            .await
            .unwrap()
            .items
            .len()
    };
    assert_eq!(count(filter("pub_a")).await, 6);
    assert_eq!(
        count(MatchFilter {
            work_id: Some("w2".parse().unwrap()),
            ..filter("pub_a")
        })
        .await,
        3
    );
    assert_eq!(
        count(MatchFilter {
            statuses: vec![MatchStatus::Dismissed],
            ..filter("pub_a")
        })
        .await,
        3
    );
    assert_eq!(
        count(MatchFilter {
            min_score: Some(0.3),
            ..filter("pub_a")
        })
        .await,
        3
    );
    assert_eq!(
        count(MatchFilter {
            seen_since: Some(at(20)),
            ..filter("pub_a")
        })
        .await,
        4
    );
    assert_eq!(
        count(MatchFilter {
            seen_before: Some(at(20)),
            ..filter("pub_a")
        })
        .await,
        2
    );
}

pub(crate) async fn tenants_never_see_each_other(stores: &Stores) {
    prepare(stores).await;
    let (a, b) = ("pub_a".parse().unwrap(), "pub_b".parse().unwrap());
    stores
        .works
        .put_work(&fixtures::work("pub_a", "w1"))
        .await
        .unwrap();
    let found = fixtures::found_match("pub_a", "http://h/1", "w1", "c1", 0);
    stores.matches.upsert_match(&found).await.unwrap();
    stores
        .reports
        .put_report(&fixtures::report("pub_a", "rep_1", 0))
        .await
        .unwrap();
    let work_id = "w1".parse().unwrap();
    assert_eq!(
        stores
            .works
            .get_work(&b, &work_id)
            .await
            .unwrap_err()
            .kind(),
        ErrorKind::NotFound
    );
    assert_eq!(
        stores
            .works
            .delete_work(&b, &work_id)
            .await
            .unwrap_err()
            .kind(),
        ErrorKind::NotFound
    );
    assert_eq!(
        stores
            .works
            .put_work(&fixtures::work("pub_b", "w1"))
            .await
            .unwrap_err()
            .kind(),
        ErrorKind::Conflict
    );
    assert_eq!(
        stores
            .works
            .get_work(&a, &work_id)
            .await
            .unwrap()
            .publisher_id,
        a
    );
    assert_eq!(
        stores
            .matches
            .get_match(&b, &found.id)
            .await
            .unwrap_err()
            .kind(),
        ErrorKind::NotFound
    );
    let review = fixtures::review(MatchStatus::Licensed);
    assert_eq!(
        stores
            .matches
            .review_match(&b, &found.id, &review)
            .await
            .unwrap_err()
            .kind(),
        ErrorKind::NotFound
    );
    assert!(
        stores
            .matches
            .list_matches(&filter("pub_b"), &first(10))
            .await
            .unwrap()
            .items
            .is_empty()
    );
    assert!(
        stores
            .works
            .list_works(&b, &first(10))
            .await
            .unwrap()
            .items
            .is_empty()
    );
    let report_id = "rep_1".parse().unwrap();
    assert_eq!(
        stores
            .reports
            .get_report(&b, &report_id)
            .await
            .unwrap_err()
            .kind(),
        ErrorKind::NotFound
    );
}

pub(crate) async fn unknown_ids_are_not_found(stores: &Stores) {
    prepare(stores).await;
    let not_found = |result: copyhound_core::Result<()>| {
        assert_eq!(result.unwrap_err().kind(), ErrorKind::NotFound)
    };
    let publisher = "pub_x".parse().unwrap();
    let work = "w_x".parse().unwrap();
    let chapter = "c_x".parse().unwrap();
    not_found(stores.publishers.get_publisher(&publisher).await.map(drop));
    not_found(
        stores
            .publishers
            .get_api_key(&"key_x".parse().unwrap())
            .await
            .map(drop),
    );
    not_found(stores.works.get_work_any(&work).await.map(drop));
    not_found(stores.works.get_chapter(&work, &chapter).await.map(drop));
    not_found(
        stores
            .works
            .set_fingerprint_status(&work, &chapter, &FingerprintStatus::Pending)
            .await,
    );
    not_found(
        stores
            .sites
            .get_site(&"site_x".parse().unwrap())
            .await
            .map(drop),
    );
    not_found(
        stores
            .sites
            .get_crawl_run(&"run_x".parse().unwrap())
            .await
            .map(drop),
    );
    not_found(
        stores
            .pages
            .get_page(&PageId::for_url("http://nowhere/"))
            .await
            .map(drop),
    );
    let owner = FingerprintOwner::Page {
        page_id: PageId::for_url("http://nowhere/"),
    };
    not_found(
        stores
            .fingerprints
            .get_fingerprint(&owner, 1)
            .await
            .map(drop),
    );
    not_found(
        stores
            .matches
            .get_match(&publisher, &"m_x".parse().unwrap())
            .await
            .map(drop),
    );
    not_found(
        stores
            .reports
            .get_report(&publisher, &"rep_x".parse().unwrap())
            .await
            .map(drop),
    );
    not_found(
        stores
            .reports
            .get_artifact(&"rep_x".parse().unwrap())
            .await
            .map(drop),
    );
    assert!(
        stores
            .matches
            .matches_of_page(&PageId::for_url("http://nowhere/"))
            .await
            .unwrap()
            .is_empty()
    );
}

pub(crate) async fn u64_fingerprints_round_trip(stores: &Stores) {
    prepare(stores).await;
    let chapter = fixtures::fingerprint(fixtures::chapter_owner("w1", "c1"), 3);
    let page = fixtures::fingerprint(
        FingerprintOwner::Page {
            page_id: PageId::for_url("http://h/"),
        },
        3,
    );
    let older = fixtures::fingerprint(fixtures::chapter_owner("w1", "c1"), 2);
    stores
        .fingerprints
        .put_fingerprints(&[chapter.clone(), page.clone(), older.clone()])
        .await
        .unwrap();
    let stored = stores
        .fingerprints
        .get_fingerprint(&chapter.owner, 3)
        .await
        .unwrap();
    assert_eq!(stored, chapter);
    assert_eq!(stored.simhash, u64::MAX);
    let (listed, _) = collect_all!(1, |request| stores
        .fingerprints
        .list_fingerprints(3, &request));
    assert_eq!(listed, vec![chapter.clone(), page]);
    stores
        .fingerprints
        .delete_fingerprints(&chapter.owner)
        .await
        .unwrap();
    for version in [2, 3] {
        let error = stores
            .fingerprints
            .get_fingerprint(&chapter.owner, version)
            .await
            .unwrap_err();
        assert_eq!(error.kind(), ErrorKind::NotFound);
    }
    assert_eq!(
        stores
            .fingerprints
            .list_fingerprints(3, &first(10))
            .await
            .unwrap()
            .items
            .len(),
        1
    );
}

pub(crate) async fn migrations_run_twice_and_concurrently(stores: &Stores) {
    let known = crate::migrate::migrations().unwrap().len();
    let before = crate::migrate_status(stores).await.unwrap();
    assert_eq!(before.len(), known);
    assert!(before.iter().all(|status| status.applied_at.is_none()));
    let runs = (0..3).map(|_| {
        let stores = stores.clone();
        tokio::spawn(async move { crate::migrate_up(&stores).await.unwrap() })
    });
    let mut applied = 0;
    for run in runs.collect::<Vec<_>>() {
        applied += run.await.unwrap();
    }
    assert_eq!(applied, known, "exactly one runner applies each migration");
    assert_eq!(crate::migrate_up(stores).await.unwrap(), 0);
    let after = crate::migrate_status(stores).await.unwrap();
    assert!(
        after
            .iter()
            .all(|status| status.applied_at.is_some() && !status.modified_since_applied)
    );
}

pub(crate) async fn oversize_page_bodies_are_truncated(stores: &Stores) {
    prepare(stores).await;
    let limit = crate::StoreLimits::default().max_body_bytes as usize;
    let mut page = fixtures::page("http://h/huge", "site_a", "");
    page.raw_body = (0..17 << 20)
        .map(|index: usize| (index % 251) as u8)
        .collect();
    page.text = "字".repeat((17 << 20) / 3);
    stores.pages.upsert_page(&page).await.unwrap();
    let stored = stores.pages.get_page(&page.id).await.unwrap();
    assert!(stored.body_truncated);
    assert_eq!(stored.raw_body[..], page.raw_body[..limit]);
    assert!(stored.text.len() <= limit && stored.text.len() > limit - 3);
    assert_eq!(
        stored.body_sha256, page.body_sha256,
        "the hash stays the one of the full body"
    );
}

pub(crate) async fn artifacts_round_trip(stores: &Stores) {
    use rand::RngCore;
    use rand::SeedableRng;
    prepare(stores).await;
    let id: ReportId = "rep_1".parse().unwrap();
    stores
        .reports
        .put_artifact(&id, b"<html>small</html>")
        .await
        .unwrap();
    assert_eq!(
        stores.reports.get_artifact(&id).await.unwrap(),
        b"<html>small</html>"
    );
    let mut large = vec![0_u8; 9 << 20];
    rand_chacha::ChaCha8Rng::seed_from_u64(7).fill_bytes(&mut large);
    stores.reports.put_artifact(&id, &large).await.unwrap();
    assert_eq!(stores.reports.get_artifact(&id).await.unwrap(), large);
}

pub(crate) async fn works_delete_with_their_chapters(stores: &Stores) {
    prepare(stores).await;
    let publisher_id = "pub_a".parse().unwrap();
    let work_id = "w1".parse().unwrap();
    stores
        .works
        .put_work(&fixtures::work("pub_a", "w1"))
        .await
        .unwrap();
    stores
        .works
        .put_chapters(&[fixtures::chapter("w1", 2), fixtures::chapter("w1", 1)])
        .await
        .unwrap();
    stores
        .works
        .put_chapters(&[fixtures::chapter("w10", 1)])
        .await
        .unwrap();
    let chapters = stores.works.list_chapters(&work_id).await.unwrap();
    assert_eq!(
        chapters
            .iter()
            .map(|chapter| chapter.index)
            .collect::<Vec<_>>(),
        [1, 2]
    );
    let status = FingerprintStatus::Indexed { version: 1 };
    stores
        .works
        .set_fingerprint_status(&work_id, &chapters[0].id, &status)
        .await
        .unwrap();
    assert_eq!(
        stores
            .works
            .get_chapter(&work_id, &chapters[0].id)
            .await
            .unwrap()
            .fingerprint_status,
        status
    );
    stores
        .works
        .delete_work(&publisher_id, &work_id)
        .await
        .unwrap();
    assert!(
        stores
            .works
            .list_chapters(&work_id)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        stores
            .works
            .list_chapters(&"w10".parse().unwrap())
            .await
            .unwrap()
            .len(),
        1
    );
    assert_eq!(
        stores
            .works
            .get_work_any(&work_id)
            .await
            .unwrap_err()
            .kind(),
        ErrorKind::NotFound
    );
}
