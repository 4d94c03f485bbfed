//! The guards: rate limits with an honest `Retry-After`, and the circuit
//! breaker of a strategy that keeps failing.

use std::time::Duration;

use reqwest::blocking::Response;
use serde_json::json;

use crate::{good, problem, slow_markdown, Server};

#[test]
fn quick_requests_over_the_limit_get_an_honest_retry_after() {
    let s = Server::start(&[]);
    let t = good("acme-prod", "bob");
    let body = json!({"document_id": "d", "markdown": "# A\n\nB.\n"}).to_string();
    let retry_after = |r: Response| -> u64 {
        let wait = r.headers()["retry-after"]
            .to_str()
            .unwrap()
            .parse()
            .unwrap();
        problem(r, 429);
        wait
    };
    let limited = (0..101)
        .filter(|_| s.post(Some(&t), body.clone()).status().as_u16() == 429)
        .count();
    assert!(limited > 0, "101 quick requests of one tenant are limited");
    // The wait that counts is the latest refusal's: on a slow machine a cell
    // comes back during the loop and a later request spends it, so an
    // earlier refusal's Retry-After may be stale.
    let wait = (0..100)
        .find_map(|_| {
            let r = s.post(Some(&t), body.clone());
            (r.status().as_u16() == 429).then(|| retry_after(r))
        })
        .expect("the allowance is spent again");
    // Another tenant is not affected.
    assert_eq!(
        s.post(Some(&good("beta-corp", "carol")), body.clone())
            .status()
            .as_u16(),
        200
    );
    std::thread::sleep(Duration::from_secs(wait));
    assert_eq!(
        s.post(Some(&t), body).status().as_u16(),
        200,
        "a retry after Retry-After passes"
    );
}

#[test]
fn a_failing_strategy_opens_its_circuit_then_recovers() {
    // Operations past a 150 ms deadline count as failures of the strategy:
    // the slow document takes about 0.5 s in a test build (with 300 ms, it
    // once finished in time on a fast moment of the box), the quick one
    // must pass even on a slow, loaded CI box (40 ms failed the trial there
    // once).
    // Enough slots that no request waits for one (a wait past the deadline
    // is overload, which does not count against the strategy).
    let s = Server::start(&[
        ("API__DEADLINE_MS", "150"),
        ("API__MAX_CONCURRENT", "16"),
        ("API__RATE_LIMITS__BURST", "1000"),
    ]);
    let t = good("acme-prod", "dave");
    let slow = json!({"document_id": "slow", "markdown": slow_markdown()}).to_string();
    for _ in 0..5 {
        let p = problem(s.post(Some(&t), slow.clone()), 503);
        assert!(p["detail"].as_str().unwrap().contains("deadline"), "{p}");
    }
    // Open: refused before any chunking, even a document that would pass.
    let quick = json!({"document_id": "quick", "markdown": "# Q\n\nShort.\n"}).to_string();
    let p = problem(s.post(Some(&t), quick.clone()), 503);
    assert!(
        p["detail"].as_str().unwrap().contains("circuit open"),
        "{p}"
    );
    std::thread::sleep(Duration::from_millis(1100));
    assert_eq!(
        s.post(Some(&t), quick.clone()).status().as_u16(),
        200,
        "the trial closes the circuit"
    );
    assert_eq!(s.post(Some(&t), quick).status().as_u16(), 200);
}

#[test]
fn a_trial_whose_client_goes_away_gives_the_circuit_back() {
    use std::io::Write;
    let s = Server::start(&[
        ("API__DEADLINE_MS", "150"),
        ("API__MAX_CONCURRENT", "8"),
        ("API__RATE_LIMITS__BURST", "1000"),
    ]);
    let t = good("acme-prod", "pia");
    let slow = json!({"document_id": "slow", "markdown": slow_markdown()}).to_string();
    let quick = json!({"document_id": "quick", "markdown": "# Q\n\nShort.\n"}).to_string();
    for _ in 0..5 {
        problem(s.post(Some(&t), slow.clone()), 503);
    }
    let p = problem(s.post(Some(&t), quick.clone()), 503);
    assert!(
        p["detail"].as_str().unwrap().contains("circuit open"),
        "{p}"
    );
    // Past the back-off, and the abandoned work of the five is done.
    std::thread::sleep(Duration::from_millis(3000));
    // The trial: the slow document, from a client that hangs up 50 ms in,
    // well before its 150 ms deadline.
    let mut stream = std::net::TcpStream::connect(s.base.trim_start_matches("http://")).unwrap();
    write!(
        stream,
        "POST /v1/chunk HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {t}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{slow}",
        slow.len()
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(50));
    drop(stream);
    std::thread::sleep(Duration::from_millis(20));
    // Given back at once (not held until a verdict that will never come):
    // this call is the next trial, and its success closes the circuit.
    assert_eq!(s.post(Some(&t), quick.clone()).status().as_u16(), 200);
    assert_eq!(s.post(Some(&t), quick).status().as_u16(), 200);
}

#[test]
fn waiting_for_a_busy_pool_is_overload_not_a_failure_of_the_strategy() {
    // One blocking slot: while the slow document's work holds it (its
    // deadline passed while the strategy ran: one failure), quick requests
    // wait for the slot past their deadline: 503 "busy", which says nothing
    // about the strategy, so five of them do not open the circuit. The slow
    // document goes through four granularities (hierarchy-v1): its work
    // holds the slot several deadlines long even on an idle machine (with
    // spec-v1 alone it could end within one and free the slot).
    let s = Server::start(&[
        ("API__DEADLINE_MS", "100"),
        ("API__MAX_CONCURRENT", "1"),
        ("API__RATE_LIMITS__BURST", "1000"),
    ]);
    let t = good("acme-prod", "quinn");
    let slow =
        json!({"document_id": "slow", "profile": "hierarchy-v1", "markdown": slow_markdown()})
            .to_string();
    let quick = json!({"document_id": "quick", "markdown": "# Q\n\nShort.\n"}).to_string();
    let p = problem(s.post(Some(&t), slow), 503);
    assert!(
        p["detail"].as_str().unwrap().contains("did not finish"),
        "{p}"
    );
    let mut busy = 0;
    for _ in 0..5 {
        let r = s.post(Some(&t), quick.clone());
        if r.status().as_u16() == 503 {
            // Busy: no slot came free in time, or one came free so late
            // that most of the deadline went on the wait (then the work
            // may still miss it; neither counts against the strategy).
            let p = problem(r, 503);
            assert!(p["detail"].as_str().unwrap().contains("busy"), "{p}");
            busy += 1;
        }
    }
    assert!(busy >= 1, "the slow work held the one slot");
    std::thread::sleep(Duration::from_millis(3000));
    assert_eq!(
        s.post(Some(&t), quick).status().as_u16(),
        200,
        "the circuit stayed closed"
    );
}
