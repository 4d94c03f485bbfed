//! Circuit breakers per strategy, shared by the API and the queue consumer
//! (the Chunking System specification's circuit breaker), as a small state machine:
//!
//! | state     | call admitted?                      | how it leaves                                  |
//! |-----------|-------------------------------------|------------------------------------------------|
//! | closed    | yes                                 | [`OPEN_AFTER`] consecutive strategy failures: open |
//! | open      | no, until the back-off has passed   | the first call after the back-off: half-open   |
//! | half-open | no; one trial call is under way     | the trial's success: closed; its failure: open, back-off doubled (1 s up to 60 s); a trial with no verdict: open, the next call is a new trial |
//!
//! A call is admitted with a [`Permit`], which settles it with a
//! [`Verdict`]: only what the strategy did counts. Bad input, overload (a
//! full pool, a deadline passed before the strategy ran), a client that went
//! away, a shutdown: none of these says anything about the strategy, and a
//! permit dropped without a verdict (the request's future was dropped) ends
//! its trial the same way, so a circuit can never stay half-open for good.
//! Only the trial's success closes an open circuit: a call admitted before
//! the circuit opened that succeeds later changes nothing.
//!
//! Every change of state is reported to an observer (the
//! `chunking_circuit_breaker_state` gauge and one log line), from whichever
//! path caused it.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Consecutive strategy failures that open a circuit.
pub const OPEN_AFTER: u32 = 5;
/// The first back-off of an open circuit; each failed trial doubles it.
pub const FIRST_BACKOFF: Duration = Duration::from_secs(1);
/// The longest back-off.
pub const MAX_BACKOFF: Duration = Duration::from_secs(60);

/// A circuit's state (`chunking_circuit_breaker_state`: 0, 1, 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Calls go through.
    Closed = 0,
    /// Calls fail fast until the back-off has passed.
    Open = 1,
    /// One trial call is under way; the others fail fast.
    HalfOpen = 2,
}

impl State {
    /// The state's name in logs.
    pub fn as_str(self) -> &'static str {
        match self {
            State::Closed => "closed",
            State::Open => "open",
            State::HalfOpen => "half-open",
        }
    }
}

/// What a call says about its strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The strategy ran and its output was valid.
    Success,
    /// The strategy failed: an internal error or a panic, output that broke
    /// the validation checklist (`VALIDATION_FAILED`), or it ran past the
    /// deadline.
    Failure,
    /// Nothing about the strategy: bad input, overload before the strategy
    /// ran, a client gone, a shutdown, a version already stored.
    None,
}

/// Which kind of call a permit admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ticket {
    /// Admitted while closed.
    Normal,
    /// The half-open trial with this number.
    Trial(u64),
}

/// One strategy's circuit: the pure state machine (time is passed in).
#[derive(Debug, Clone, Copy)]
struct Circuit {
    state: State,
    failures: u32,
    backoff: Duration,
    open_until: Instant,
    /// The trial under way (half-open), by number.
    trial: u64,
}

impl Circuit {
    fn new(now: Instant) -> Self {
        Self {
            state: State::Closed,
            failures: 0,
            backoff: FIRST_BACKOFF,
            open_until: now,
            trial: 0,
        }
    }

    /// Admits a call at `now`, or says how long until one may be.
    fn admit(&mut self, now: Instant) -> Result<Ticket, Duration> {
        match self.state {
            State::Closed => Ok(Ticket::Normal),
            State::Open if now >= self.open_until => {
                self.state = State::HalfOpen;
                self.trial += 1;
                Ok(Ticket::Trial(self.trial))
            }
            State::Open => Err(self.open_until - now),
            // The trial's length is unknown: a second is an honest guess.
            State::HalfOpen => Err(FIRST_BACKOFF),
        }
    }

