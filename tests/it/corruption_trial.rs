//! Corruption trial: random page damage to a small real database, then
//! `recourse run` on it. Every file that fails `PRAGMA integrity_check` must
//! be refused (exit 1, `error: opening …`) with its folder byte-for-byte as
//! it was; no run may hang.
//!
//! The normal suite runs 20 trials (seeded, so a failure reproduces). The
//! long trial: `RECOURSE_CORRUPTION_TRIALS=200 cargo test -p recourse --test
//! corruption_trial -- --nocapture` (`RECOURSE_CORRUPTION_SEED` picks
//! another seed). Figures are in `docs/reliability.md`.

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::{run_cmd, seed_profile, uniform_policy};
use recourse::agent::{AgentSpec, SimStep};
use recourse::policy::Exhausted;
use recourse::profile::CandidateInput;

const PAGE: usize = 4096;
/// A run on a small database takes well under a second; this long means hung.
const HANG: Duration = Duration::from_secs(30);

/// xorshift64*: small, seeded, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A database with a simulated profile and a few finished routes (attempts,
/// results, indexes): every kind of page Recourse writes.
fn pristine(dir: &Path) -> Vec<u8> {
    let db = dir.join("pristine.db");
    let steps = vec![
        SimStep::Overloaded { after_ms: 1 },
        SimStep::Succeed { after_ms: 1 },
    ];
    let candidate = CandidateInput::new(
        "sim",
        AgentSpec::simulated(steps),
        uniform_policy(None, Some((3, 1)), Exhausted::Stop),
    );
    seed_profile(&db, "Build", &[candidate]);
    // Trial runs succeed at once, so a file that is still sound costs
    // little.
    let quick = CandidateInput::new(
        "quick",
        AgentSpec::simulated(vec![SimStep::Succeed { after_ms: 1 }]),
        uniform_policy(None, None, Exhausted::Stop),
    );
    seed_profile(&db, "Trial", &[quick]);
    for _ in 0..4 {
        let out = run(&db, "Build");
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    std::fs::read(&db).unwrap()
}

fn run(db: &Path, profile: &str) -> Output {
    let mut child = run_cmd(db, profile).stdout(Stdio::piped()).spawn().unwrap();
    let started = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if started.elapsed() > HANG {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "recourse run on {} hung for {HANG:?}: {}",
                db.display(),
                String::from_utf8_lossy(&out.stdout)
            );
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// How one trial damages the file.
#[derive(Debug, Clone, Copy)]
enum Damage {
    /// The whole page random bytes.
    Garbage,
    /// The whole page zeros.
    Zeros,
    /// 1–16 random bytes somewhere in the page.
    Bytes,
    /// One bit flipped.
    Bit,
}

fn corrupt(bytes: &mut [u8], rng: &mut Rng) -> (usize, Damage) {
    let pages = bytes.len() / PAGE;
    let page = rng.below(pages);
    let start = page * PAGE;
    let damage = [Damage::Garbage, Damage::Zeros, Damage::Bytes, Damage::Bit][rng.below(4)];
    match damage {
        Damage::Garbage => {
            for b in &mut bytes[start..start + PAGE] {
                *b = rng.next() as u8;
            }
        }
        Damage::Zeros => bytes[start..start + PAGE].fill(0),
        Damage::Bytes => {
            let len = 1 + rng.below(16);
            let at = start + rng.below(PAGE - len);
            for b in &mut bytes[at..at + len] {
                *b = rng.next() as u8;
            }
        }
        Damage::Bit => bytes[start + rng.below(PAGE)] ^= 1 << rng.below(8),
    }
    (page + 1, damage)
}

/// `None` when the file passes; else the first problem (or the error).
fn integrity(path: &Path, pragma: &str) -> Option<String> {
    let conn = match rusqlite::Connection::open_with_flags(
        path,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    ) {
        Ok(c) => c,
        Err(e) => return Some(e.to_string()),
    };
    let rows: Result<Vec<String>, _> = conn
        .prepare(pragma)
        .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect());
    match rows {
        Ok(rows) if rows == ["ok"] => None,
        Ok(rows) => Some(rows.join("; ")),
        Err(e) => Some(e.to_string()),
    }
}

fn files(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut all: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            let b = std::fs::read(&p).unwrap();
            (p, b)
        })
        .collect();
    all.sort();
    all
}

#[test]
fn every_file_failing_integrity_check_is_refused_untouched_by_run() {
    let trials = env_number("RECOURSE_CORRUPTION_TRIALS", 20);
    let seed = env_number("RECOURSE_CORRUPTION_SEED", 0x5EED_0013);
    let work = tempfile::tempdir().unwrap();
    let good = pristine(work.path());
    assert_eq!(good.len() % PAGE, 0);
    let mut rng = Rng(seed | 1);
    let (mut damaged, mut refused, mut passed, mut quick_missed) = (0, 0, 0, 0);
    let started = Instant::now();
    for trial in 0..trials {
        let mut bytes = good.clone();
        let (page, damage) = corrupt(&mut bytes, &mut rng);
        let what = format!("trial {trial} (seed {seed:#x}): page {page} {damage:?}");
        // Judge a copy, so the check cannot change the file under trial.
        let judge_dir = work.path().join(format!("judge{trial}"));
        std::fs::create_dir(&judge_dir).unwrap();
        let judged = judge_dir.join("r.db");
        std::fs::write(&judged, &bytes).unwrap();
        let problem = integrity(&judged, "PRAGMA integrity_check");
        if problem.is_some() && integrity(&judged, "PRAGMA quick_check").is_none() {
            quick_missed += 1;
        }
        let dir = work.path().join(format!("trial{trial}"));
        std::fs::create_dir(&dir).unwrap();
        let db = dir.join("r.db");
        std::fs::write(&db, &bytes).unwrap();
        let before = files(&dir);
        let out = run(&db, "Trial");
        let Some(problem) = problem else {
            passed += 1;
            continue;
        };
        damaged += 1;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{what}: fails integrity_check ({problem}) yet `run` went on: {stderr}"
        );
        assert!(
            stderr.starts_with(&format!("error: opening {}: ", db.display())),
            "{what}: refused at open, naming the file: {stderr}"
        );
        assert!(out.stdout.is_empty(), "{what}: no route started");
        assert!(
            files(&dir) == before,
            "{what}: the folder is byte-for-byte as it was"
        );
        refused += 1;
    }
    println!(
        "{trials} trials (seed {seed:#x}) in {:.1} s: {damaged} failed integrity_check, \
         all {refused} refused untouched by `run`; {quick_missed} of them passed quick_check; \
         {passed} still passed integrity_check (damage in free space or unused bytes)",
        started.elapsed().as_secs_f64()
    );
    assert!(damaged > 0, "the trial damaged at least one file");
}
