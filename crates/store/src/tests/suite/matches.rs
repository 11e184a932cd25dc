//! Conformance checks: matches and keyset pages.

use copyhound_core::ErrorKind;
use copyhound_core::model::MatchStatus;
use copyhound_core::ports::{MatchFilter, PageRequest, PageUpsert};

use super::{filter, first, prepare};
use crate::Stores;
use crate::tests::fixtures::{self, at};

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

pub(crate) async fn matches_never_cross_owners(stores: &Stores) {
    prepare(stores).await;
    let url = "http://127.0.0.1:8001/a.html";
    let of_a = fixtures::found_match("pub_a", url, "wShared", "c1", 10);
    let of_b = fixtures::found_match("pub_b", url, "wShared", "c1", 20);
    assert_ne!(of_a.id, of_b.id, "the owner is part of a match id");
    stores.matches.upsert_match(&of_a).await.unwrap();
    let review = fixtures::review(MatchStatus::Confirmed);
    stores
        .matches
        .review_match(&of_a.publisher_id, &of_a.id, &review)
        .await
        .unwrap();
    stores.matches.upsert_match(&of_b).await.unwrap();
    let stored_b = stores
        .matches
        .get_match(&of_b.publisher_id, &of_b.id)
        .await
        .unwrap();
    assert_eq!(stored_b.status, MatchStatus::New);
    assert!(stored_b.reviews.is_empty());
    let stored_a = stores
        .matches
        .get_match(&of_a.publisher_id, &of_a.id)
        .await
        .unwrap();
    assert_eq!(stored_a.reviews, vec![review]);

    // Even a forged match under A's id never takes over A's document.
    let mut forged = of_b.clone();
    forged.id = of_a.id.clone();
    let error = stores.matches.upsert_match(&forged).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Conflict, "{error}");
    let kept = stores
        .matches
        .get_match(&of_a.publisher_id, &of_a.id)
        .await
        .unwrap();
    assert_eq!(
        (kept.publisher_id, kept.status),
        (of_a.publisher_id.clone(), MatchStatus::Confirmed)
    );
    let error = stores
        .matches
        .get_match(&of_b.publisher_id, &of_a.id)
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::NotFound);
}

pub(crate) async fn deleting_a_works_matches_spares_the_rest(stores: &Stores) {
    prepare(stores).await;
    let mut kept = Vec::new();
    let mut doomed = Vec::new();
    for number in 0..5 {
        let url = format!("http://127.0.0.1:8001/{number}.html");
        doomed.push(fixtures::found_match("pub_a", &url, "w1", "c1", number));
        kept.push(fixtures::found_match("pub_a", &url, "w2", "c1", number));
        kept.push(fixtures::found_match("pub_b", &url, "w1", "c1", number));
    }
    for found in doomed.iter().chain(&kept) {
        stores.matches.upsert_match(found).await.unwrap();
    }
    let work_id = "w1".parse().unwrap();
    let deleted = stores
        .matches
        .delete_matches_of_work(&"pub_a".parse().unwrap(), &work_id)
        .await
        .unwrap();
    assert_eq!(deleted, 5);
    for found in &doomed {
        let error = stores
            .matches
            .get_match(&found.publisher_id, &found.id)
            .await
            .unwrap_err();
        assert_eq!(error.kind(), ErrorKind::NotFound);
    }
    for found in &kept {
        stores
            .matches
            .get_match(&found.publisher_id, &found.id)
            .await
            .unwrap();
    }
    let page_matches = stores
        .matches
        .matches_of_page(&doomed[0].page_id)
        .await
        .unwrap();
    assert_eq!(
        page_matches.len(),
        2,
        "the page index forgets deleted matches"
    );
    let listed = stores
        .matches
        .list_matches(&filter("pub_a"), &first(100))
        .await
        .unwrap();
    assert_eq!(listed.items.len(), 5);
    assert_eq!(
        stores
            .matches
            .delete_matches_of_work(&"pub_a".parse().unwrap(), &work_id)
            .await
            .unwrap(),
        0,
        "deleting again is a no-op"
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

/// Listing by score: highest first (ties by id, descending) over keyset
/// pages, filters applied; a refreshed score moves its match, a deleted work's
/// matches leave, and another tenant's never show.
pub(crate) async fn matches_list_by_score_across_pages(stores: &Stores) {
    use copyhound_core::ports::MatchOrder;
    prepare(stores).await;
    let by_score = || MatchFilter {
        order: MatchOrder::Score,
        ..filter("pub_a")
    };
    let mut ids = Vec::new();
    for number in 0..23_u32 {
        let work = if number < 20 { "w1" } else { "w2" };
        let mut found = fixtures::found_match(
            "pub_a",
            &format!("http://h/{number}"),
            work,
            "c1",
            i64::from(number),
        );
        // Ties on purpose: five distinct scores.
        found.score = 0.5 + (number % 5) as f32 * 0.1;
        stores.matches.upsert_match(&found).await.unwrap();
        ids.push(found.id.clone());
    }
    let mut other = fixtures::found_match("pub_b", "http://h/other", "w1", "c1", 1);
    other.score = 1.0;
    stores.matches.upsert_match(&other).await.unwrap();

    let ranked = |listed: &[copyhound_core::model::Match]| {
        listed
            .iter()
            .map(|found| (found.score.to_bits(), found.id.to_string()))
            .collect::<Vec<_>>()
    };
    let (listed, pages) = collect_all!(4, |request| stores
        .matches
        .list_matches(&by_score(), &request));
    assert_eq!((listed.len(), pages), (23, 6));
    let keys = ranked(&listed);
    let mut sorted = keys.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(keys, sorted, "highest score first, then id descending");

    // A comparison that scores a match higher moves it to the front.
    let mut raised = fixtures::found_match("pub_a", "http://h/7", "w1", "c1", 40);
    raised.score = 0.99;
    stores.matches.upsert_match(&raised).await.unwrap();
    let (listed, _) = collect_all!(50, |request| stores
        .matches
        .list_matches(&by_score(), &request));
    assert_eq!(listed.len(), 23, "moved, not copied");
    assert_eq!(listed[0].id, raised.id);

    // Filters still apply, in score order.
    let (high, _) = collect_all!(3, |request| stores.matches.list_matches(
        &MatchFilter {
            min_score: Some(0.85),
            ..by_score()
        },
        &request
    ));
    assert!(high.iter().all(|found| found.score >= 0.85));
    assert_eq!(high.len(), 5, "four at 0.9 and the raised one");
    let deleted = stores
        .matches
        .delete_matches_of_work(&"pub_a".parse().unwrap(), &"w2".parse().unwrap())
        .await
        .unwrap();
    assert_eq!(deleted, 3);
    let (listed, _) = collect_all!(50, |request| stores
        .matches
        .list_matches(&by_score(), &request));
    assert_eq!(listed.len(), 20);
    assert!(
        listed
            .iter()
            .all(|found| found.publisher_id.as_str() == "pub_a")
    );
    let bad = PageRequest {
        after: Some(crate::codec::encode_cursor("not-a-score:m_x")),
        limit: 5,
    };
    assert_eq!(
        stores
            .matches
            .list_matches(&by_score(), &bad)
            .await
            .unwrap_err()
            .kind(),
        ErrorKind::InvalidInput
    );
}