    /// Settles a call admitted with `ticket`.
    fn settle(&mut self, ticket: Ticket, verdict: Verdict, now: Instant) {
        match ticket {
            Ticket::Trial(n) if self.state == State::HalfOpen && n == self.trial => match verdict {
                Verdict::Success => *self = Self::new(now),
                Verdict::Failure => {
                    self.backoff = (self.backoff * 2).min(MAX_BACKOFF);
                    self.open(now);
                }
                // Given back: the next call is a new trial.
                Verdict::None => {
                    self.state = State::Open;
                    self.open_until = now;
                }
            },
            // A stale trial, or a call admitted before the circuit opened:
            // only the current trial decides.
            Ticket::Trial(_) => {}
            Ticket::Normal if self.state != State::Closed => {}
            Ticket::Normal => match verdict {
                Verdict::Success => self.failures = 0,
                Verdict::Failure => {
                    self.failures += 1;
                    if self.failures >= OPEN_AFTER {
                        self.open(now);
                    }
                }
                Verdict::None => {}
            },
        }
    }

    fn open(&mut self, now: Instant) {
        self.state = State::Open;
        self.open_until = now + self.backoff;
    }
}

/// Told every change of a circuit's state: the strategy and its new state.
pub type Observer = Box<dyn Fn(&str, State) + Send + Sync>;

/// Circuit breakers by strategy name.
pub struct Breakers {
    circuits: Mutex<HashMap<String, Circuit>>,
    observer: Option<Observer>,
}

impl fmt::Debug for Breakers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Breakers")
            .field("circuits", &self.states())
            .finish_non_exhaustive()
    }
}

impl Default for Breakers {
    fn default() -> Self {
        Self::new(None)
    }
}

/// Why a call was refused: its circuit is open (or a trial is under way).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refused {
    /// Whole seconds until a call may be admitted (at least 1).
    pub retry_after_s: u64,
}

impl Breakers {
    /// Breakers reporting each change of state to `observer`.
    pub fn new(observer: Option<Observer>) -> Self {
        Self {
            circuits: Mutex::new(HashMap::new()),
            observer,
        }
    }

    /// Asks to call `strategy` now: a permit that must be settled (or is
    /// given back when dropped), or a refusal.
    pub fn admit(self: &Arc<Self>, strategy: &str) -> Result<Permit, Refused> {
        self.admit_at(strategy, Instant::now())
    }

    fn admit_at(self: &Arc<Self>, strategy: &str, now: Instant) -> Result<Permit, Refused> {
        let (admitted, changed) = {
            // A poisoned lock means a panic while holding it (none of the
            // code below panics); the map is still consistent, so go on.
            let mut all = self.circuits.lock().unwrap_or_else(|p| p.into_inner());
            let c = all
                .entry(strategy.to_owned())
                .or_insert_with(|| Circuit::new(now));
            let before = c.state;
            let admitted = c.admit(now);
            (admitted, (c.state != before).then_some(c.state))
        };
        self.notify(strategy, changed);
        match admitted {
            Ok(ticket) => Ok(Permit {
                breakers: Arc::clone(self),
                strategy: strategy.to_owned(),
                ticket,
                settled: false,
            }),
            Err(wait) => Err(Refused {
                retry_after_s: wait.as_nanos().div_ceil(1_000_000_000).max(1) as u64,
            }),
        }
    }

    fn settle(&self, strategy: &str, ticket: Ticket, verdict: Verdict, now: Instant) -> State {
        let (state, changed) = {
            let mut all = self.circuits.lock().unwrap_or_else(|p| p.into_inner());
            let c = all
                .entry(strategy.to_owned())
                .or_insert_with(|| Circuit::new(now));
            let before = c.state;
            c.settle(ticket, verdict, now);
            (c.state, (c.state != before).then_some(c.state))
        };
        self.notify(strategy, changed);
        state
    }

    fn notify(&self, strategy: &str, changed: Option<State>) {
        if let (Some(observe), Some(state)) = (&self.observer, changed) {
            observe(strategy, state);
        }
    }

    /// `strategy`'s state (closed when never called).
    pub fn state(&self, strategy: &str) -> State {
        self.circuits
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(strategy)
            .map_or(State::Closed, |c| c.state)
    }

    /// Every known circuit's state, by strategy name.
    pub fn states(&self) -> Vec<(String, State)> {
        let mut states: Vec<(String, State)> = self
            .circuits
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .map(|(k, c)| (k.clone(), c.state))
            .collect();
        states.sort_by(|a, b| a.0.cmp(&b.0));
        states
    }
}

