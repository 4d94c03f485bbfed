//! CPU time by component during a bench run, read from `/proc` (Linux; the
//! figures are left out elsewhere): the worker (this process and its
//! children), PostgreSQL (`postgres` processes) and RabbitMQ (`beam.smp`).
//! Divided by the documents, they are the per-document costs the capacity
//! model of docs/SCALING.md is built from.

/// CPU seconds (user + system) per component at one moment.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CpuTimes {
    /// This process and its direct children.
    pub worker: f64,
    /// Every `postgres` process.
    pub postgres: f64,
    /// Every `beam.smp` process (the RabbitMQ node).
    pub broker: f64,
}

impl CpuTimes {
    /// Reads `/proc`; `None` where it cannot be read.
    pub fn now() -> Option<Self> {
        let me = std::process::id();
        let ticks = clock_ticks();
        let mut times = Self::default();
        let mut read_any = false;
        for entry in std::fs::read_dir("/proc").ok()?.flatten() {
            let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                continue;
            };
            let Some(parsed) = parse_stat(&stat) else {
                continue;
            };
            read_any = true;
            let secs = parsed.cpu_ticks as f64 / ticks;
            if pid == me || parsed.ppid == me {
                times.worker += secs;
            } else if parsed.comm == "postgres" {
                times.postgres += secs;
            } else if parsed.comm == "beam.smp" {
                times.broker += secs;
            }
        }
        read_any.then_some(times)
    }

    /// `self - earlier`, each component.
    pub fn since(&self, earlier: &Self) -> Self {
        Self {
            worker: self.worker - earlier.worker,
            postgres: self.postgres - earlier.postgres,
            broker: self.broker - earlier.broker,
        }
    }
}

/// The fields of `/proc/PID/stat` used here.
#[derive(Debug, PartialEq)]
struct Stat {
    comm: String,
    ppid: u32,
    /// utime + stime + cutime + cstime (reaped children, so a postgres
    /// backend that ended is still counted, in the postmaster), in ticks.
    cpu_ticks: u64,
}

/// Parses `/proc/PID/stat`: `pid (comm) state ppid ...`, utime, stime,
/// cutime and cstime being fields 14 to 17. The command name may hold spaces and parentheses,
/// so the fields after it are found from the last `)`.
fn parse_stat(stat: &str) -> Option<Stat> {
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let comm = stat.get(open + 1..close)?.to_owned();
    let rest: Vec<&str> = stat.get(close + 1..)?.split_whitespace().collect();
    // rest[0] is field 3 (state): field N is rest[N - 3].
    let ppid = rest.get(1)?.parse().ok()?;
    let utime: u64 = rest.get(11)?.parse().ok()?;
    let stime: u64 = rest.get(12)?.parse().ok()?;
    let cutime: u64 = rest.get(13)?.parse().ok()?;
    let cstime: u64 = rest.get(14)?.parse().ok()?;
    Some(Stat {
        comm,
        ppid,
        cpu_ticks: utime + stime + cutime + cstime,
    })
}

/// Clock ticks per second (`getconf CLK_TCK`); 100 on every Linux this runs on.
fn clock_ticks() -> f64 {
    std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_parse_even_with_spaces_and_parentheses_in_the_name() {
        let line =
            "4242 (we (ird) name) S 17 4242 4242 0 -1 4194560 100 0 0 0 250 31 5 4 20 0 1 0 5 0 0";
        assert_eq!(
            parse_stat(line),
            Some(Stat {
                comm: "we (ird) name".into(),
                ppid: 17,
                cpu_ticks: 290
            })
        );
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn this_process_is_counted_as_the_worker() {
        if let Some(t) = CpuTimes::now() {
            // Spin a little so the tick counter moves.
            let mut x = 0u64;
            for i in 0..50_000_000u64 {
                x = x.wrapping_add(i ^ (x >> 3));
            }
            std::hint::black_box(x);
            let later = CpuTimes::now().unwrap_or_default();
            assert!(later.since(&t).worker > 0.0, "{t:?} -> {later:?}");
        }
    }
}
