//! Conformance checks: records, tenants, migrations.

use copyhound_core::ErrorKind;
use copyhound_core::ids::{ApiKeyId, PageId, WorkId};
use copyhound_core::model::{ApiKey, FingerprintOwner, FingerprintStatus, MatchStatus, Role};
use copyhound_core::ports::PageUpsert;

use super::{filter, first, prepare};
use crate::Stores;
use crate::tests::fixtures::{self, at};

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
        name: Some("李伟".into()),
    };
    stores.publishers.put_api_key(&key).await.unwrap();
    assert_eq!(stores.publishers.get_api_key(&key.id).await.unwrap(), key);
    // Listing: the publisher's keys only, oldest first.
    let older = ApiKey {
        id: "key_0".parse::<ApiKeyId>().unwrap(),
        created_at: at(1),
        name: None,
        ..key.clone()
    };
    let foreign = ApiKey {
        id: "key_2".parse::<ApiKeyId>().unwrap(),
        publisher_id: "pub_b".parse().unwrap(),
        ..key.clone()
    };
    stores.publishers.put_api_key(&older).await.unwrap();
    stores.publishers.put_api_key(&foreign).await.unwrap();
    assert_eq!(
        stores
            .publishers
            .list_api_keys(&publisher.id)
            .await
            .unwrap(),
        [older, key.clone()]
    );
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

/// Concurrent writers of one alert state: exactly one wins each version.
pub(crate) async fn alert_states_swap_once(stores: &Stores) {
    use copyhound_core::model::AlertState;
    prepare(stores).await;
    let reports = &stores.reports;
    assert_eq!(reports.get_alert_state("P01/x").await.unwrap(), None);
    let state = |version: u64, by: &str| AlertState {
        id: "P01/x".into(),
        publisher_id: "P01".parse().unwrap(),
        channel: "email legal@p01.example".into(),
        version,
        last_sent_at: None,
        claimed_by: Some(by.into()),
        claimed_until: Some(at(60)),
        last_outcome: None,
    };
    // Eight first writers race: one inserts.
    let first_writes = futures_util::future::join_all((0..8).map(|writer| async move {
        reports
            .swap_alert_state(None, &state(1, &format!("s{writer}")))
            .await
            .unwrap()
    }))
    .await;
    assert_eq!(first_writes.iter().filter(|won| **won).count(), 1);
    let stored = reports.get_alert_state("P01/x").await.unwrap().unwrap();
    assert_eq!(stored.version, 1);
    let winner = stored.claimed_by.clone().unwrap();
    assert_eq!(
        winner,
        format!("s{}", first_writes.iter().position(|won| *won).unwrap())
    );
    // Then they race from version 1: one moves it to 2.
    let next_writes = futures_util::future::join_all((0..8).map(|writer| async move {
        reports
            .swap_alert_state(Some(1), &state(2, &format!("t{writer}")))
            .await
            .unwrap()
    }))
    .await;
    assert_eq!(next_writes.iter().filter(|won| **won).count(), 1);
    // A stale expectation never overwrites, nor does "absent" once present.
    assert!(
        !reports
            .swap_alert_state(Some(1), &state(2, "late"))
            .await
            .unwrap()
    );
    assert!(
        !reports
            .swap_alert_state(None, &state(1, "late"))
            .await
            .unwrap()
    );
    let stored = reports.get_alert_state("P01/x").await.unwrap().unwrap();
    assert_eq!(stored.version, 2);
    assert!(stored.claimed_by.unwrap().starts_with('t'));
}

/// A chapter read after a write returns what was written, however often it
/// was read before (the embedded store keeps read chapters in memory), also
/// with reads racing the writes.
pub(crate) async fn chapter_reads_follow_every_write(stores: &Stores) {
    prepare(stores).await;
    let publisher_id = "pub_a".parse().unwrap();
    let work_id: copyhound_core::ids::WorkId = "w1".parse().unwrap();
    let chapter_id: copyhound_core::ids::ChapterId = "c1".parse().unwrap();
    stores
        .works
        .put_work(&fixtures::work("pub_a", "w1"))
        .await
        .unwrap();
    let mut chapter = fixtures::chapter("w1", 1);
    stores
        .works
        .put_chapters(std::slice::from_ref(&chapter))
        .await
        .unwrap();
    let read = || stores.works.get_chapter(&work_id, &chapter_id);
    assert_eq!(read().await.unwrap(), chapter);
    assert_eq!(read().await.unwrap(), chapter);
    let status = FingerprintStatus::Indexed { version: 1 };
    stores
        .works
        .set_fingerprint_status(&work_id, &chapter_id, &status)
        .await
        .unwrap();
    assert_eq!(read().await.unwrap().fingerprint_status, status);
    let readers = {
        let works = stores.works.clone();
        let (work_id, chapter_id) = (work_id.clone(), chapter_id.clone());
        tokio::spawn(async move {
            for _ in 0..2_000 {
                works.get_chapter(&work_id, &chapter_id).await.unwrap();
                tokio::task::yield_now().await;
            }
        })
    };
    for version in 0..30 {
        chapter.text = format!("第{version}版正文");
        stores
            .works
            .put_chapters(std::slice::from_ref(&chapter))
            .await
            .unwrap();
        assert_eq!(read().await.unwrap().text, chapter.text);
        tokio::task::yield_now().await;
    }
    readers.await.unwrap();
    assert_eq!(read().await.unwrap().text, chapter.text);
    stores
        .works
        .delete_work(&publisher_id, &work_id)
        .await
        .unwrap();
    assert_eq!(read().await.unwrap_err().kind(), ErrorKind::NotFound);
}