/// An admitted call of a strategy. Settle it with [`Permit::settle`]; a
/// permit dropped unsettled (a request abandoned by its client, a task
/// cancelled) ends as [`Verdict::None`].
#[derive(Debug)]
pub struct Permit {
    breakers: Arc<Breakers>,
    strategy: String,
    ticket: Ticket,
    settled: bool,
}

impl Permit {
    /// Whether this call is the half-open trial.
    pub fn is_trial(&self) -> bool {
        matches!(self.ticket, Ticket::Trial(_))
    }

    /// Ends the call with `verdict`; returns the circuit's state after it.
    pub fn settle(mut self, verdict: Verdict) -> State {
        self.settled = true;
        self.breakers
            .settle(&self.strategy, self.ticket, verdict, Instant::now())
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        if !self.settled {
            self.breakers
                .settle(&self.strategy, self.ticket, Verdict::None, Instant::now());
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // reason: tests fail loudly on purpose

    use super::*;

    const S: &str = "structural";

    /// Steps of a table test: what happens, and the state after it.
    #[derive(Debug, Clone, Copy)]
    enum Step {
        /// A call is admitted (held as the newest permit).
        Admit,
        /// A call is refused.
        Refuse,
        /// The oldest held permit is settled.
        Settle(Verdict),
        /// The oldest held permit is dropped.
        Drop,
        /// Time passes.
        Wait(Duration),
    }

    fn run(steps: &[(Step, State)]) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&seen);
        let b = Arc::new(Breakers::new(Some(Box::new(move |s: &str, st| {
            log.lock().unwrap().push((s.to_owned(), st));
        }))));
        let mut now = Instant::now();
        let mut held: std::collections::VecDeque<Permit> = Default::default();
        for (i, (step, expected)) in steps.iter().enumerate() {
            match *step {
                Step::Admit => held.push_back(
                    b.admit_at(S, now)
                        .unwrap_or_else(|r| panic!("step {i}: refused {r:?}")),
                ),
                Step::Refuse => assert!(b.admit_at(S, now).is_err(), "step {i}: admitted"),
                Step::Settle(v) => {
                    let mut p = held.pop_front().unwrap();
                    p.settled = true;
                    b.settle(S, p.ticket, v, now);
                }
                // The permit's own Drop (on the real clock, which is never
                // later than the test's).
                Step::Drop => drop(held.pop_front().unwrap()),
                Step::Wait(d) => now += d,
            }
            assert_eq!(b.state(S), *expected, "step {i}: {step:?}");
        }
        // Every state the circuit passed through was reported, in order.
        let mut expected_changes = Vec::new();
        let mut last = State::Closed;
        for (_, st) in steps {
            if *st != last {
                expected_changes.push((S.to_owned(), *st));
                last = *st;
            }
        }
        assert_eq!(*seen.lock().unwrap(), expected_changes);
    }

    use State::{Closed, HalfOpen, Open};
    use Step::{Admit, Drop as Gone, Refuse, Settle, Wait};
    use Verdict::{Failure, None as NoVerdict, Success};

    fn fail_n(n: u32) -> Vec<(Step, State)> {
        let mut steps = Vec::new();
        for i in 1..=n {
            steps.push((Admit, Closed));
            steps.push((Settle(Failure), if i >= OPEN_AFTER { Open } else { Closed }));
        }
        steps
    }

    #[test]
    fn five_consecutive_failures_open_the_circuit_and_a_success_in_between_resets_the_count() {
        let mut steps = fail_n(4);
        steps.extend([(Admit, Closed), (Settle(Success), Closed)]);
        steps.extend(fail_n(4));
        steps.extend([(Admit, Closed), (Settle(Failure), Open), (Refuse, Open)]);
        run(&steps);
    }

    #[test]
    fn bad_input_and_overload_neither_count_nor_reset() {
        let mut steps = fail_n(4);
        steps.extend([
            (Admit, Closed),
            (Settle(NoVerdict), Closed),
            (Admit, Closed),
            (Gone, Closed),
        ]);
        steps.extend([(Admit, Closed), (Settle(Failure), Open)]);
        run(&steps);
    }