pub(crate) async fn an_edit_replaces_the_chapters_it_leaves_out(stores: &Stores) {
    prepare(stores).await;
    let works = &stores.works;
    let work_id: WorkId = "w1".parse().unwrap();
    works
        .replace_work(
            &fixtures::work("pub_a", "w1"),
            &[fixtures::chapter("w1", 1), fixtures::chapter("w1", 2)],
        )
        .await
        .unwrap();
    // A neighbour whose id extends this one keeps its chapters.
    works
        .put_chapters(&[fixtures::chapter("w10", 1)])
        .await
        .unwrap();
    let mut edited = fixtures::work("pub_a", "w1");
    edited.title = "edited".into();
    let mut changed = fixtures::chapter("w1", 2);
    changed.title = "changed".into();
    works
        .replace_work(&edited, &[changed.clone(), fixtures::chapter("w1", 3)])
        .await
        .unwrap();
    let chapters = works.list_chapters(&work_id).await.unwrap();
    let titles: Vec<&str> = chapters
        .iter()
        .map(|chapter| chapter.title.as_str())
        .collect();
    assert_eq!(titles, ["changed", "第3章"], "chapter 1 went away");
    assert_eq!(works.get_work_any(&work_id).await.unwrap().title, "edited");
    assert_eq!(
        works
            .get_chapter(&work_id, &changed.id)
            .await
            .unwrap()
            .title,
        "changed"
    );
    assert_eq!(
        works
            .get_chapter(&work_id, &"c1".parse().unwrap())
            .await
            .unwrap_err()
            .kind(),
        ErrorKind::NotFound
    );
    assert_eq!(
        works
            .list_chapters(&"w10".parse().unwrap())
            .await
            .unwrap()
            .len(),
        1
    );
    // Another publisher cannot edit the id into its own.
    let error = works
        .replace_work(
            &fixtures::work("pub_b", "w1"),
            &[fixtures::chapter("w1", 9)],
        )
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Conflict, "{error}");
    assert_eq!(works.list_chapters(&work_id).await.unwrap().len(), 2);
    // Chapters of another work are refused, not written.
    let error = works
        .replace_work(&edited, &[fixtures::chapter("w2", 1)])
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidInput, "{error}");
}

pub(crate) async fn site_suggestions_round_trip_per_publisher_and_status(stores: &Stores) {
    use copyhound_core::model::{ReasonKind, SiteSuggestion, SuggestionReason, SuggestionStatus};
    prepare(stores).await;
    let reason = |from: &str| SuggestionReason {
        kind: ReasonKind::Link,
        from: from.into(),
        site_id: Some("site_a".parse().unwrap()),
        detail: "友情链接".into(),
        at: at(1),
    };
    let publisher: copyhound_core::ids::PublisherId = "pub_a".parse().unwrap();
    let other: copyhound_core::ids::PublisherId = "pub_b".parse().unwrap();
    let mut stored = Vec::new();
    for n in 0..7 {
        let mut suggestion = SiteSuggestion::new(
            publisher.clone(),
            format!("http://mirror{n}.example"),
            reason("http://a.example/"),
        );
        if n % 2 == 0 {
            suggestion.status = SuggestionStatus::Dismissed;
        }
        stores.sites.put_suggestion(&suggestion).await.unwrap();
        stored.push(suggestion);
    }
    let foreign = SiteSuggestion::new(
        other.clone(),
        "http://mirror0.example".into(),
        reason("http://b.example/"),
    );
    stores.sites.put_suggestion(&foreign).await.unwrap();
    // Idempotent: the same write twice is one suggestion.
    stores.sites.put_suggestion(&stored[1]).await.unwrap();
    assert_eq!(
        stores
            .sites
            .get_suggestion(&publisher, &stored[1].id)
            .await
            .unwrap(),
        stored[1]
    );
    let error = stores
        .sites
        .get_suggestion(&publisher, &foreign.id)
        .await
        .unwrap_err();
    assert_eq!(
        error.kind(),
        ErrorKind::NotFound,
        "another publisher's suggestion"
    );
    let mut seen = Vec::new();
    let mut page = first(2);
    loop {
        let listed = stores
            .sites
            .list_suggestions(&publisher, Some(SuggestionStatus::Pending), &page)
            .await
            .unwrap();
        assert!(listed.items.len() <= 2);
        seen.extend(listed.items.into_iter().map(|found| found.origin));
        match listed.next {
            Some(after) => {
                page = copyhound_core::ports::PageRequest {
                    limit: 2,
                    after: Some(after),
                }
            }
            None => break,
        }
    }
    seen.sort();
    assert_eq!(
        seen,
        [
            "http://mirror1.example",
            "http://mirror3.example",
            "http://mirror5.example"
        ]
    );
    let all = stores
        .sites
        .list_suggestions(&publisher, None, &first(50))
        .await
        .unwrap();
    assert_eq!(all.items.len(), 7);
}