    #[test]
    fn after_the_backoff_one_trial_runs_and_its_success_closes() {
        let mut steps = fail_n(5);
        steps.extend([
            (Wait(Duration::from_millis(999)), Open),
            (Refuse, Open),
            (Wait(Duration::from_millis(1)), Open),
            (Admit, HalfOpen),
            (Refuse, HalfOpen),
            (Settle(Success), Closed),
            (Admit, Closed),
            (Settle(Success), Closed),
        ]);
        run(&steps);
    }

    #[test]
    fn a_failed_trial_opens_again_for_twice_as_long() {
        let mut steps = fail_n(5);
        steps.extend([
            (Wait(FIRST_BACKOFF), Open),
            (Admit, HalfOpen),
            (Settle(Failure), Open),
            (Wait(FIRST_BACKOFF), Open),
            (Refuse, Open),
            (Wait(FIRST_BACKOFF), Open),
            (Admit, HalfOpen),
            (Settle(Success), Closed),
        ]);
        run(&steps);
    }

    #[test]
    fn a_trial_dropped_or_without_verdict_is_given_back_at_once() {
        let mut steps = fail_n(5);
        steps.extend([
            (Wait(FIRST_BACKOFF), Open),
            (Admit, HalfOpen),
            (Gone, Open),
            (Admit, HalfOpen),
            (Settle(NoVerdict), Open),
            (Admit, HalfOpen),
            (Settle(Success), Closed),
        ]);
        run(&steps);
    }

    #[test]
    fn only_the_trial_closes_an_open_circuit() {
        // Six calls admitted while closed; five fail (open), the sixth
        // succeeds late: still open. A trial's failure is not undone by
        // another late success either.
        let mut steps: Vec<(Step, State)> = (0..6).map(|_| (Admit, Closed)).collect();
        steps.extend((0..4).map(|_| (Settle(Failure), Closed)));
        steps.extend([(Settle(Failure), Open), (Settle(Success), Open)]);
        steps.extend([
            (Wait(FIRST_BACKOFF), Open),
            (Admit, HalfOpen),
            (Settle(Failure), Open),
        ]);
        run(&steps);
    }

    #[test]
    fn the_backoff_stops_doubling_at_a_minute() {
        let b = Arc::new(Breakers::default());
        let mut now = Instant::now();
        for _ in 0..OPEN_AFTER {
            b.admit_at(S, now).unwrap().settle(Verdict::Failure);
        }
        for _ in 0..10 {
            now += MAX_BACKOFF;
            let p = b.admit_at(S, now).unwrap();
            assert!(p.is_trial());
            let mut p = p;
            p.settled = true;
            b.settle(S, p.ticket, Verdict::Failure, now);
        }
        let refused = b.admit_at(S, now).unwrap_err();
        assert_eq!(refused.retry_after_s, MAX_BACKOFF.as_secs());
    }

    #[test]
    fn circuits_are_per_strategy() {
        let b = Arc::new(Breakers::default());
        for _ in 0..OPEN_AFTER {
            b.admit(S).unwrap().settle(Verdict::Failure);
        }
        assert!(b.admit(S).is_err());
        assert!(b.admit("recursive").is_ok());
        assert_eq!(
            b.states(),
            [("recursive".to_owned(), Closed), (S.to_owned(), Open)]
        );
    }

    #[test]
    fn a_dropped_permit_releases_a_real_trial() {
        let b = Arc::new(Breakers::default());
        for _ in 0..OPEN_AFTER {
            b.admit(S).unwrap().settle(Verdict::Failure);
        }
        // After the last failure's back-off (settled on the real clock).
        let trial = b.admit_at(S, Instant::now() + FIRST_BACKOFF).unwrap();
        assert!(trial.is_trial());
        assert_eq!(b.state(S), HalfOpen);
        drop(trial);
        assert_eq!(b.state(S), Open);
        let next = b.admit(S).unwrap();
        assert!(next.is_trial(), "the next call is a new trial");
        assert_eq!(next.settle(Verdict::Success), Closed);
    }
}
